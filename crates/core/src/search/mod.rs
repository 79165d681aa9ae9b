//! Full-text search: the query language of `query`, answered by the tantivy index beside the file (`engine`) for
//! plain word searches and by the FTS5 index for the rest, both with bm25 ranking and snippets.

mod cite;
pub(crate) mod engine;
mod query;

pub use cite::Citation;

pub(crate) use engine::FullText;

use std::panic::{AssertUnwindSafe, catch_unwind};

use rusqlite::types::Value;
use rusqlite::{OptionalExtension, params, params_from_iter};
use serde::{Deserialize, Serialize};

use crate::entity::{NoteSummary, Timestamp};
use crate::error::Result;
use crate::read::{Page, PageOf, Reader, summary_from_row};
use query::{Column, Query, Term};

/// quire's search syntax in one sentence, written once for every help text that explains it: the CLI's
/// `quire search --help`, the `search_notes` tool's description of `query`, and the MCP server's instructions.
/// A macro, so that it can stand in `#[doc = ...]` and `concat!`.
///
/// ```
/// assert!(quire_core::search_syntax!().contains("notebook:"));
/// assert_eq!(quire_core::SEARCH_SYNTAX, quire_core::search_syntax!());
/// ```
#[macro_export]
macro_rules! search_syntax {
    () => {
        "All words must match; \"exact phrase\"; prefix*; -excluded; title:word; body:word; tag:name; \
         notebook:Work/Projects (with sub-notebooks); created: or updated: 20260115, day-7, week-2, month-1, year-1; \
         type:note or type:todo; iscompleted:0 or 1; any:1 for any word instead of all."
    };
}

/// [`search_syntax!`] as a constant.
pub const SEARCH_SYNTAX: &str = search_syntax!();

/// Reads a point in time as people and models write it: RFC 3339 (`2026-01-15T09:00:00Z`), a date (`20260115`,
/// `202601`, `2026`), or a time relative to today (`day-7`, `week-2`, `month-1`, `year-1`), in UTC.
pub fn parse_time(text: &str) -> Result<Timestamp> {
    match Timestamp::parse_rfc3339(text) {
        Some(t) => Ok(t),
        None => query::parse_date(text, Timestamp::now(), "since"),
    }
}

/// How to run a search.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchOptions {
    /// Which page of results.
    pub page: Page,
    /// Whether notes in the trash are included.
    pub include_trashed: bool,
}

impl Default for SearchOptions {
    fn default() -> SearchOptions {
        SearchOptions {
            page: Page { offset: 0, limit: 20 },
            include_trashed: false,
        }
    }
}

/// One search result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchHit {
    /// The note.
    pub note: NoteSummary,
    /// Relevance, higher is better (bm25, title weighted); 0 for queries without words.
    pub score: f64,
    /// Text around the best hit, matched words in `<mark>…</mark>`; the start of the body for queries without words.
    pub snippet: String,
    /// The attachment (and its page) the words were found in, when they were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub found_in: Option<Citation>,
}

/// Column weights for bm25: title, body, tags, attachment text.
const BM25: &str = "bm25(notes_fts, 10.0, 1.0, 4.0, 0.5)";
const SNIPPET: &str = "snippet(notes_fts, -1, '<mark>', '</mark>', '…', 16)";

impl Reader<'_> {
    /// Searches the notes with quire's query language (see the crate docs). Any input gives results or an
    /// [`Error::Query`](crate::Error::Query) that says how to fix the query; never an SQLite error.
    ///
    /// The body, tags and attachment text of protected notes are not indexed, so they are found by title only.
    pub fn search(&self, input: &str, options: SearchOptions) -> Result<PageOf<SearchHit>> {
        let page = self.search_unrecorded(input, options)?;
        for hit in &page.items {
            self.record_read(&hit.note, None, "search snippet");
        }
        Ok(page)
    }

    fn search_unrecorded(&self, input: &str, options: SearchOptions) -> Result<PageOf<SearchHit>> {
        let query = query::parse(input, Timestamp::now())?;
        let mut page = match self.search_with_engine(&query, options)? {
            Some(page) => page,
            None => self.search_fts(&query, options)?,
        };
        self.cite(&query, &mut page.items)?;
        Ok(page)
    }

    fn search_fts(&self, query: &query::Query, options: SearchOptions) -> Result<PageOf<SearchHit>> {
        let query = query.clone();
        // Through a scope, notebook paths start at its roots, so a filter cannot name a notebook above them.
        let roots = self
            .scope()?
            .map(|s| serde_json::to_string(&s.roots).unwrap_or_else(|_| "[]".into()));
        let protection = self.protection()?;
        let mut plan = Plan::build(&query, options, roots.as_deref(), protection.sql_param());
        if let Some(scope) = self.scope_param()? {
            plan.from_where
                .push_str(" AND n.notebook_id IN (SELECT value FROM json_each(?))");
            plan.params.push(Value::Text(scope));
        }

        let total: i64 = self
            .conn
            .prepare_cached(&format!("SELECT count(*) {}", plan.from_where))?
            .query_row(params_from_iter(plan.params.iter()), |r| r.get(0))?;
        // Two steps: rank the matches, then read the page's notes and make their snippets. In one statement SQLite
        // computes every output column (the tags, FTS5's snippet) for every match before it sorts them: a word in
        // 50,000 long notes took over a minute that way, for a page of ten.
        let sql = format!(
            "SELECT n.seq, {} {} ORDER BY {} LIMIT ? OFFSET ?",
            plan.score, plan.from_where, plan.order
        );
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let params = plan.params.iter().cloned().chain([
            Value::Integer(options.page.sql_limit()),
            Value::Integer(options.page.sql_offset()),
        ]);
        let ranked = stmt
            .query_map(params_from_iter(params), |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, f64>(1)?))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        let mut note_stmt = self.conn.prepare_cached(concat!(
            "SELECT ",
            crate::read::note_columns!(),
            ", CASE WHEN length(n.body) > 200 THEN substr(n.body, 1, 200) || '…' ELSE n.body END \
             FROM notes n WHERE n.seq = ?1"
        ))?;
        let mut snippet_stmt = self.conn.prepare_cached(&format!(
            "SELECT {SNIPPET} FROM notes_fts WHERE notes_fts MATCH ?1 AND rowid = ?2"
        ))?;
        let mut hits = Vec::with_capacity(ranked.len());
        for (seq, score) in ranked {
            let (note, start) = note_stmt.query_row([seq], |r| {
                Ok((summary_from_row(r, &protection)?, r.get::<_, Option<String>>(11)?))
            })?;
            let snippet = if note.is_protected {
                String::new()
            } else {
                match &plan.fts {
                    // A note found by a filter alone (`any` with filters) has no match to show.
                    Some(fts) => snippet_stmt
                        .query_row(params![fts, seq], |r| r.get::<_, Option<String>>(0))
                        .optional()?
                        .flatten()
                        .unwrap_or_default(),
                    None => start.unwrap_or_default(),
                }
            };
            hits.push(SearchHit {
                note,
                score,
                snippet,
                found_in: None,
            });
        }
        Ok(PageOf::new(hits, u64::try_from(total).unwrap_or(0), options.page))
    }
}

/// How many log rows `search_log` keeps: an index further behind is built again from `notes_fts`.
const LOG_KEPT: i64 = 100_000;

/// Forgets the `search_log` rows more than [`LOG_KEPT`] before `newest`, moving the horizon past them.
pub(crate) fn forget_old_log(conn: &rusqlite::Connection, newest: i64) -> Result<()> {
    let horizon = newest - LOG_KEPT;
    if horizon > 0 {
        conn.prepare_cached("DELETE FROM search_log WHERE id <= ?1")?
            .execute([horizon])?;
        conn.prepare_cached("UPDATE search_state SET horizon = max(horizon, ?1) WHERE id = 1")?
            .execute([horizon])?;
    }
    Ok(())
}

/// The most hits a page may reach into through the engine (offset and limit); deeper pages are FTS5's.
const ENGINE_DEPTH: u64 = 10_000;

/// Hits read beyond a page, to fill it when some are gone in this transaction.
const REFILL: usize = 8;

impl Reader<'_> {
    /// A plain word search through the full-text engine (see `engine`), or `None` when FTS5 must answer: a query
    /// with filters, a search of the trash, a scoped handle, a write transaction, or an engine that cannot be used.
    fn search_with_engine(&self, query: &Query, options: SearchOptions) -> Result<Option<PageOf<SearchHit>>> {
        let Some(fulltext) = &self.fulltext else {
            return Ok(None);
        };
        let depth = options.page.offset.saturating_add(options.page.capped_limit());
        if options.include_trashed || self.scope()?.is_some() || !engine::eligible(query) || depth > ENGINE_DEPTH {
            return Ok(None);
        }
        let Some(current) = fulltext.current(self.conn) else {
            return Ok(None);
        };
        let Some((clause, marks)) = engine::build(query, current.fields) else {
            return Ok(None);
        };
        // tantivy's errors and panics (a debug assertion, say) leave the search to FTS5.
        let Ok(Ok(total)) = catch_unwind(AssertUnwindSafe(|| engine::count(&current, clause.as_ref()))) else {
            return Ok(None);
        };
        let offset = usize::try_from(options.page.offset).unwrap_or(usize::MAX);
        let limit = usize::try_from(options.page.capped_limit()).unwrap_or(0);
        if limit == 0 || options.page.offset >= total {
            return Ok(Some(PageOf::new(Vec::new(), total, options.page)));
        }
        let protection = self.protection()?;
        // The hits from the first down to past the page, in one order: score, then the newest note first. The
        // engine keeps, of hits scoring alike, those it met first, and which it meets first changes as its segments
        // merge; so the window grows until its last hit scores below the page's last, which puts every hit that
        // could belong on the page in it, and the page is cut from the window sorted. Pages of 60 equal notes came
        // back 50..1 then 60..51 before (found in use). Hits whose note is gone or in the trash in this transaction
        // (the index caught up from a newer one) are dropped, and the page refilled from further down.
        let depth = offset.saturating_add(limit);
        let engine_depth = usize::try_from(ENGINE_DEPTH).unwrap_or(usize::MAX);
        let mut want = depth.saturating_add(REFILL);
        let hits = loop {
            let top = catch_unwind(AssertUnwindSafe(|| engine::top(&current, clause.as_ref(), 0, want)));
            let Ok(Ok(mut top)) = top else {
                return Ok(None);
            };
            let exhausted = top.len() < want;
            top.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.1.cmp(&a.1)));
            let page_last = top.get(depth - 1).map(|t| t.0);
            if !exhausted && page_last.is_some() && page_last == top.last().map(|t| t.0) {
                // A run of equal scores reaches the window's end: some of it may be outside.
                if want >= engine_depth {
                    return Ok(None);
                }
                want = want.saturating_mul(2).min(engine_depth);
                continue;
            }
            // The whole window from the offset: the hits beyond the page refill it when some are gone.
            let page: Vec<(f32, i64)> = top.iter().skip(offset).copied().collect();
            let mut hits = self.engine_hits(&page, &marks, &protection)?;
            if hits.len() >= limit || exhausted {
                hits.truncate(limit);
                break hits;
            }
            if want >= engine_depth {
                return Ok(None);
            }
            want = want.saturating_mul(2).min(engine_depth);
        };
        fulltext.count_answer();
        Ok(Some(PageOf::new(hits, total, options.page)))
    }

    /// The notes of a page of engine hits as this transaction sees them, with snippets, in the order given.
    fn engine_hits(
        &self,
        top: &[(f32, i64)],
        marks: &engine::Marks,
        protection: &crate::protection::Protection,
    ) -> Result<Vec<SearchHit>> {
        let seqs = serde_json::to_string(&top.iter().map(|t| t.1).collect::<Vec<_>>())
            .map_err(|e| crate::Error::invalid(e.to_string()))?;
        let mut stmt = self.conn.prepare_cached(concat!(
            "SELECT ",
            crate::read::note_columns!(),
            ", substr(n.body, 1, 16384), length(n.body) > 16384 FROM notes n \
             WHERE n.seq IN (SELECT value FROM json_each(?1)) AND n.deleted IS NULL"
        ))?;
        let mut found = std::collections::HashMap::with_capacity(top.len());
        let mut rows = stmt.query([seqs])?;
        while let Some(row) = rows.next()? {
            let seq: i64 = row.get(0)?;
            let note = summary_from_row(row, protection)?;
            // The start of the body only, where the snippet is looked for: a page of long notes stays small.
            let body: String = row.get(11)?;
            let longer: bool = row.get(12)?;
            found.insert(seq, (note, body, longer));
        }
        let mut hits = Vec::with_capacity(found.len());
        for (score, seq) in top {
            if let Some((note, body, longer)) = found.remove(seq) {
                let snippet = if note.is_protected {
                    String::new()
                } else {
                    snippet(&body, longer, &note.title, marks)
                };
                hits.push(SearchHit {
                    note,
                    score: f64::from(*score),
                    snippet,
                    found_in: None,
                });
            }
        }
        Ok(hits)
    }
}

/// How many words a snippet shows, as FTS5's `snippet(..., 16)`.
const SNIPPET_WORDS: usize = 16;
/// Text between words longer than this is left out of a snippet.
const SNIPPET_GAP_BYTES: usize = 40;
/// How much of a body a snippet is looked for in.
const SNIPPET_SCAN_BYTES: usize = 64 * 1024;

/// Text around the best place in the body (else the title) where the query's words occur, each marked
/// `<mark>…</mark>`, `…` where the text goes on; the start of the body when neither holds them (a match in tags or
/// attachment text).
fn snippet(body: &str, longer: bool, title: &str, marks: &engine::Marks) -> String {
    let matches = |word: &str| {
        marks.iter().any(|(m, prefix)| {
            if *prefix {
                word.starts_with(m.as_str())
            } else {
                word == m
            }
        })
    };
    // The window is looked for in the first 64 KiB: a page of long notes stays quick.
    let mut head = body.len().min(SNIPPET_SCAN_BYTES);
    while !body.is_char_boundary(head) {
        head -= 1;
    }
    for (text, cut) in [(&body[..head], longer || head < body.len()), (title, false)] {
        let words = engine::words(text);
        let hit: Vec<bool> = words.iter().map(|w| matches(&w.0)).collect();
        if !hit.contains(&true) {
            continue;
        }
        // The window with the most distinct marked words, starting a little before a match.
        let mut best = (0, 0);
        for (i, _) in hit.iter().enumerate().filter(|(_, h)| **h) {
            let start = i.saturating_sub(2).min(words.len().saturating_sub(SNIPPET_WORDS));
            let end = (start + SNIPPET_WORDS).min(words.len());
            let distinct: std::collections::HashSet<&str> =
                (start..end).filter(|j| hit[*j]).map(|j| words[j].0.as_str()).collect();
            if distinct.len() > best.1 {
                best = (start, distinct.len());
            }
        }
        let start = best.0;
        let end = (start + SNIPPET_WORDS).min(words.len());
        let mut out = String::new();
        // What stands between words (punctuation, or a long token the index leaves out such as a URL or inline
        // data) is kept when short.
        let gap = |out: &mut String, from: usize, to: usize| match text.get(from..to) {
            Some(between) if between.len() <= SNIPPET_GAP_BYTES => out.push_str(between),
            _ => out.push_str(" … "),
        };
        let lead = words[start].1;
        if start > 0 || lead > SNIPPET_GAP_BYTES {
            out.push('…');
        } else {
            out.push_str(text.get(..lead).unwrap_or_default());
        }
        let mut at = lead;
        for j in start..end {
            let (_, from, to) = words[j];
            gap(&mut out, at, from);
            if hit[j] {
                out.push_str("<mark>");
                out.push_str(text.get(from..to).unwrap_or_default());
                out.push_str("</mark>");
            } else {
                out.push_str(text.get(from..to).unwrap_or_default());
            }
            at = to;
        }
        if end < words.len() {
            out.push('…');
        } else {
            let tail = text.get(at..).unwrap_or_default();
            if tail.len() <= SNIPPET_GAP_BYTES {
                out.push_str(tail);
            }
            if cut || tail.len() > SNIPPET_GAP_BYTES {
                out.push('…');
            }
        }
        return out;
    }
    match body.char_indices().nth(200) {
        Some((cut, _)) => format!("{}…", &body[..cut]),
        None if longer => format!("{body}…"),
        None => body.to_owned(),
    }
}

/// The SQL a query turns into. User text only ever travels as bound parameters, and text for FTS5 is quoted.
struct Plan {
    from_where: String,
    score: String,
    /// The FTS5 query whose matches the snippets show; `None` when the query has no words.
    fts: Option<String>,
    order: String,
    params: Vec<Value>,
}

impl Plan {
    /// `hidden` is [`Protection::sql_param`](crate::protection::Protection::sql_param): a `tag:` term matches only
    /// the notes whose tags the reader may see.
    fn build(query: &Query, options: SearchOptions, scope_roots: Option<&str>, hidden: Option<String>) -> Plan {
        let mut params = Vec::new();
        let positive: Vec<String> = query
            .terms
            .iter()
            .filter_map(|t| match t {
                Term::Text {
                    column,
                    text,
                    prefix,
                    negated: false,
                } => Some(fts_term(*column, text, *prefix)),
                _ => None,
            })
            .collect();
        let joiner = if query.any { " OR " } else { " AND " };
        let mut conditions = Vec::new();
        for term in &query.terms {
            let mut push = |sql: &str, values: Vec<Value>| {
                conditions.push(sql.to_owned());
                params_later(&mut params, values);
            };
            match term {
                Term::Text { negated: false, .. } => {}
                Term::Text {
                    column,
                    text,
                    prefix,
                    negated: true,
                } => push(
                    "n.seq NOT IN (SELECT rowid FROM notes_fts WHERE notes_fts MATCH ?)",
                    vec![Value::Text(fts_term(*column, text, *prefix))],
                ),
                Term::Tag { pattern, negated } => push(
                    &format!(
                        "n.id {}IN (SELECT nt.note_id FROM note_tags nt JOIN tags t ON t.id = nt.tag_id \
                         JOIN notes tn ON tn.id = nt.note_id WHERE t.name LIKE ? ESCAPE '\\' AND {})",
                        not(*negated),
                        crate::protection::content_visible_sql("tn", "?")
                    ),
                    vec![
                        Value::Text(like_pattern(pattern)),
                        hidden.clone().map_or(Value::Null, Value::Text),
                        hidden.clone().map_or(Value::Null, Value::Text),
                    ],
                ),
                // A notebook by title or by path (`Work/Projects`), with its sub-notebooks.
                Term::Notebook { pattern, negated } => {
                    let (tops, mut values) = match scope_roots {
                        Some(roots) => (
                            "id IN (SELECT value FROM json_each(?))",
                            vec![Value::Text(roots.to_owned())],
                        ),
                        None => ("parent_id = '_root'", Vec::new()),
                    };
                    values.extend([Value::Text(like_pattern(pattern)), Value::Text(like_pattern(pattern))]);
                    push(
                        &format!(
                            "n.notebook_id {}IN (WITH RECURSIVE paths(id, title, path) AS (SELECT id, title, title FROM \
                             notebooks WHERE {tops} UNION ALL SELECT nb.id, nb.title, p.path || '/' || \
                             nb.title FROM notebooks nb JOIN paths p ON nb.parent_id = p.id), \
                             sub(id) AS (SELECT id FROM paths WHERE title LIKE ? ESCAPE '\\' OR path LIKE ? ESCAPE '\\' \
                             UNION SELECT nb.id FROM notebooks nb JOIN sub ON nb.parent_id = sub.id) SELECT id FROM sub)",
                            not(*negated)
                        ),
                        values,
                    )
                }
                Term::Created { since, negated } => push(
                    if *negated { "n.created < ?" } else { "n.created >= ?" },
                    vec![Value::Integer(since.as_millis())],
                ),
                Term::Updated { since, negated } => push(
                    if *negated { "n.updated < ?" } else { "n.updated >= ?" },
                    vec![Value::Integer(since.as_millis())],
                ),
                Term::IsTodo(todo) => push(if *todo { "n.is_todo = 1" } else { "n.is_todo = 0" }, vec![]),
                Term::IsCompleted(done) => push(
                    if *done {
                        "(n.is_todo = 1 AND n.todo_completed IS NOT NULL)"
                    } else {
                        "(n.is_todo = 1 AND n.todo_completed IS NULL)"
                    },
                    vec![],
                ),
            }
        }
        let trash = if options.include_trashed {
            "1"
        } else {
            "n.deleted IS NULL"
        };
        let filters = if conditions.is_empty() {
            None
        } else {
            Some(conditions.join(joiner))
        };

        if positive.is_empty() {
            return Plan {
                from_where: format!(
                    "FROM notes n WHERE {trash} AND ({})",
                    filters.unwrap_or_else(|| "1".into())
                ),
                score: "0.0".into(),
                fts: None,
                order: "n.updated DESC, n.seq DESC".into(),
                params,
            };
        }
        let fts = positive.join(joiner);
        let fts_query = Value::Text(fts.clone());
        if query.any && filters.is_some() {
            // OR across words and filters: a note may match a filter without matching any word.
            params.insert(0, fts_query);
            return Plan {
                from_where: format!(
                    "FROM notes n LEFT JOIN (SELECT rowid, {BM25} AS rank_score FROM notes_fts \
                     WHERE notes_fts MATCH ?) f ON f.rowid = n.seq WHERE {trash} AND (f.rowid IS NOT NULL OR {})",
                    filters.unwrap_or_default()
                ),
                score: "coalesce(-f.rank_score, 0.0)".into(),
                fts: Some(fts),
                order: "f.rank_score IS NULL, f.rank_score, n.updated DESC, n.seq DESC".into(),
                params,
            };
        }
        params.insert(0, fts_query);
        Plan {
            from_where: format!(
                "FROM notes_fts JOIN notes n ON n.seq = notes_fts.rowid WHERE notes_fts MATCH ? AND {trash}{}",
                filters.map(|f| format!(" AND ({f})")).unwrap_or_default()
            ),
            score: format!("-{BM25}"),
            fts: Some(fts),
            order: format!("{BM25}, n.updated DESC, n.seq DESC"),
            params,
        }
    }
}

fn params_later(params: &mut Vec<Value>, values: Vec<Value>) {
    params.extend(values);
}

fn not(negated: bool) -> &'static str {
    if negated { "NOT " } else { "" }
}

/// One FTS5 term: the text double-quoted (so no character is FTS5 syntax), an optional column filter and `*`.
fn fts_term(column: Option<Column>, text: &str, prefix: bool) -> String {
    let quoted = format!("\"{}\"", text.replace('\0', "").replace('"', "\"\""));
    let star = if prefix { "*" } else { "" };
    match column {
        Some(Column::Title) => format!("title : {quoted}{star}"),
        Some(Column::Body) => format!("body : {quoted}{star}"),
        None => format!("{quoted}{star}"),
    }
}

/// A `LIKE` pattern that matches the text literally, but for `*`, which matches anything.
fn like_pattern(text: &str) -> String {
    let mut pattern = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '%' | '_' | '\\' => {
                pattern.push('\\');
                pattern.push(c);
            }
            '*' => pattern.push('%'),
            c => pattern.push(c),
        }
    }
    pattern
}

#[cfg(test)]
mod tests {
    use super::snippet;

    fn marks(words: &[(&str, bool)]) -> super::engine::Marks {
        words.iter().map(|(w, p)| ((*w).to_owned(), *p)).collect()
    }

    #[test]
    fn snippets_mark_the_best_window_and_say_where_text_goes_on() {
        let body = "One two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen \
                    seventeen Zebra eighteen café nineteen twenty.";
        assert_eq!(
            snippet(body, false, "Title", &marks(&[("zebra", false), ("cafe", false)])),
            "…seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen <mark>Zebra</mark> \
             eighteen <mark>café</mark> nineteen twenty."
        );
        assert_eq!(
            snippet("- Buy milk, eggs.", false, "Groceries", &marks(&[("mil", true)])),
            "- Buy <mark>milk</mark>, eggs."
        );
        // Not in the body: the title; in neither (a tag matched): the start of the body.
        assert_eq!(
            snippet("body", false, "Budget plan", &marks(&[("budget", false)])),
            "<mark>Budget</mark> plan"
        );
        assert_eq!(
            snippet("just text", false, "Title", &marks(&[("tagged", false)])),
            "just text"
        );
        // A match past the first 64 KiB is not looked for; a window that ends at the cut says the body goes on.
        let long = format!("{} needle", "word ".repeat(20_000));
        assert_eq!(
            snippet(&long, false, "Title", &marks(&[("needle", false)])),
            format!("{}…", &long[..200])
        );
        let near_cut = format!("{}needle end", "x ".repeat(super::SNIPPET_SCAN_BYTES / 2 - 4));
        let at_cut = snippet(&near_cut, false, "T", &marks(&[("needle", false)]));
        assert!(at_cut.ends_with("<mark>needle</mark> e…"), "{at_cut}");
        // Long runs the index leaves out (inline data, long URLs) do not fill a snippet.
        let data = format!("see {} the needle here", "A".repeat(5_000));
        assert_eq!(
            snippet(&data, false, "T", &marks(&[("needle", false)])),
            "see … the <mark>needle</mark> here"
        );
        let lead = format!("{} needle", "B".repeat(500));
        assert_eq!(
            snippet(&lead, false, "T", &marks(&[("needle", false)])),
            "…<mark>needle</mark>"
        );
    }
}
