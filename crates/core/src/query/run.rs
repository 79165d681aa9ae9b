//! Running a query: SQL finds the notes (or tasks) its `FROM` and first `WHERE`s allow, the evaluator runs every
//! command in order over them, and the result is shaped as the query's kind asks.

use std::collections::HashMap;

use rusqlite::params_from_iter;

use super::eval::Env;
use super::parse::{Command, Kind, Query};
use super::rows::{Loaded, Needs, NoteRow, TaskRow};
use super::source::{OPEN, Resolve, Sql, leading_conjuncts, page_pushdown, task_pushdown};
use super::value::Value;
use super::{NoteRef, QueryOptions, QueryResult, ResultRow, TaskRef};
use crate::error::{Error, Result};
use crate::read::Reader;

/// A row on its way through the commands.
#[derive(Clone)]
struct Item {
    row: Value,
    note: Option<usize>,
    task: Option<usize>,
    group: Option<Value>,
    members: Vec<Item>,
}

/// At most this many messages of rows that failed are kept.
const WARNINGS: usize = 5;

pub(crate) fn run(r: &Reader<'_>, q: &Query, options: &QueryOptions) -> Result<QueryResult> {
    // The note the query is in must be one this reader may see (a scoped client names none outside its scope).
    if let Some(id) = &options.this_note {
        r.note_summary(id)?;
    }
    let now = options.now.unwrap_or_else(super::rows::now_local);
    let tree = r.notebook_tree()?;
    let paths: HashMap<String, String> = tree.iter().map(|nb| (nb.id.clone(), tree.path(&nb.id))).collect();
    let protection = r.protection()?;
    let visible = protection.sql_param();
    let is_task = matches!(q.kind, Kind::Task);

    let mut sql = Sql::default();
    sql.push("n.deleted IS NULL".to_owned());
    if let Some(scope) = r.scope_param()? {
        sql.params.push(scope);
        sql.push(format!(
            "n.notebook_id IN (SELECT value FROM json_each(?{}))",
            sql.params.len()
        ));
    }
    let resolve = Resolve {
        reader: r,
        paths: &paths,
        visible: visible.clone(),
        this: options.this_note.as_deref(),
    };
    if let Some(source) = &q.source {
        let condition = resolve.source(source, &mut sql)?;
        sql.push(condition);
    }
    let narrowed = if options.exhaustive {
        Vec::new()
    } else {
        leading_conjuncts(&q.commands)
    };
    for conjunct in narrowed {
        if is_task {
            task_pushdown(conjunct, now, &mut sql);
        } else {
            page_pushdown(conjunct, visible.as_deref(), &mut sql);
        }
    }
    if is_task && let Some(v) = &visible {
        sql.params.push(v.clone());
        let p = format!("?{}", sql.params.len());
        sql.push(crate::protection::content_visible_sql("n", &p));
    }

    let needs = Needs::of(q);
    let (notes, tasks) = if is_task {
        read_tasks(r, &sql, &protection, needs.size)?
    } else {
        (read_notes(r, &sql, &protection, needs.size)?, Vec::new())
    };
    let mut loaded = Loaded::load(r, &notes, &needs)?;
    if needs.tasks && !is_task {
        let (owners, all) = read_tasks(r, &note_ids(&notes), &protection, needs.size)?;
        let whole = Needs {
            task_keys: None,
            ..needs.clone()
        };
        for t in &all {
            let owner = &owners[t.note];
            let file = Value::object(super::rows::file_object(owner, &paths, &loaded.tz));
            let page = Value::object([("file".to_owned(), file)].into_iter().collect());
            loaded
                .tasks
                .entry(owner.id.clone())
                .or_default()
                .push(t.object(&page, &whole));
        }
    }
    // A task query that names nothing of a task's note does not build the notes as rows.
    let pages: Vec<Value> = if needs.page {
        notes.iter().map(|n| loaded.page(n, &paths)).collect()
    } else {
        vec![Value::Null; notes.len()]
    };
    let mut items: Vec<Item> = if is_task {
        tasks
            .iter()
            .enumerate()
            .map(|(i, t)| Item {
                row: t.object(&pages[t.note], &needs),
                note: Some(t.note),
                task: Some(i),
                group: None,
                members: Vec::new(),
            })
            .collect()
    } else {
        pages
            .iter()
            .enumerate()
            .map(|(i, p)| Item {
                row: p.clone(),
                note: Some(i),
                task: None,
                group: None,
                members: Vec::new(),
            })
            .collect()
    };
    // `this`: the note the query is in, whether or not the query's rows hold it.
    let this = match &options.this_note {
        Some(id) => match notes.iter().position(|n| &n.id == id).filter(|_| needs.page) {
            Some(i) => Some(pages[i].clone()),
            None => {
                let one = Sql {
                    conditions: vec!["n.id = ?1".to_owned(), "n.deleted IS NULL".to_owned()],
                    task_conditions: Vec::new(),
                    params: vec![id.clone()],
                };
                let found = read_notes(r, &one, &protection, needs.size)?;
                let loaded = Loaded::load(r, &found, &needs)?;
                found.first().map(|n| loaded.page(n, &paths))
            }
        },
        None => None,
    };
    let mut warnings = Vec::new();
    let mut env = Env {
        now,
        row: &Value::Null,
        this: this.as_ref(),
        locals: Vec::new(),
    };
    let mut grouped = false;
    for command in &q.commands {
        items = apply(&mut env, command, items, &mut warnings, &mut grouped)?;
    }
    Ok(shape(&mut env, q, &items, &notes, &tasks, &paths, grouped, warnings))
}

fn note_ids(notes: &[NoteRow]) -> Sql {
    let ids: Vec<&str> = notes.iter().filter(|n| !n.hidden).map(|n| n.id.as_str()).collect();
    Sql {
        conditions: vec!["n.id IN (SELECT value FROM json_each(?1))".to_owned()],
        task_conditions: Vec::new(),
        params: vec![serde_json::to_string(&ids).unwrap_or_default()],
    }
}

/// What a row reads for `file.size`: the body's length when the query can see it (reading it reads the note's row,
/// large for its body), otherwise nothing.
fn size_column(size: bool) -> &'static str {
    if size { "octet_length(n.body)" } else { "NULL" }
}

fn read_notes(
    r: &Reader<'_>,
    sql: &Sql,
    protection: &crate::protection::Protection,
    size: bool,
) -> Result<Vec<NoteRow>> {
    let mut stmt = r.conn.prepare(&format!(
        "SELECT n.id, n.title, n.notebook_id, n.is_protected, n.created, n.updated, {} FROM notes n WHERE {}",
        size_column(size),
        sql.where_clause()
    ))?;
    let hides = !r.actor().is_user();
    let rows = stmt.query_map(params_from_iter(sql.params.iter()), |row| {
        let own: bool = row.get(3)?;
        let notebook_id: String = row.get(2)?;
        Ok(NoteRow {
            hidden: hides && protection.is_protected(own, &notebook_id),
            id: row.get(0)?,
            title: row.get(1)?,
            notebook_id,
            created: row.get(4)?,
            updated: row.get(5)?,
            size: row.get::<_, Option<i64>>(6)?.unwrap_or(0),
        })
    })?;
    let mut notes: Vec<NoteRow> = rows.collect::<rusqlite::Result<_>>()?;
    notes.sort_by_cached_key(|n| (n.title.to_lowercase(), n.id.clone()));
    Ok(notes)
}

fn read_tasks(
    r: &Reader<'_>,
    sql: &Sql,
    protection: &crate::protection::Protection,
    size: bool,
) -> Result<(Vec<NoteRow>, Vec<TaskRow>)> {
    // One statement: each task with its note's columns; the notes are gathered from it. A task's note is read from
    // `notes_meta`, which holds all of them but the body: without statistics the planner would take the unique index
    // on `id` and read each note's row (at 100k notes, half of an undated task query's time). Its full scan is
    // also the cheaper way through a folder's notes.
    let mut stmt = r.conn.prepare(&format!(
        "SELECT t.note_id, t.line, t.status, t.done, t.text, t.due, t.scheduled, t.start, t.done_on, t.created_on, \
         t.cancelled_on, t.priority, t.recurrence, t.heading, \
         n.title, n.notebook_id, n.is_protected, n.created, n.updated, {} \
         FROM note_tasks t {} JOIN notes n INDEXED BY notes_meta ON n.id = t.note_id WHERE {} AND {}",
        size_column(size),
        // Open tasks are read from their own index, which holds them whole (see migration 020).
        if sql.task_conditions.iter().any(|c| c == OPEN) {
            "INDEXED BY note_tasks_open"
        } else {
            ""
        },
        sql.where_clause(),
        sql.task_clause()
    ))?;
    let hides = !r.actor().is_user();
    let mut notes: Vec<NoteRow> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut tasks = Vec::new();
    let mut rows = stmt.query(params_from_iter(sql.params.iter()))?;
    while let Some(row) = rows.next()? {
        let note_id: String = row.get(0)?;
        let at = match index.get(&note_id) {
            Some(&at) => at,
            None => {
                let own: bool = row.get(16)?;
                let notebook_id: String = row.get(15)?;
                notes.push(NoteRow {
                    hidden: hides && protection.is_protected(own, &notebook_id),
                    id: note_id.clone(),
                    title: row.get(14)?,
                    notebook_id,
                    created: row.get(17)?,
                    updated: row.get(18)?,
                    size: row.get::<_, Option<i64>>(19)?.unwrap_or(0),
                });
                index.insert(note_id, notes.len() - 1);
                notes.len() - 1
            }
        };
        if notes[at].hidden {
            continue;
        }
        tasks.push(TaskRow {
            note: at,
            line: row.get(1)?,
            status: row.get(2)?,
            done: row.get(3)?,
            text: row.get(4)?,
            due: row.get(5)?,
            scheduled: row.get(6)?,
            start: row.get(7)?,
            done_on: row.get(8)?,
            created_on: row.get(9)?,
            cancelled_on: row.get(10)?,
            priority: row.get(11)?,
            recurrence: row.get(12)?,
            heading: row.get(13)?,
        });
    }
    // Notes by title (then id), tasks by note and line.
    let mut order: Vec<usize> = (0..notes.len()).collect();
    order.sort_by_cached_key(|&i| (notes[i].title.to_lowercase(), notes[i].id.clone()));
    let mut place = vec![0; notes.len()];
    for (new, &old) in order.iter().enumerate() {
        place[old] = new;
    }
    let mut sorted: Vec<Option<NoteRow>> = notes.into_iter().map(Some).collect();
    let notes: Vec<NoteRow> = order.iter().filter_map(|&i| sorted[i].take()).collect();
    for t in &mut tasks {
        t.note = place[t.note];
    }
    tasks.sort_by_key(|t| (t.note, t.line));
    Ok((notes, tasks))
}

fn eval_on(env: &mut Env<'_>, row: &Value, e: &super::parse::Expr) -> super::eval::Fallible {
    // SAFETY of lifetimes: the row outlives the evaluation; Env borrows it only for this call.
    let mut inner = Env {
        now: env.now,
        row,
        this: env.this,
        locals: std::mem::take(&mut env.locals),
    };
    let out = inner.eval(e);
    env.locals = inner.locals;
    out
}

fn note_warn(warnings: &mut Vec<String>, message: String, notes_title: Option<&str>) {
    if warnings.len() < WARNINGS {
        warnings.push(match notes_title {
            Some(t) => format!("{t}: {message}"),
            None => message,
        });
    }
}

fn apply(
    env: &mut Env<'_>,
    command: &Command,
    items: Vec<Item>,
    warnings: &mut Vec<String>,
    grouped: &mut bool,
) -> Result<Vec<Item>> {
    let title = |item: &Item| match super::eval::member(&super::eval::member(&item.row, "file"), "name") {
        Value::Text(t) => Some(t),
        _ => None,
    };
    Ok(match command {
        Command::Where(e) => {
            let total = items.len();
            let mut kept = Vec::new();
            let mut failed = 0;
            for item in items {
                match eval_on(env, &item.row, e) {
                    Ok(v) if v.is_truthy() => kept.push(item),
                    Ok(_) => {}
                    Err(m) => {
                        failed += 1;
                        note_warn(warnings, m.0, title(&item).as_deref());
                    }
                }
            }
            if failed > 0 && failed == total {
                return Err(Error::Invalid(format!(
                    "every row failed in WHERE: {}",
                    warnings.first().cloned().unwrap_or_default()
                )));
            }
            kept
        }
        Command::Sort(keys) => {
            let mut keyed: Vec<(Vec<Value>, Item)> = Vec::with_capacity(items.len());
            for item in items {
                let mut k = Vec::with_capacity(keys.len());
                for (e, _) in keys {
                    k.push(eval_on(env, &item.row, e).unwrap_or(Value::Null));
                }
                keyed.push((k, item));
            }
            keyed.sort_by(|(a, _), (b, _)| {
                for (i, (_, desc)) in keys.iter().enumerate() {
                    let o = a[i].compare(&b[i]);
                    let o = if *desc { o.reverse() } else { o };
                    if o != std::cmp::Ordering::Equal {
                        return o;
                    }
                }
                std::cmp::Ordering::Equal
            });
            keyed.into_iter().map(|(_, i)| i).collect()
        }
        Command::GroupBy(e, name) => {
            // Sorted by key (stable: members keep their order), then runs of equal keys: n log n, not n².
            let mut keyed: Vec<(Value, Item)> = Vec::with_capacity(items.len());
            for item in items {
                keyed.push((eval_on(env, &item.row, e).unwrap_or(Value::Null), item));
            }
            keyed.sort_by(|a, b| a.0.compare(&b.0));
            let mut groups: Vec<(Value, Vec<Item>)> = Vec::new();
            for (key, item) in keyed {
                match groups.last_mut() {
                    Some((k, members)) if k.compare(&key) == std::cmp::Ordering::Equal => members.push(item),
                    _ => groups.push((key, vec![item])),
                }
            }
            *grouped = true;
            groups
                .into_iter()
                .map(|(key, members)| {
                    let rows = Value::List(members.iter().map(|m| m.row.clone()).collect());
                    let mut o = std::collections::BTreeMap::new();
                    o.insert(name.clone(), key.clone());
                    o.insert("rows".to_owned(), rows);
                    Item {
                        row: Value::object(o),
                        note: None,
                        task: None,
                        group: Some(key),
                        members,
                    }
                })
                .collect()
        }
        Command::Flatten(e, name) => {
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                let v = eval_on(env, &item.row, e).unwrap_or(Value::Null);
                let values = match v {
                    Value::List(l) if !l.is_empty() => l,
                    other => vec![other],
                };
                for v in values {
                    let mut next = item.clone();
                    if let Value::Object(o) = &mut next.row {
                        std::rc::Rc::make_mut(o).insert(name.clone(), v);
                    }
                    out.push(next);
                }
            }
            out
        }
        Command::Limit(n) => {
            let mut items = items;
            items.truncate(*n);
            items
        }
    })
}

#[allow(clippy::too_many_arguments, reason = "the pieces of one run, passed once")]
fn shape(
    env: &mut Env<'_>,
    q: &Query,
    items: &[Item],
    notes: &[NoteRow],
    tasks: &[TaskRow],
    paths: &HashMap<String, String>,
    grouped: bool,
    mut warnings: Vec<String>,
) -> QueryResult {
    let note_ref = |i: usize| {
        let n = &notes[i];
        let folder = paths.get(&n.notebook_id).cloned().unwrap_or_default();
        NoteRef {
            id: n.id.clone(),
            title: n.title.clone(),
            notebook: folder,
        }
    };
    let task_ref = |i: usize| TaskRef::from_row(&notes[tasks[i].note].id, &tasks[i]);
    let cell = |env: &mut Env<'_>, row: &Value, e: &super::parse::Expr, warnings: &mut Vec<String>| {
        eval_on(env, row, e).unwrap_or_else(|m| {
            if warnings.len() < WARNINGS {
                warnings.push(m.0);
            }
            Value::Null
        })
    };
    let base = |item: &Item| ResultRow {
        note: item.note.map(note_ref),
        group: item.group.clone(),
        cells: Vec::new(),
        task: item.task.map(task_ref),
        children: Vec::new(),
    };
    let mut rows = Vec::with_capacity(items.len());
    let (kind, headers) = match &q.kind {
        Kind::Table { without_id, columns } => {
            for item in items {
                let mut row = base(item);
                for c in columns {
                    row.cells.push(cell(env, &item.row, &c.expr, &mut warnings));
                }
                if grouped {
                    row.children = item.members.iter().map(base).collect();
                }
                rows.push(row);
            }
            let mut headers = Vec::new();
            if !without_id {
                headers.push(if grouped { group_name(q) } else { "File".to_owned() });
            }
            headers.extend(columns.iter().map(|c| c.name.clone()));
            ("table", headers)
        }
        Kind::List { expr, .. } => {
            for item in items {
                let mut row = base(item);
                if let Some(e) = expr {
                    row.cells.push(cell(env, &item.row, e, &mut warnings));
                } else if grouped {
                    row.children = item.members.iter().map(base).collect();
                }
                rows.push(row);
            }
            ("list", Vec::new())
        }
        Kind::Task => {
            for item in items {
                let mut row = base(item);
                if grouped {
                    row.children = item.members.iter().map(base).collect();
                }
                rows.push(row);
            }
            ("task", Vec::new())
        }
        Kind::Calendar { expr } => {
            for item in items {
                let v = cell(env, &item.row, expr, &mut warnings);
                if matches!(v, Value::Date(_)) {
                    let mut row = base(item);
                    row.cells.push(v);
                    rows.push(row);
                }
            }
            ("calendar", Vec::new())
        }
    };
    // A name FLATTEN binds is the row's, not the note's: no view writes it back.
    let bound: Vec<String> = q
        .commands
        .iter()
        .filter_map(|c| match c {
            Command::Flatten(_, name) => Some(crate::structure::field_key(name)),
            _ => None,
        })
        .collect();
    let settable = |e: &super::parse::Expr| settable(e).filter(|key| !bound.contains(key));
    let fields = match &q.kind {
        Kind::Table { without_id, columns } if !grouped => {
            let id = (!without_id).then_some(None);
            let named: Vec<Option<String>> = id
                .into_iter()
                .chain(columns.iter().map(|c| settable(&c.expr)))
                .collect();
            if named.iter().any(Option::is_some) {
                named
            } else {
                Vec::new()
            }
        }
        _ => Vec::new(),
    };
    let group_field = q.commands.iter().rev().find_map(|c| match c {
        Command::GroupBy(e, _) => Some(settable(e)),
        _ => None,
    });
    QueryResult {
        kind: kind.to_owned(),
        headers,
        rows,
        fields,
        group_field: group_field.flatten(),
        warnings,
    }
}

/// The field a column or a grouping shows when it is one a view can set in the note (a plain field's name, not
/// `file`, `this` or a task's own field).
fn settable(e: &super::parse::Expr) -> Option<String> {
    const OWN: &[&str] = &["file", "this", "tags", "etags", "aliases", "row", "key", "rows"];
    match e {
        super::parse::Expr::Field(name) => {
            let key = crate::structure::field_key(name);
            (!OWN.contains(&key.as_str())).then_some(key)
        }
        _ => None,
    }
}

fn group_name(q: &Query) -> String {
    q.commands
        .iter()
        .rev()
        .find_map(|c| {
            if let Command::GroupBy(_, n) = c {
                Some(n.clone())
            } else {
                None
            }
        })
        .map_or_else(
            || "Group".to_owned(),
            |n| if n == "key" { "Group".to_owned() } else { n },
        )
}
