//! The full-text engine for plain word searches: a tantivy index of what `notes_fts` holds, kept beside the
//! workspace file (`NAME.search/`, in memory for an in-memory workspace).
//!
//! FTS5 scores every matching row and counts them all again, so a word found in most notes costs in proportion to the
//! workspace (0.5 s at 100,000 notes, 5 s at a million); tantivy's top-k skips the documents that cannot reach the
//! page (figures in docs/performance.md, "Full-text search"). The SQLite file stays the source of truth:
//!
//! - The index is derived: every change to a note's full-text entry (or to whether it is in the trash) appends its
//!   `seq` to `search_log` in the same transaction, and before each search the engine re-reads the entries logged
//!   since the last one it took in, from `notes_fts` as the reader's transaction sees it. So a write is visible to the
//!   next search, and what the index holds of a protected note is what `notes_fts` holds: its title. An index that
//!   is missing, damaged, of another format, made for another file, or older than the log's horizon is built again
//!   (`Workspace::rebuild_search_index` does it on request).
//! - Every hit is read back from `notes`: a note trashed since the index last caught up is dropped and the page
//!   refilled, and protection decides about the snippet there.
//!
//! Only one process can write an index; a second process on the same workspace (the CLI beside `quire serve`), a
//! write transaction (its log entries may roll back), a scoped handle, a search of the trash and any query with
//! filters (`tag:`, `notebook:`, dates, types) use FTS5, which answers all of them.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use rusqlite::Connection;
use tantivy::collector::TopDocs;
use tantivy::directory::MmapDirectory;
use tantivy::query::{BooleanQuery, BoostQuery, Occur, PhraseQuery, Query as Clause, RegexQuery, TermQuery};
use tantivy::schema::{FAST, Field, INDEXED, IndexRecordOption, Schema, TextFieldIndexing, TextOptions};
use tantivy::tokenizer::{
    AsciiFoldingFilter, LowerCaser, RemoveLongFilter, SimpleTokenizer, TextAnalyzer, TokenStream,
};
use tantivy::{DocAddress, Index, IndexReader, IndexWriter, ReloadPolicy, Searcher, TantivyDocument, Term as Key};

use super::query::{Column, Query, Term};

mod sealing;

/// The layout of the index: a different one is built again rather than read.
const FORMAT: u32 = 1;
/// The field boosts, FTS5's bm25 column weights: title, body, tags, attachment text.
const WEIGHTS: [f32; 4] = [10.0, 1.0, 4.0, 0.5];
const FIELDS: [&str; 4] = ["title", "body", "tags", "attachments"];
const TOKENIZER: &str = "quire";
/// quire's lock file in the index folder.
const LOCK_FILE: &str = "quire.lock";
/// The indexing buffer of the one writer thread.
const WRITER_MEMORY: usize = 48 << 20;
/// After the index could not be opened (another process holds it), how long searches use FTS5 before trying again.
const RETRY_AFTER: Duration = Duration::from_secs(10);

/// Whole builds of an index for more notes than this run in a background thread, FTS5 answering meanwhile (a
/// million notes take over a minute); smaller ones run before the search that needs them (under a second).
pub(crate) const BACKGROUND_ABOVE: u64 = 20_000;

/// The engine of one workspace, shared by the clones of its handle.
pub(crate) struct FullText {
    /// The index directory; `None` for an in-memory workspace.
    dir: Option<PathBuf>,
    state: Mutex<State>,
    /// Connections for a build in the background; `None`: every build runs before its search.
    pool: Option<r2d2::Pool<r2d2_sqlite::SqliteConnectionManager>>,
    /// Whole builds above this many notes run in the background.
    background_above: AtomicU64,
    /// A background build is running: searches use FTS5 until it is done.
    building: AtomicBool,
    /// Whether whole builds above `background_above` may start at all (off in short-lived processes such as a CLI
    /// command, which would exit before the build ends: FTS5 answers there).
    background: AtomicBool,
    /// How many searches the index answered (for tests and diagnostics).
    answered: AtomicU64,
}

enum State {
    Closed,
    Open(Box<Engine>),
    /// Could not be opened at this time; FTS5 answers until then.
    Failed(Instant),
}

struct Engine {
    /// quire's lock on the folder (`None` in memory).
    lock: Option<std::fs::File>,
    /// Whether this process has caught the index up at least once: until then, an index ahead of the file (a file
    /// put back from a copy) cannot be told from one ahead of an older snapshot, and is built again.
    followed: bool,
    reader: IndexReader,
    writer: IndexWriter,
    fields: Fields,
    /// The workspace file's `search_state.key` and the last `search_log` id this index holds.
    key: String,
    last: i64,
}

/// The fields of the index.
#[derive(Clone, Copy)]
pub(crate) struct Fields {
    text: [Field; 4],
    seq: Field,
}

/// A failure of the engine: the search falls back to FTS5, a rebuild reports it.
#[derive(Debug)]
pub(crate) struct EngineError(pub(crate) String);

impl<E: std::fmt::Display> From<E> for EngineError {
    fn from(e: E) -> EngineError {
        EngineError(e.to_string())
    }
}

type Outcome<T> = std::result::Result<T, EngineError>;

/// What a catch-up found.
enum CaughtUp {
    /// The index holds exactly what the transaction sees.
    Yes,
    /// The index holds changes the transaction does not see yet.
    Ahead,
}

/// A searcher that has taken in every change the reader's transaction sees.
pub(crate) struct Current {
    pub(crate) searcher: Searcher,
    pub(crate) fields: Fields,
}

impl FullText {
    /// The engine of the workspace file at `path` (its index in `path` + `.search`), or of an in-memory one; `pool`
    /// gives connections to a build in the background.
    pub(crate) fn new(path: Option<&Path>, pool: Option<r2d2::Pool<r2d2_sqlite::SqliteConnectionManager>>) -> FullText {
        FullText {
            dir: path.map(|p| {
                let mut dir = p.as_os_str().to_owned();
                dir.push(".search");
                PathBuf::from(dir)
            }),
            state: Mutex::new(State::Closed),
            pool,
            background_above: AtomicU64::new(BACKGROUND_ABOVE),
            building: AtomicBool::new(false),
            background: AtomicBool::new(true),
            answered: AtomicU64::new(0),
        }
    }

    /// Whether large whole builds may start in the background (see the field).
    pub(crate) fn set_background(&self, allowed: bool) {
        self.background.store(allowed, Ordering::Relaxed);
    }

    /// Counts a search the index answered.
    pub(crate) fn count_answer(&self) {
        self.answered.fetch_add(1, Ordering::Relaxed);
    }

    /// How many searches the index answered.
    pub(crate) fn answered(&self) -> u64 {
        self.answered.load(Ordering::Relaxed)
    }

    /// Sets how many notes a whole build must exceed to run in the background.
    pub(crate) fn set_background_above(&self, notes: u64) {
        self.background_above.store(notes, Ordering::Relaxed);
    }

    /// Whether a background build is running.
    pub(crate) fn is_building(&self) -> bool {
        self.building.load(Ordering::Acquire)
    }

    /// The index directory, for messages.
    pub(crate) fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// A searcher brought up to date with what `conn`'s transaction sees, or `None` when the engine cannot be used
    /// now (FTS5 answers then).
    pub(crate) fn current(self: &Arc<Self>, conn: &Connection) -> Option<Current> {
        if self.is_building() {
            return None;
        }
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        // A build may have started while this search waited for the lock.
        if self.is_building() {
            return None;
        }
        if let State::Failed(at) = *state
            && at.elapsed() < RETRY_AFTER
        {
            return None;
        }
        if !matches!(*state, State::Open(_)) {
            match self.open() {
                Ok(engine) => *state = State::Open(Box::new(engine)),
                Err(_) => {
                    *state = State::Failed(Instant::now());
                    return None;
                }
            }
        }
        let State::Open(engine) = &mut *state else {
            return None;
        };
        let (_, _, whole) = engine.position(conn).ok()?;
        if whole && notes_at_most(conn).ok()? > self.background_above.load(Ordering::Relaxed) {
            let pool = self.pool.clone().filter(|_| self.background.load(Ordering::Relaxed))?;
            self.building.store(true, Ordering::Release);
            drop(state);
            let this = Arc::clone(self);
            let spawned = std::thread::Builder::new()
                .name("quire-search-index".into())
                .spawn(move || this.build_in_background(&pool));
            if spawned.is_err() {
                self.building.store(false, Ordering::Release);
            }
            return None;
        }
        // A panic inside tantivy (a debug assertion, say) fails the engine for a while rather than the search.
        match catch_unwind(AssertUnwindSafe(|| engine.catch_up(conn, false))) {
            Ok(Ok(CaughtUp::Yes)) => Some(Current {
                searcher: engine.reader.searcher(),
                fields: engine.fields,
            }),
            // The index holds changes this transaction does not see yet (another search caught up from a newer
            // snapshot): FTS5 answers this one, so that no hit stands for a note as it is after this snapshot.
            Ok(Ok(CaughtUp::Ahead)) => None,
            Ok(Err(_)) | Err(_) => {
                // Dropping the engine releases its writer; the next search opens (and if need be rebuilds) it again.
                *state = State::Failed(Instant::now());
                None
            }
        }
    }

    fn build_in_background(&self, pool: &r2d2::Pool<r2d2_sqlite::SqliteConnectionManager>) {
        let built = (|| -> Outcome<()> {
            let mut conn = pool.get()?;
            let tx = conn.transaction()?;
            let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            if let State::Open(engine) = &mut *state {
                match catch_unwind(AssertUnwindSafe(|| engine.catch_up(&tx, false))) {
                    Ok(Ok(_)) => {}
                    Ok(Err(e)) => {
                        *state = State::Failed(Instant::now());
                        return Err(e);
                    }
                    Err(_) => {
                        *state = State::Failed(Instant::now());
                        return Err(EngineError("the index build panicked".into()));
                    }
                }
            }
            Ok(())
        })();
        // A failure leaves the engine failed for a while; searches use FTS5 and try again later.
        drop(built);
        self.building.store(false, Ordering::Release);
    }

    /// Builds the index again from `notes_fts`; returns how many notes it holds.
    pub(crate) fn rebuild(&self, conn: &Connection) -> Outcome<u64> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if !matches!(*state, State::Open(_)) {
            *state = State::Open(Box::new(self.open()?));
        }
        let State::Open(engine) = &mut *state else {
            return Err(EngineError("the search index is not open".into()));
        };
        engine.catch_up(conn, true)?;
        Ok(engine.reader.searcher().num_docs())
    }

    fn open(&self) -> Outcome<Engine> {
        let Some(dir) = &self.dir else {
            let (schema, fields) = schema();
            return Engine::start(Index::create_in_ram(schema), fields, None);
        };
        crate::files::private_dir(dir)?;
        // quire's own lock, taken before anything in the folder is read or removed, and held while the engine lives:
        // a second process never touches the index of the first.
        let Some(lock) = take_folder_lock(dir)? else {
            return Err(EngineError(
                "another quire process (quire serve, mcp or chat) holds it and keeps it up to date; searches here \
                 use SQLite's full-text index meanwhile"
                    .into(),
            ));
        };
        let opened = catch_unwind(AssertUnwindSafe(|| -> Outcome<Engine> {
            let (schema, fields) = schema();
            let index = Index::open(MmapDirectory::open(dir)?)?;
            if index.schema() != schema {
                return Err(EngineError("another format".into()));
            }
            Engine::start(index, fields, None)
        }));
        match opened {
            Ok(Ok(mut engine)) => {
                engine.lock = Some(lock);
                Ok(engine)
            }
            Ok(Err(_)) | Err(_) => {
                // Missing, of another format, or damaged (a segment file as much as meta.json): it is derived, so it
                // is made again. Only what tantivy wrote is removed, never anything else the user put there.
                for entry in std::fs::read_dir(dir)?.flatten() {
                    let path = entry.path();
                    if path.is_file() && is_index_file(&path) {
                        std::fs::remove_file(&path)?;
                    }
                }
                let (schema, fields) = schema();
                Engine::start(Index::create_in_dir(dir, schema)?, fields, Some(lock))
            }
        }
    }
}

/// quire's own lock on the index folder, when no other process holds it.
fn take_folder_lock(dir: &Path) -> Outcome<Option<std::fs::File>> {
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.join(LOCK_FILE))?;
    Ok(lock.try_lock().is_ok().then_some(lock))
}

fn is_index_file(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    name == "meta.json"
        || name == ".managed.json"
        || name.contains('.') && {
            // Segment files: a 32-digit hex name and a component extension.
            let stem = name.split('.').next().unwrap_or_default();
            stem.len() == 32 && stem.chars().all(|c| c.is_ascii_hexdigit())
        }
}

/// What a commit of the index records: its format, the file it follows and how far.
#[derive(Default, serde::Serialize, serde::Deserialize)]
struct Mark {
    format: u32,
    key: String,
    last: i64,
}

fn schema() -> (Schema, Fields) {
    let mut builder = Schema::builder();
    let text = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(TOKENIZER)
            .set_index_option(IndexRecordOption::WithFreqsAndPositions),
    );
    let text = FIELDS.map(|name| builder.add_text_field(name, text.clone()));
    let seq = builder.add_u64_field("seq", INDEXED | FAST);
    (builder.build(), Fields { text, seq })
}

/// Close to FTS5's `unicode61 remove_diacritics 2`: words are runs of letters and digits, case and accents folded.
pub(crate) fn analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(100))
        .filter(LowerCaser)
        .filter(AsciiFoldingFilter)
        .build()
}

/// The words of `text` as the index keeps them, with their byte ranges in `text`.
pub(crate) fn words(text: &str) -> Vec<(String, usize, usize)> {
    let mut analyzer = analyzer();
    let mut stream = analyzer.token_stream(text);
    let mut words = Vec::new();
    while stream.advance() {
        let token = stream.token();
        words.push((token.text.clone(), token.offset_from, token.offset_to));
    }
    words
}

impl Engine {
    fn start(index: Index, fields: Fields, lock: Option<std::fs::File>) -> Outcome<Engine> {
        index.tokenizers().register(TOKENIZER, analyzer());
        let writer = index.writer_with_num_threads(1, WRITER_MEMORY)?;
        let reader = index.reader_builder().reload_policy(ReloadPolicy::Manual).try_into()?;
        let mark = index
            .load_metas()?
            .payload
            .and_then(|p| serde_json::from_str::<Mark>(&p).ok())
            .filter(|m| m.format == FORMAT)
            .unwrap_or_default();
        Ok(Engine {
            lock,
            followed: false,
            reader,
            writer,
            fields,
            key: mark.key,
            last: mark.last,
        })
    }

    /// The file's key, the newest log id, and whether the next catch-up must build the whole index: the index was
    /// made for another file, is behind the log's horizon, or (before this process followed it) is ahead of the file.
    fn position(&self, conn: &Connection) -> Outcome<(String, i64, bool)> {
        let (key, horizon): (String, i64) = conn
            .prepare_cached("SELECT key, horizon FROM search_state WHERE id = 1")?
            .query_row([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        let newest: i64 = conn
            .prepare_cached("SELECT coalesce(max(id), 0) FROM search_log")?
            .query_row([], |r| r.get(0))?;
        let whole = key != self.key || self.last < horizon || !self.followed && self.last > newest;
        Ok((key, newest, whole))
    }

    /// Takes in what `search_log` lists since `last`, or everything in `notes_fts` when the index cannot follow the
    /// log (or `rebuild`).
    fn catch_up(&mut self, conn: &Connection, rebuild: bool) -> Outcome<CaughtUp> {
        let (key, newest, whole) = self.position(conn)?;
        let whole = rebuild || whole;
        if !whole && self.last == newest {
            self.followed = true;
            return Ok(CaughtUp::Yes);
        }
        if !whole && self.last > newest {
            return Ok(CaughtUp::Ahead);
        }
        let outcome = if whole {
            self.build_all(conn)
        } else {
            self.take_in(conn, newest)
        };
        let outcome = outcome.and_then(|()| {
            let mark = serde_json::to_string(&Mark {
                format: FORMAT,
                key: key.clone(),
                last: newest,
            })?;
            let mut commit = self.writer.prepare_commit()?;
            commit.set_payload(&mark);
            commit.commit()?;
            self.reader.reload()?;
            Ok(())
        });
        match outcome {
            Ok(()) => {
                self.key = key;
                self.last = newest;
                self.followed = true;
                Ok(CaughtUp::Yes)
            }
            Err(e) => {
                // Nothing half-taken-in stays: the pending documents are dropped with the rest of this engine.
                let _ = self.writer.rollback();
                Err(e)
            }
        }
    }

    fn build_all(&mut self, conn: &Connection) -> Outcome<()> {
        self.writer.delete_all_documents()?;
        let mut stmt = conn.prepare(
            "SELECT f.rowid, f.title, f.body, f.tags, f.attachments FROM notes_fts f \
             JOIN notes n ON n.seq = f.rowid WHERE n.deleted IS NULL",
        )?;
        let mut rows = stmt.query([])?;
        while let Some(row) = rows.next()? {
            let seq: i64 = row.get(0)?;
            self.add(seq, row)?;
        }
        Ok(())
    }

    fn take_in(&mut self, conn: &Connection, newest: i64) -> Outcome<()> {
        let mut changed = conn
            .prepare_cached("SELECT DISTINCT note_seq FROM search_log WHERE id > ?1 AND id <= ?2 ORDER BY note_seq")?;
        let seqs = changed
            .query_map([self.last, newest], |r| r.get::<_, i64>(0))?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        let mut entry = conn.prepare_cached(
            "SELECT f.rowid, f.title, f.body, f.tags, f.attachments FROM notes_fts f \
             JOIN notes n ON n.seq = f.rowid WHERE f.rowid = ?1 AND n.deleted IS NULL",
        )?;
        for seq in seqs {
            self.writer
                .delete_term(Key::from_field_u64(self.fields.seq, as_u64(seq)));
            let mut rows = entry.query([seq])?;
            if let Some(row) = rows.next()? {
                self.add(seq, row)?;
            }
        }
        Ok(())
    }

    fn add(&mut self, seq: i64, row: &rusqlite::Row<'_>) -> Outcome<()> {
        let mut doc = TantivyDocument::default();
        doc.add_u64(self.fields.seq, as_u64(seq));
        for (i, field) in self.fields.text.iter().enumerate() {
            if let Some(text) = row.get::<_, Option<String>>(i + 1)?
                && !text.is_empty()
            {
                doc.add_text(*field, text);
            }
        }
        self.writer.add_document(doc)?;
        Ok(())
    }
}

/// An upper bound of the number of notes (the highest `seq`), read from the index of `notes` at once.
fn notes_at_most(conn: &Connection) -> Outcome<u64> {
    let seq: i64 = conn
        .prepare_cached("SELECT coalesce(max(seq), 0) FROM notes")?
        .query_row([], |r| r.get(0))?;
    Ok(as_u64(seq))
}

fn as_u64(seq: i64) -> u64 {
    u64::try_from(seq).unwrap_or(0)
}

/// The words a hit's snippet marks: each as the index keeps it, and whether it is a prefix.
pub(crate) type Marks = Vec<(String, bool)>;

/// The tantivy query for a query of words only (see [`eligible`]), and the words to mark in snippets.
/// `None` when a term has no word the index keeps (FTS5 answers it then).
pub(crate) fn build(query: &Query, fields: Fields) -> Option<(Box<dyn Clause>, Marks)> {
    let mut clauses: Vec<(Occur, Box<dyn Clause>)> = Vec::new();
    let mut marks = Vec::new();
    for term in &query.terms {
        let Term::Text {
            column,
            text,
            prefix,
            negated,
        } = term
        else {
            return None;
        };
        // A run of letters and digits the index leaves out (100 bytes or more) would shift a phrase or vanish from
        // the query: FTS5 answers such a query.
        if text.split(|c: char| !c.is_alphanumeric()).any(|run| run.len() >= 100) {
            return None;
        }
        let tokens: Vec<String> = words(text).into_iter().map(|w| w.0).collect();
        // Left to FTS5: a phrase ending in a prefix (`next-ste*`: tantivy's phrase-prefix query expands the prefix to
        // a capped number of words), and an excluded phrase (tantivy 0.27 seeks a phrase backwards inside an
        // exclusion, which trips its debug assertion; quire-core's property test caught it against FTS5).
        if tokens.is_empty() || tokens.len() > 1 && (*prefix || *negated) {
            return None;
        }
        let targets: Vec<(Field, f32)> = match column {
            None => fields.text.iter().copied().zip(WEIGHTS).collect(),
            Some(Column::Title) => vec![(fields.text[0], WEIGHTS[0])],
            Some(Column::Body) => vec![(fields.text[1], WEIGHTS[1])],
        };
        let mut per_field: Vec<(Occur, Box<dyn Clause>)> = Vec::new();
        for (field, weight) in targets {
            per_field.push((
                Occur::Should,
                Box::new(BoostQuery::new(matcher(field, &tokens, *prefix), weight)),
            ));
        }
        let occur = match (negated, query.any) {
            (true, _) => Occur::MustNot,
            (false, true) => Occur::Should,
            (false, false) => Occur::Must,
        };
        if !negated {
            let last = tokens.len() - 1;
            marks.extend(
                tokens
                    .iter()
                    .enumerate()
                    .map(|(i, t)| (t.clone(), *prefix && i == last)),
            );
        }
        clauses.push((occur, Box::new(BooleanQuery::new(per_field))));
    }
    Some((Box::new(BooleanQuery::new(clauses)), marks))
}

/// One text term in one field: a word, a prefix or a phrase.
fn matcher(field: Field, tokens: &[String], prefix: bool) -> Box<dyn Clause> {
    let keys: Vec<Key> = tokens.iter().map(|t| Key::from_field_text(field, t)).collect();
    match (keys.len(), prefix) {
        (1, false) => Box::new(TermQuery::new(keys[0].clone(), IndexRecordOption::WithFreqs)),
        (1, true) => {
            // The word's characters are letters and digits, but escape anything else all the same.
            let mut pattern = String::new();
            for c in tokens[0].chars() {
                if !c.is_alphanumeric() {
                    pattern.push('\\');
                }
                pattern.push(c);
            }
            pattern.push_str(".*");
            match RegexQuery::from_pattern(&pattern, field) {
                Ok(q) => Box::new(q),
                Err(_) => Box::new(TermQuery::new(keys[0].clone(), IndexRecordOption::WithFreqs)),
            }
        }
        _ => Box::new(PhraseQuery::new(keys)),
    }
}

/// Whether the engine can answer this query alone: words, phrases and prefixes (at least one not excluded), no
/// filters, and no excluded word in an `any:1` query (whose meaning FTS5's plan defines).
pub(crate) fn eligible(query: &Query) -> bool {
    let mut positive = false;
    for term in &query.terms {
        match term {
            Term::Text { negated: false, .. } => positive = true,
            Term::Text { negated: true, .. } if !query.any => {}
            _ => return false,
        }
    }
    positive
}

/// The notes' `seq` of a page of hits, with their scores, best first.
pub(crate) fn top(current: &Current, query: &dyn Clause, offset: usize, limit: usize) -> Outcome<Vec<(f32, i64)>> {
    let hits: Vec<(f32, DocAddress)> = current.searcher.search(
        query,
        &TopDocs::with_limit(limit.max(1)).and_offset(offset).order_by_score(),
    )?;
    let mut out = Vec::with_capacity(hits.len());
    let mut column: Option<(u32, tantivy::columnar::Column<u64>)> = None;
    for (score, address) in hits {
        if column.as_ref().is_none_or(|(ord, _)| *ord != address.segment_ord) {
            let reader = current.searcher.segment_reader(address.segment_ord);
            column = Some((address.segment_ord, reader.fast_fields().u64("seq")?));
        }
        let seq = column
            .as_ref()
            .and_then(|(_, c)| c.first(address.doc_id))
            .and_then(|s| i64::try_from(s).ok());
        if let Some(seq) = seq {
            out.push((score, seq));
        }
    }
    Ok(out)
}

/// How many notes match.
pub(crate) fn count(current: &Current, query: &dyn Clause) -> Outcome<u64> {
    Ok(query.count(&current.searcher)? as u64)
}
