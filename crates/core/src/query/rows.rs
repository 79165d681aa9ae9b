//! Reading the rows a query runs over: a note as an object (`file` and its fields), a task as an object, loaded in
//! bulk for the notes SQL kept, with only the parts the query names.

use std::collections::{BTreeMap, HashMap, HashSet};

use jiff::civil::DateTime;
use rusqlite::params;

use super::literal;
use super::parse::{Command, Expr, Kind, Query};
use super::value::{Link, Value};
use crate::error::Result;
use crate::read::Reader;

/// A note SQL kept.
#[derive(Debug, Clone)]
pub(crate) struct NoteRow {
    pub(crate) id: String,
    pub(crate) title: String,
    pub(crate) notebook_id: String,
    /// Its content is withheld from this reader: only its title, place and times are shown.
    pub(crate) hidden: bool,
    pub(crate) created: i64,
    pub(crate) updated: i64,
    pub(crate) size: i64,
}

/// Which parts of a note the query names.
#[derive(Debug, Default, Clone)]
pub(crate) struct Needs {
    pub(crate) fields: bool,
    pub(crate) tags: bool,
    pub(crate) outlinks: bool,
    pub(crate) inlinks: bool,
    pub(crate) tasks: bool,
    /// For a task query: the task fields it names, when nothing can see a task whole (no `GROUP BY`, no `rows`);
    /// `None`: every field.
    pub(crate) task_keys: Option<HashSet<String>>,
    /// For a task query: whether its rows need their note (`file`, the note's fields, a task's `path` or `link`).
    pub(crate) page: bool,
    /// Whether `file.size` can be read: the only part of a row that needs the note's body (its length).
    pub(crate) size: bool,
}

/// The fields a task row has of its own (a name not among them is looked up in its note).
pub(crate) const TASK_FIELDS: &[&str] = &[
    "text",
    "status",
    "checked",
    "completed",
    "fullyCompleted",
    "due",
    "scheduled",
    "start",
    "completion",
    "created",
    "cancelled",
    "priority",
    "recurrence",
    "line",
    "section",
    "path",
    "link",
    "tags",
    "file",
    "task",
    "note_id",
];

impl Needs {
    pub(crate) fn of(q: &Query) -> Needs {
        let mut names = HashSet::new();
        let mut exprs: Vec<&Expr> = Vec::new();
        match &q.kind {
            Kind::Table { columns, .. } => exprs.extend(columns.iter().map(|c| &c.expr)),
            Kind::List { expr, .. } => exprs.extend(expr.iter()),
            Kind::Calendar { expr } => exprs.push(expr),
            Kind::Task => {}
        }
        for c in &q.commands {
            match c {
                Command::Where(e) | Command::GroupBy(e, _) | Command::Flatten(e, _) => exprs.push(e),
                Command::Sort(keys) => exprs.extend(keys.iter().map(|(e, _)| e)),
                Command::Limit(_) => {}
            }
        }
        let mut fields = false;
        let whole_file = exprs.iter().any(|e| names_file_whole(e));
        for e in exprs {
            walk(e, &mut |name, is_field| {
                if is_field && name != "file" && name != "this" {
                    fields = true;
                }
                names.insert(name.to_owned());
            });
        }
        let is_task = matches!(q.kind, Kind::Task);
        let own: HashSet<&str> = TASK_FIELDS.iter().copied().collect();
        if is_task {
            fields = names.iter().any(|n| !own.contains(n.as_str()) && n != "this");
        }
        let has = |n: &str| names.contains(n);
        let grouped = q.commands.iter().any(|c| matches!(c, Command::GroupBy(..)));
        let task_keys = (is_task && !grouped && !has("rows"))
            .then(|| names.iter().filter(|n| own.contains(n.as_str())).cloned().collect());
        // `this` can be read whole: all of it.
        let this = has("this");
        Needs {
            fields: fields || this || has("frontmatter") || has("day") || has("aliases"),
            tags: this || has("tags") || has("etags"),
            outlinks: has("outlinks"),
            inlinks: has("inlinks"),
            tasks: has("tasks"),
            page: !is_task
                || fields
                || grouped
                || has("rows")
                || has("file")
                || has("path")
                || has("link")
                || has("this"),
            task_keys,
            // Names match in any case (`file.Size`, `ROWS`), as the evaluator reads them.
            size: whole_file
                || names
                    .iter()
                    .any(|n| ["size", "rows", "this"].iter().any(|w| n.eq_ignore_ascii_case(w))),
        }
    }
}

/// Whether `e` reads a `file` whole (`file`, `row.file`) rather than one of its members (`file.name`).
fn names_file_whole(e: &Expr) -> bool {
    /// `a` is read for one of its members: only what is inside it can read a file whole.
    fn inside(a: &Expr) -> bool {
        match a {
            Expr::Field(_) => false,
            Expr::Dot(b, _) => inside(b),
            other => names_file_whole(other),
        }
    }
    match e {
        Expr::Lit(_) => false,
        Expr::Field(n) => n.eq_ignore_ascii_case("file"),
        Expr::Dot(a, n) => n.eq_ignore_ascii_case("file") || inside(a),
        Expr::Not(a) | Expr::Neg(a) => names_file_whole(a),
        Expr::Index(a, b) | Expr::Bin(_, a, b) => names_file_whole(a) || names_file_whole(b),
        Expr::Call(_, args) | Expr::List(args) => args.iter().any(names_file_whole),
        Expr::Object(fields) => fields.iter().any(|(_, v)| names_file_whole(v)),
        Expr::Lambda(l) => names_file_whole(&l.body),
    }
}

/// Calls `f(name, is_field)` for every field name and member name in `e`.
fn walk(e: &Expr, f: &mut dyn FnMut(&str, bool)) {
    match e {
        Expr::Lit(_) => {}
        Expr::Field(n) => f(n, true),
        Expr::Dot(a, n) => {
            walk(a, f);
            f(n, false);
        }
        Expr::Not(a) | Expr::Neg(a) => walk(a, f),
        Expr::Index(a, b) | Expr::Bin(_, a, b) => {
            walk(a, f);
            walk(b, f);
        }
        Expr::Call(_, args) | Expr::List(args) => args.iter().for_each(|a| walk(a, f)),
        Expr::Object(fields) => fields.iter().for_each(|(_, v)| walk(v, f)),
        Expr::Lambda(l) => {
            let params: HashSet<&str> = l.params.iter().map(String::as_str).collect();
            walk(&l.body, &mut |n, is_field| f(n, is_field && !params.contains(n)));
        }
    }
}

/// What is loaded for the notes of one query.
pub(crate) struct Loaded {
    pub(crate) fields: HashMap<String, Vec<(String, Value)>>,
    pub(crate) tags: HashMap<String, (Vec<String>, Vec<String>)>,
    pub(crate) outlinks: HashMap<String, Vec<Value>>,
    pub(crate) inlinks: HashMap<String, Vec<Value>>,
    pub(crate) tasks: HashMap<String, Vec<Value>>,
    pub(crate) tz: jiff::tz::TimeZone,
}

/// The local date-time of a time in milliseconds since the epoch.
pub(crate) fn local(ms: i64, tz: &jiff::tz::TimeZone) -> Value {
    jiff::Timestamp::from_millisecond(ms).map_or(Value::Null, |t| Value::Date(t.to_zoned(tz.clone()).datetime()))
}

impl Loaded {
    pub(crate) fn load(r: &Reader<'_>, notes: &[NoteRow], needs: &Needs) -> Result<Loaded> {
        let shown: Vec<&str> = notes.iter().filter(|n| !n.hidden).map(|n| n.id.as_str()).collect();
        let ids = serde_json::to_string(&shown).unwrap_or_else(|_| "[]".into());
        let mut loaded = Loaded {
            fields: HashMap::new(),
            tags: HashMap::new(),
            outlinks: HashMap::new(),
            inlinks: HashMap::new(),
            tasks: HashMap::new(),
            tz: jiff::tz::TimeZone::system(),
        };
        let rows = |sql: &str| -> Result<Vec<(String, String, String, String)>> {
            let mut stmt = r.conn.prepare(sql)?;
            let rows = stmt.query_map(params![ids], |row| {
                Ok((
                    row.get(0)?,
                    row.get(1)?,
                    row.get::<_, Option<String>>(2)?.unwrap_or_default(),
                    row.get::<_, Option<String>>(3)?.unwrap_or_default(),
                ))
            })?;
            Ok(rows.collect::<rusqlite::Result<_>>()?)
        };
        if shown.is_empty() {
            return Ok(loaded);
        }
        if needs.fields {
            for (id, name, value, kind) in rows(
                "SELECT note_id, name, value, value_type FROM attributes WHERE kind = 'label' \
                 AND note_id IN (SELECT value FROM json_each(?1)) ORDER BY note_id, name",
            )? {
                let v = if kind == "json" {
                    serde_json::from_str(&value).map_or(Value::Null, |j| literal::from_json(&j))
                } else {
                    literal::typed(&value)
                };
                loaded.fields.entry(id).or_default().push((name, v));
            }
            for (id, name, value, _) in rows(
                "SELECT note_id, name, value, NULL FROM note_fields \
                 WHERE note_id IN (SELECT value FROM json_each(?1)) ORDER BY note_id, ordinal",
            )? {
                loaded
                    .fields
                    .entry(id)
                    .or_default()
                    .push((name, literal::typed(&value)));
            }
        }
        if needs.tags {
            for (id, tag, own, _) in rows(
                "SELECT nt.note_id, t.name, 'own', NULL FROM note_tags nt JOIN tags t ON t.id = nt.tag_id \
                 WHERE nt.note_id IN (SELECT value FROM json_each(?1)) \
                 UNION ALL SELECT note_id, tag, 'body', NULL FROM note_hashtags \
                 WHERE note_id IN (SELECT value FROM json_each(?1))",
            )? {
                let entry = loaded.tags.entry(id).or_default();
                let tag = format!("#{}", tag.trim_start_matches('#'));
                if own == "own" || !entry.0.contains(&tag) {
                    entry.0.push(tag);
                }
            }
            for (_, (tags, all)) in loaded.tags.iter_mut() {
                // `file.tags` holds each tag's parents too (`#a/b` gives `#a`); `etags` only what was written.
                let mut expanded: Vec<String> = Vec::new();
                for t in tags.iter() {
                    let mut at = t.len();
                    loop {
                        let part = t[..at].to_owned();
                        if !expanded.contains(&part) {
                            expanded.push(part);
                        }
                        match t[..at].rfind('/') {
                            Some(i) => at = i,
                            None => break,
                        }
                    }
                }
                *all = expanded;
            }
        }
        if needs.outlinks {
            for (id, target, note, title) in rows(
                "SELECT l.source_id, l.target, l.target_note_id, x.title FROM note_links l \
                 LEFT JOIN notes x ON x.id = l.target_note_id \
                 WHERE l.source_id IN (SELECT value FROM json_each(?1)) ORDER BY l.source_id, l.ordinal",
            )? {
                let link = Link {
                    target: if title.is_empty() { target } else { title },
                    note_id: (!note.is_empty()).then_some(note),
                    display: None,
                };
                loaded.outlinks.entry(id).or_default().push(Value::Link(link));
            }
        }
        if needs.inlinks {
            let visible = r.protection()?.sql_param();
            // Notes outside a scoped reader's notebooks do not show up among the links either.
            let scope = r.scope_param()?;
            let mut stmt = r.conn.prepare(&format!(
                "SELECT DISTINCT l.target_note_id, x.id, x.title FROM note_links l JOIN notes x ON x.id = l.source_id \
                 WHERE l.target_note_id IN (SELECT value FROM json_each(?1)) AND x.deleted IS NULL AND {} \
                 AND (?3 IS NULL OR x.notebook_id IN (SELECT value FROM json_each(?3)))",
                crate::protection::content_visible_sql("x", "?2")
            ))?;
            let found = stmt.query_map(params![ids, visible, scope], |row| {
                Ok((
                    row.get::<_, String>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, String>(2)?,
                ))
            })?;
            for row in found {
                let (target, source, title) = row?;
                let link = Link {
                    target: title,
                    note_id: Some(source),
                    display: None,
                };
                loaded.inlinks.entry(target).or_default().push(Value::Link(link));
            }
        }
        Ok(loaded)
    }

    /// A note as a row: `file` and, unless its content is withheld, its labels and inline fields.
    pub(crate) fn page(&self, note: &NoteRow, paths: &HashMap<String, String>) -> Value {
        let mut o = BTreeMap::new();
        let mut file = file_object(note, paths, &self.tz);
        if !note.hidden {
            let mut frontmatter = BTreeMap::new();
            let mut day = literal::iso(&day_in(&note.title)).map(Value::Date);
            for (name, v) in self.fields.get(&note.id).into_iter().flatten() {
                if day.is_none() && name.eq_ignore_ascii_case("date") && matches!(v, Value::Date(_)) {
                    day = Some(v.clone());
                }
                frontmatter.insert(name.clone(), v.clone());
                match o.get_mut(name) {
                    None => {
                        o.insert(name.clone(), v.clone());
                    }
                    Some(Value::List(l)) => l.push(v.clone()),
                    Some(prev) => *prev = Value::List(vec![prev.clone(), v.clone()]),
                }
            }
            let (etags, tags) = self.tags.get(&note.id).cloned().unwrap_or_default();
            // Front matter's `tags:` becomes the note's tags: `tags` reads them as that field gave them.
            if !o.keys().any(|k| k.eq_ignore_ascii_case("tags")) {
                let plain = etags
                    .iter()
                    .map(|t| Value::Text(t.trim_start_matches('#').to_owned()))
                    .collect();
                o.insert("tags".into(), Value::List(plain));
            }
            let texts = |l: Vec<String>| Value::List(l.into_iter().map(Value::Text).collect());
            file.insert("tags".into(), texts(tags));
            file.insert("etags".into(), texts(etags));
            file.insert("frontmatter".into(), Value::object(frontmatter));
            file.insert("day".into(), day.unwrap_or(Value::Null));
            file.insert(
                "outlinks".into(),
                Value::List(self.outlinks.get(&note.id).cloned().unwrap_or_default()),
            );
            file.insert(
                "inlinks".into(),
                Value::List(self.inlinks.get(&note.id).cloned().unwrap_or_default()),
            );
            file.insert(
                "tasks".into(),
                Value::List(self.tasks.get(&note.id).cloned().unwrap_or_default()),
            );
            if let Some(Value::List(a)) = o.get("aliases") {
                file.insert("aliases".into(), Value::List(a.clone()));
            }
        }
        o.insert("file".into(), Value::object(file));
        Value::object(o)
    }
}

/// `file`: what every note shows, its content withheld or not.
pub(crate) fn file_object(
    note: &NoteRow,
    paths: &HashMap<String, String>,
    tz: &jiff::tz::TimeZone,
) -> BTreeMap<String, Value> {
    let folder = paths.get(&note.notebook_id).cloned().unwrap_or_default();
    let path = if folder.is_empty() {
        format!("{}.md", note.title)
    } else {
        format!("{folder}/{}.md", note.title)
    };
    let ctime = local(note.created, tz);
    let mtime = local(note.updated, tz);
    let day_of = |v: &Value| match v {
        Value::Date(d) => Value::date(d.date()),
        _ => Value::Null,
    };
    let mut f = BTreeMap::new();
    f.insert("name".into(), Value::Text(note.title.clone()));
    f.insert("id".into(), Value::Text(note.id.clone()));
    f.insert("path".into(), Value::Text(path));
    f.insert("folder".into(), Value::Text(folder));
    f.insert("ext".into(), Value::Text("md".into()));
    f.insert("link".into(), Value::Link(link_to(note)));
    f.insert("cday".into(), day_of(&ctime));
    f.insert("mday".into(), day_of(&mtime));
    f.insert("ctime".into(), ctime);
    f.insert("mtime".into(), mtime);
    f.insert("size".into(), Value::Number(note.size as f64));
    f
}

fn link_to(note: &NoteRow) -> Link {
    Link {
        target: note.title.clone(),
        note_id: Some(note.id.clone()),
        display: None,
    }
}

/// The `YYYY-MM-DD` (or `YYYYMMDD`) in a daily note's title, as `file.day` reads it.
fn day_in(title: &str) -> String {
    let b = title.as_bytes();
    for i in 0..b.len() {
        if i > 0 && b[i - 1].is_ascii_digit() {
            continue;
        }
        if let Some(s) = title.get(i..i + 10)
            && literal::iso(s).is_some()
            && s.as_bytes()[4] == b'-'
        {
            return s.to_owned();
        }
        if let Some(s) = title.get(i..i + 8)
            && s.bytes().all(|c| c.is_ascii_digit())
            && !title.as_bytes().get(i + 8).is_some_and(u8::is_ascii_digit)
        {
            return format!("{}-{}-{}", &s[..4], &s[4..6], &s[6..]);
        }
    }
    String::new()
}

/// A task from its row in `note_tasks`.
pub(crate) struct TaskRow {
    pub(crate) note: usize,
    pub(crate) line: i64,
    pub(crate) status: String,
    pub(crate) done: bool,
    pub(crate) text: String,
    pub(crate) due: Option<String>,
    pub(crate) scheduled: Option<String>,
    pub(crate) start: Option<String>,
    pub(crate) done_on: Option<String>,
    pub(crate) created_on: Option<String>,
    pub(crate) cancelled_on: Option<String>,
    pub(crate) priority: i64,
    pub(crate) recurrence: Option<String>,
    pub(crate) heading: Option<String>,
}

/// The Tasks plugin's name of a priority.
pub fn priority_name(p: i64) -> &'static str {
    match p {
        6 => "highest",
        5 => "high",
        4 => "medium",
        2 => "low",
        1 => "lowest",
        _ => "none",
    }
}

impl TaskRow {
    /// The task as a row: its own fields and `file`; a name it does not have is read from its note.
    pub(crate) fn object(&self, page: &Value, needs: &Needs) -> Value {
        let date = |d: &Option<String>| d.as_deref().and_then(literal::iso).map_or(Value::Null, Value::Date);
        let file = super::eval::member(page, "file");
        let tags = needs.tags;
        let mut o = BTreeMap::new();
        // Only the fields the query names, when nothing sees a task whole: most task queries name two or three.
        let mut set = |k: &str, v: Value| {
            if needs.task_keys.as_ref().is_none_or(|keys| keys.contains(k)) {
                o.insert(k.to_owned(), v);
            }
        };
        set("text", Value::Text(self.text.clone()));
        set("status", Value::Text(self.status.clone()));
        set("checked", Value::Bool(self.status != " "));
        set("completed", Value::Bool(self.done));
        set("fullyCompleted", Value::Bool(self.done));
        set("due", date(&self.due));
        set("scheduled", date(&self.scheduled));
        set("start", date(&self.start));
        set("completion", date(&self.done_on));
        set("created", date(&self.created_on));
        set("cancelled", date(&self.cancelled_on));
        set("priority", Value::Text(priority_name(self.priority).to_owned()));
        set("recurrence", self.recurrence.clone().map_or(Value::Null, Value::Text));
        set("line", Value::Number(self.line as f64));
        set("section", self.heading.clone().map_or(Value::Null, Value::Text));
        set("path", super::eval::member(&file, "path"));
        set("link", super::eval::member(&file, "link"));
        // Its tags are read from its text only when the query names tags.
        let tags = if tags {
            crate::markdown::hashtags(&self.text)
                .into_iter()
                .map(|t| Value::Text(format!("#{t}")))
                .collect()
        } else {
            Vec::new()
        };
        set("tags", Value::List(tags));
        set("task", Value::Bool(true));
        set("file", file);
        if needs.fields {
            o.insert(super::value::PAGE_KEY.to_owned(), page.clone());
        }
        Value::object(o)
    }
}

/// The local time now.
pub(crate) fn now_local() -> DateTime {
    jiff::Zoned::now().datetime()
}
