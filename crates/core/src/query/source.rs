//! The SQL a query's notes and tasks are read by: its `FROM` (tags, folders, links, quire's search) and the parts of
//! its first `WHERE`s that an index can answer. What SQL narrows is always a superset of the answer: every row it
//! keeps is then checked by the evaluator, so the rows are the ones the query's words mean, only found faster.

use std::collections::HashMap;

use super::eval::Env;
use super::parse::{BinOp, Command, Expr, Source};
use super::value::Value;
use crate::error::Result;
use crate::read::Reader;
use crate::search::SearchOptions;

/// A condition on `notes n` (and `note_tasks t` for tasks) with its parameters, all text.
#[derive(Debug, Default)]
pub(crate) struct Sql {
    pub(crate) conditions: Vec<String>,
    /// Conditions on the task row `t`, for task queries.
    pub(crate) task_conditions: Vec<String>,
    pub(crate) params: Vec<String>,
}

impl Sql {
    fn param(&mut self, value: impl Into<String>) -> String {
        self.params.push(value.into());
        format!("?{}", self.params.len())
    }

    pub(crate) fn push(&mut self, condition: String) {
        self.conditions.push(condition);
    }

    pub(crate) fn where_clause(&self) -> String {
        if self.conditions.is_empty() {
            "1".to_owned()
        } else {
            self.conditions.join(" AND ")
        }
    }

    pub(crate) fn task_clause(&self) -> String {
        if self.task_conditions.is_empty() {
            "1".to_owned()
        } else {
            self.task_conditions.join(" AND ")
        }
    }

    fn push_task(&mut self, condition: String) {
        self.task_conditions.push(condition);
    }
}

/// What the `FROM` needs resolved before it is SQL: notebook paths, notes by title, search hits.
pub(crate) struct Resolve<'r, 'a> {
    pub(crate) reader: &'r Reader<'a>,
    pub(crate) paths: &'r HashMap<String, String>,
    /// The visibility rule's parameter (`NULL` for the user), bound again in each subquery that reads content.
    pub(crate) visible: Option<String>,
    /// The note the query is in, for `[[]]`.
    pub(crate) this: Option<&'r str>,
}

impl Resolve<'_, '_> {
    /// SQL for a source, over `notes n`.
    pub(crate) fn source(&self, s: &Source, sql: &mut Sql) -> Result<String> {
        Ok(match s {
            Source::Tag(tag) => {
                let (exact, below) = (sql.param(tag.clone()), sql.param(format!("{}/%", like_escape(tag))));
                let seen = self.content(sql, "n");
                format!(
                    "(n.id IN (SELECT nt.note_id FROM note_tags nt JOIN tags t ON t.id = nt.tag_id \
                     WHERE t.name = {exact} COLLATE NOCASE OR t.name LIKE {below} ESCAPE '\\' \
                     UNION SELECT note_id FROM note_hashtags WHERE tag = {exact} OR tag LIKE {below} ESCAPE '\\') \
                     AND {seen})"
                )
            }
            Source::Folder(path) => {
                let want = path.trim_matches('/').trim_end_matches(".md").to_lowercase();
                let notebooks: Vec<&str> = self
                    .paths
                    .iter()
                    .filter(|(_, p)| {
                        let p = p.to_lowercase();
                        want.is_empty() || p == want || p.starts_with(&format!("{want}/"))
                    })
                    .map(|(id, _)| id.as_str())
                    .collect();
                if !notebooks.is_empty() {
                    let ids = sql.param(serde_json::to_string(&notebooks).unwrap_or_default());
                    format!("n.notebook_id IN (SELECT value FROM json_each({ids}))")
                } else {
                    // A note's own path: `Folder/Title`.
                    let (folder, title) = want.rsplit_once('/').unwrap_or(("", want.as_str()));
                    let in_folder: Vec<&str> = self
                        .paths
                        .iter()
                        .filter(|(_, p)| p.to_lowercase() == folder)
                        .map(|(id, _)| id.as_str())
                        .collect();
                    let ids = sql.param(serde_json::to_string(&in_folder).unwrap_or_default());
                    let title = sql.param(title.to_owned());
                    format!("(n.notebook_id IN (SELECT value FROM json_each({ids})) AND lower(n.title) = {title})")
                }
            }
            Source::LinkedTo(target) => {
                let Some(id) = self.note(target)? else {
                    // No note has that name: the notes that link to the name all the same, as Dataview counts a
                    // link to a page not written yet.
                    let key = sql.param(crate::links::key_of(target));
                    let seen = self.content(sql, "x");
                    return Ok(format!(
                        "n.id IN (SELECT l.source_id FROM note_links l JOIN notes x ON x.id = l.source_id \
                         WHERE l.target_note_id IS NULL AND l.target_attachment_id IS NULL AND l.target_key = {key} \
                         AND {seen})"
                    ));
                };
                let id = sql.param(id);
                let seen = self.content(sql, "x");
                format!(
                    "n.id IN (SELECT l.source_id FROM note_links l JOIN notes x ON x.id = l.source_id \
                     WHERE l.target_note_id = {id} AND {seen} \
                     UNION SELECT a.note_id FROM attributes a JOIN notes x ON x.id = a.note_id \
                     WHERE a.kind = 'relation' AND a.target_note_id = {id} AND {seen})"
                )
            }
            Source::Outgoing(target) => {
                let Some(id) = self.note(target)? else {
                    return Ok("0".to_owned());
                };
                let visible = self.reader.shows_content(&self.reader.note_summary(&id)?);
                if !visible {
                    return Ok("0".to_owned());
                }
                let id = sql.param(id);
                format!(
                    "n.id IN (SELECT target_note_id FROM note_links WHERE source_id = {id} \
                     AND target_note_id IS NOT NULL \
                     UNION SELECT target_note_id FROM attributes WHERE note_id = {id} AND kind = 'relation')"
                )
            }
            Source::Search(words) => {
                let ids = self.search(words)?;
                let ids = sql.param(serde_json::to_string(&ids).unwrap_or_default());
                format!("n.id IN (SELECT value FROM json_each({ids}))")
            }
            Source::And(a, b) => format!("({} AND {})", self.source(a, sql)?, self.source(b, sql)?),
            Source::Or(a, b) => format!("({} OR {})", self.source(a, sql)?, self.source(b, sql)?),
            Source::Not(a) => format!("NOT ({})", self.source(a, sql)?),
        })
    }

    /// The visibility rule for a note row named `alias`.
    fn content(&self, sql: &mut Sql, alias: &str) -> String {
        match &self.visible {
            None => "1".to_owned(),
            Some(v) => {
                let p = sql.param(v.clone());
                crate::protection::content_visible_sql(alias, &p)
            }
        }
    }

    fn note(&self, target: &str) -> Result<Option<String>> {
        if target.is_empty() {
            return Ok(self.this.map(str::to_owned));
        }
        let target = target.trim_end_matches(".md");
        let name = target.rsplit('/').next().unwrap_or(target);
        let candidates = crate::links::candidates(self.reader.conn, name)?;
        Ok(candidates.into_iter().next())
    }

    fn search(&self, words: &str) -> Result<Vec<String>> {
        let mut ids = Vec::new();
        let mut options = SearchOptions::default();
        options.page.limit = crate::read::Page::MAX_LIMIT;
        loop {
            let page = self.reader.search(words, options)?;
            ids.extend(page.items.iter().map(|h| h.note.id.clone()));
            if !page.has_more || ids.len() >= 10_000 {
                return Ok(ids);
            }
            options.page.offset += page.items.len() as u64;
        }
    }
}

fn like_escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('%', "\\%").replace('_', "\\_")
}

/// The conjuncts of the `WHERE`s that come before anything that changes the rows (`FLATTEN`, `GROUP BY`, `LIMIT`).
pub(crate) fn leading_conjuncts(commands: &[Command]) -> Vec<&Expr> {
    let mut out = Vec::new();
    for c in commands {
        match c {
            Command::Where(e) => split_and(e, &mut out),
            Command::Sort(_) => {}
            _ => break,
        }
    }
    out
}

fn split_and<'e>(e: &'e Expr, out: &mut Vec<&'e Expr>) {
    if let Expr::Bin(BinOp::And, a, b) = e {
        split_and(a, out);
        split_and(b, out);
    } else {
        out.push(e);
    }
}

/// For a page query: a conjunct that can only hold for a note with the field narrows to notes that have it.
pub(crate) fn page_pushdown(e: &Expr, visible: Option<&str>, sql: &mut Sql) {
    let Some(field) = needs_field(e) else { return };
    // A note whose content is withheld has no fields for this reader: it never holds, and what its hidden values
    // are must not decide whether it is read at all.
    if let Some(v) = visible {
        let p = sql.param(v.to_owned());
        sql.push(crate::protection::content_visible_sql("n", &p));
    }
    let name = sql.param(field.to_owned());
    let key = sql.param(field.to_lowercase());
    // `f = 5` and `f = "open"` narrow by the value too: a value that is 5 once typed is text whose number is 5 (its
    // ASCII spaces trimmed), and one that is "open" holds "open". Both keep a superset: the evaluator decides.
    let (label_value, field_value) = match equals_literal(e) {
        Some(Value::Number(n)) => {
            let n = sql.param(super::value::number_text(*n));
            (
                format!(" AND CAST(trim(value, {SPACES}) AS REAL) = CAST({n} AS REAL)"),
                format!(" AND CAST(trim(value, {SPACES}) AS REAL) = CAST({n} AS REAL)"),
            )
        }
        Some(Value::Text(t)) => {
            let t = sql.param(t.clone());
            (
                format!(" AND instr(CASE WHEN value_type = 'json' THEN value ->> '$' ELSE value END, {t}) > 0"),
                format!(" AND instr(value, {t}) > 0"),
            )
        }
        _ => (String::new(), String::new()),
    };
    // One `IN` over a `UNION`: SQLite then walks the few ids it gives, not every note.
    sql.push(format!(
        "n.id IN (SELECT note_id FROM attributes WHERE kind = 'label' AND name = {name} COLLATE NOCASE{label_value} \
         UNION SELECT note_id FROM note_fields WHERE key = {key}{field_value})"
    ));
}

/// The white space `literal::typed` trims, as SQL's `trim` takes it.
const SPACES: &str = "' ' || char(9) || char(10) || char(11) || char(12) || char(13)";

/// The literal a conjunct `f = literal` (either way round) compares with.
fn equals_literal(e: &Expr) -> Option<&Value> {
    match e {
        Expr::Bin(BinOp::Eq, a, b) => match (&**a, &**b) {
            (Expr::Field(_), Expr::Lit(v)) | (Expr::Lit(v), Expr::Field(_)) => Some(v),
            _ => None,
        },
        _ => None,
    }
}

/// The plain field a conjunct cannot hold without: `f`, `f = v`, `f > v`, `f >= v`, `v < f`, `contains(f, v)`
/// (`f <= v` holds for a missing field: null comes first).
fn needs_field(e: &Expr) -> Option<&str> {
    fn plain(e: &Expr) -> Option<&str> {
        match e {
            // ASCII names only: SQL's `COLLATE NOCASE` folds ASCII case alone, the evaluator every letter's.
            Expr::Field(f)
                if !["file", "this", "tags"].iter().any(|n| f.eq_ignore_ascii_case(n))
                    && f.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') =>
            {
                Some(f.as_str())
            }
            _ => None,
        }
    }
    let not_null = |e: &Expr| matches!(e, Expr::Lit(v) if !matches!(v, Value::Null));
    match e {
        Expr::Field(_) => plain(e),
        Expr::Bin(BinOp::Eq | BinOp::Gt | BinOp::Ge, a, b) if not_null(b) => plain(a),
        Expr::Bin(BinOp::Eq | BinOp::Lt | BinOp::Le, a, b) if not_null(a) => plain(b),
        Expr::Call(f, args) if (f == "contains" || f == "icontains" || f == "econtains") && !args.is_empty() => {
            plain(&args[0])
        }
        _ => None,
    }
}

/// For a task query: `completed`, `!completed`, and a task date compared with a date that depends on no field.
pub(crate) fn task_pushdown(e: &Expr, now: jiff::civil::DateTime, sql: &mut Sql) {
    match e {
        Expr::Field(f) if f == "completed" => sql.push_task("t.done = 1".to_owned()),
        Expr::Not(inner) if matches!(&**inner, Expr::Field(f) if f == "completed") => {
            sql.push_task(OPEN.to_owned());
        }
        Expr::Field(f) if task_date(f) == Some("due") => sql.push_task(format!("{DUE} > ''")),
        Expr::Field(f) if task_date(f).is_some() => {
            sql.push_task(format!("t.{} IS NOT NULL", task_date(f).unwrap_or("due")));
        }
        Expr::Bin(op, a, b) => {
            let (col, op, other) = match (&**a, &**b) {
                (Expr::Field(f), other) if task_date(f).is_some() => (task_date(f), *op, other),
                (other, Expr::Field(f)) if task_date(f).is_some() => (task_date(f), flip(*op), other),
                _ => return,
            };
            let (Some(col), Some(Value::Date(d))) = (col, constant(other, now)) else {
                return;
            };
            let day = sql.param(d.date().to_string());
            // An undated task counts as due before any day: `ifnull(.., '') <= day` holds it. The due date is read
            // as its index (`note_tasks_due`) has it; the other dates as written, which their partial indexes need.
            let at = if col == "due" {
                DUE.to_owned()
            } else {
                format!("t.{col}")
            };
            match op {
                BinOp::Eq | BinOp::Gt | BinOp::Ge => sql.push_task(format!("{at} >= {day}")),
                BinOp::Lt | BinOp::Le => sql.push_task(format!("ifnull(t.{col}, '') <= {day}")),
                _ => {}
            }
        }
        _ => {}
    }
}

/// The condition of a task query that keeps open tasks only (read from their index: see `read_tasks`).
pub(crate) const OPEN: &str = "t.done = 0";

/// A task's due date as `note_tasks_due` indexes it: an undated task's is the empty text, before every day.
const DUE: &str = "ifnull(t.due, '')";

fn task_date(field: &str) -> Option<&'static str> {
    match field {
        "due" => Some("due"),
        "scheduled" => Some("scheduled"),
        "start" => Some("start"),
        "completion" => Some("done_on"),
        _ => None,
    }
}

fn flip(op: BinOp) -> BinOp {
    match op {
        BinOp::Lt => BinOp::Gt,
        BinOp::Le => BinOp::Ge,
        BinOp::Gt => BinOp::Lt,
        BinOp::Ge => BinOp::Le,
        other => other,
    }
}

/// The value of an expression that reads no field, if it has one.
fn constant(e: &Expr, now: jiff::civil::DateTime) -> Option<Value> {
    if reads_fields(e) {
        return None;
    }
    let row = Value::Null;
    let mut env = Env {
        now,
        row: &row,
        this: None,
        locals: Vec::new(),
    };
    env.eval(e).ok()
}

fn reads_fields(e: &Expr) -> bool {
    match e {
        Expr::Lit(_) => false,
        Expr::Field(_) | Expr::Lambda(_) => true,
        Expr::Dot(a, _) | Expr::Not(a) | Expr::Neg(a) => reads_fields(a),
        Expr::Index(a, b) | Expr::Bin(_, a, b) => reads_fields(a) || reads_fields(b),
        Expr::Call(_, args) | Expr::List(args) => args.iter().any(reads_fields),
        Expr::Object(fields) => fields.iter().any(|(_, v)| reads_fields(v)),
    }
}
