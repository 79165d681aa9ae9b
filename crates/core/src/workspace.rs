//! Opening a workspace file, the connection pool, and the read and write transactions.

use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use r2d2_sqlite::SqliteConnectionManager;
use rusqlite::{Connection, TransactionBehavior};

use crate::entity::Actor;
use crate::error::{Error, Result};
use crate::read::Reader;
use crate::schema;
use crate::seal::Unlocked;
use crate::search::FullText;
use crate::semantic::{EmbedError, Embedder, EmbedderSlot, HashedNgramEmbedder, VectorCache};
use crate::write::Writer;

/// How long a write waits for another writer before giving up. Writers queue on SQLite's lock;
/// a write transaction is short, so this only runs out when something holds the lock abnormally long.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// Connections in the pool of a file-backed workspace: readers run in parallel up to this number.
const FILE_POOL_SIZE: u32 = 8;

/// A quire workspace: one SQLite file (or an in-memory database) with its connection pool.
///
/// All access goes through [`Workspace::read`] and [`Workspace::write`], which run a synchronous closure
/// inside one transaction. Cloning is cheap and shares the pool.
///
/// ```
/// use quire_core::{Actor, NewNote, Workspace};
///
/// let ws = Workspace::open_in_memory()?;
/// let note = ws.write(&Actor::User, |w| w.create_note(NewNote::new("Groceries", "- milk")))?;
/// let again = ws.read(&Actor::User, |r| r.note(&note.summary.id))?;
/// assert_eq!(again.body, "- milk");
/// # Ok::<(), quire_core::Error>(())
/// ```
#[derive(Clone)]
pub struct Workspace {
    pub(crate) pool: r2d2::Pool<SqliteConnectionManager>,
    path: Option<PathBuf>,
    pub(crate) embedder: Arc<EmbedderSlot>,
    /// The in-memory copy of the semantic index, shared by clones (it follows the file by generation).
    pub(crate) vectors: Arc<VectorCache>,
    /// What this handle may reach; `None` for the whole workspace.
    pub(crate) scope: Option<Arc<crate::Scope>>,
    /// The full-text engine for plain word searches, its index beside the file (see `search::engine`).
    fulltext: Arc<FullText>,
    /// Set on a staged handle ([`Workspace::staged`]): what its writes staged and its reads showed.
    pub(crate) staging: Option<Arc<std::sync::Mutex<crate::review::StagingReport>>>,
    /// The one news watcher of this workspace (see `news`), shared by clones.
    pub(crate) news: Arc<crate::news::NewsFeed>,
    /// The read ledger of this file, shared by clones (see `ledger`).
    pub(crate) ledger: Arc<crate::ledger::Ledger>,
}

impl std::fmt::Debug for Workspace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Workspace")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl Workspace {
    /// Opens the workspace at `path`, creating the file and its parent directory on first use.
    ///
    /// A file that is not a quire workspace, or one written by a newer schema version, is refused with
    /// [`Error::NotAWorkspace`] or [`Error::TooNew`] and left exactly as it was.
    pub fn open(path: impl AsRef<Path>) -> Result<Workspace> {
        let path = path.as_ref().to_path_buf();
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            crate::files::private_dir(parent).map_err(|source| Error::Io {
                context: format!("cannot create the directory {}", parent.display()),
                source,
            })?;
        }
        schema::check_existing_file(&path)?;
        crate::files::create_private_file(&path).map_err(|source| Error::Io {
            context: format!("cannot create the workspace file {}", path.display()),
            source,
        })?;
        // Open one connection first, so that a path SQLite cannot use fails now with its reason, rather than after
        // the pool's 30-second wait for connections that never come.
        Connection::open(&path).map_err(|e| Error::Io {
            context: format!("cannot open the workspace file {}", path.display()),
            source: std::io::Error::other(e.to_string()),
        })?;
        let manager = SqliteConnectionManager::file(&path).with_init(|c| configure(c, true));
        let pool = r2d2::Pool::builder()
            .max_size(FILE_POOL_SIZE)
            .min_idle(Some(1))
            .test_on_check_out(false)
            .build(manager)?;
        let fulltext = Arc::new(FullText::new(Some(&path), Some(pool.clone())));
        let ws = Workspace {
            ledger: crate::ledger::Ledger::new(pool.clone()),
            pool,
            fulltext,
            path: Some(path),
            embedder: Arc::new(EmbedderSlot::ready(Arc::new(HashedNgramEmbedder))),
            vectors: Arc::default(),
            scope: None,
            staging: None,
            news: Arc::default(),
        };
        ws.migrate()?;
        ws.purge_wal_if_sealed();
        Ok(ws)
    }

    /// A process that sealed notes and was killed before it cleaned up left the pages as they were before in the
    /// WAL, and maybe the sealed words in the word index: a workspace with a passphrase starts with its WAL
    /// checkpointed and emptied, and a word index made for another key of the file removed. Skipped, without
    /// waiting, when another process is using them (it cleans up itself; the next open tries again).
    fn purge_wal_if_sealed(&self) {
        let Ok(conn) = self.pool.get() else { return };
        let key: Option<String> = conn
            .query_row(
                "SELECT s.key FROM search_state s WHERE s.id = 1 AND EXISTS (SELECT 1 FROM lock)",
                [],
                |r| r.get(0),
            )
            .ok();
        let Some(key) = key else { return };
        if conn.busy_timeout(Duration::ZERO).is_ok() {
            let _ = conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| r.get::<_, i64>(0));
            let _ = conn.busy_timeout(BUSY_TIMEOUT);
        }
        let _ = self.fulltext.discard_if_stale(&key);
    }

    /// Opens a fresh workspace that lives in memory and vanishes when the last clone is dropped.
    pub fn open_in_memory() -> Result<Workspace> {
        let manager = SqliteConnectionManager::memory().with_init(|c| configure(c, false));
        // One connection: every connection to `:memory:` would be a database of its own. It is kept for the
        // pool's whole life, since closing it would drop the data.
        let pool = r2d2::Pool::builder()
            .max_size(1)
            .idle_timeout(None)
            .max_lifetime(None)
            .test_on_check_out(false)
            .build(manager)?;
        let ws = Workspace {
            ledger: crate::ledger::Ledger::new(pool.clone()),
            pool,
            path: None,
            embedder: Arc::new(EmbedderSlot::ready(Arc::new(HashedNgramEmbedder))),
            vectors: Arc::default(),
            scope: None,
            staging: None,
            news: Arc::default(),
            fulltext: Arc::new(FullText::new(None, None)),
        };
        ws.migrate()?;
        Ok(ws)
    }

    /// The same workspace with another embedder for semantic search (the default is the file-free
    /// [`HashedNgramEmbedder`]). Vectors are kept per embedder, so switching re-indexes rather than mixing.
    pub fn with_embedder(mut self, embedder: Arc<dyn Embedder>) -> Workspace {
        self.embedder = Arc::new(EmbedderSlot::ready(embedder));
        self
    }

    /// The same workspace with an embedder made by `loader` on first use (the first semantic search or indexing
    /// round), so that opening a workspace never waits for a model, and a model that cannot be loaded fails only
    /// semantic search: its message is kept and returned as [`Error::EmbedderUnavailable`] by every later use.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use quire_core::{Actor, Embedder, Workspace};
    ///
    /// let ws = Workspace::open_in_memory()?.with_embedder_loader(|| Err("the model folder is missing".into()));
    /// assert_eq!(ws.read(&Actor::User, |r| r.notebooks())?.len(), 1, "everything else works");
    /// let error = ws.embedder().err().map(|e| e.to_string()).unwrap_or_default();
    /// assert!(error.contains("the model folder is missing"));
    /// # Ok::<(), quire_core::Error>(())
    /// ```
    pub fn with_embedder_loader(
        mut self,
        loader: impl FnOnce() -> Result<Arc<dyn Embedder>, EmbedError> + Send + 'static,
    ) -> Workspace {
        self.embedder = Arc::new(EmbedderSlot::lazy(Box::new(loader)));
        self
    }

    /// Makes every handle on this workspace use the embedder `loader` makes (loaded on first use, as with
    /// [`Workspace::with_embedder_loader`]), from now on: a model installed while the app runs. Vectors are kept per
    /// embedder, so a running indexer embeds the notes again for the new one.
    pub fn set_embedder_loader(&self, loader: impl FnOnce() -> Result<Arc<dyn Embedder>, EmbedError> + Send + 'static) {
        self.embedder.replace(Box::new(loader));
    }

    /// The embedder semantic search uses, loading it first if a loader was given.
    pub fn embedder(&self) -> Result<Arc<dyn Embedder>> {
        self.embedder.get()
    }

    /// The file behind this workspace, or `None` in memory.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// A handle on the same workspace that reaches only the notebooks of `scope` and what is inside them: every
    /// read and write through it, by any actor, is limited to them (see [`crate::Scope`]).
    /// A handle that is scoped already stays within its scope: the new one reaches only what both reach.
    pub fn scoped(&self, scope: crate::Scope) -> Workspace {
        let scope = match &self.scope {
            Some(outer) => scope.within(outer.clone()),
            None => scope,
        };
        Workspace {
            scope: Some(Arc::new(scope)),
            ..self.clone()
        }
    }

    /// The scope of this handle, if it has one.
    pub fn scope(&self) -> Option<&crate::Scope> {
        self.scope.as_deref()
    }

    /// Runs `f` in a read transaction: it sees one consistent snapshot of the workspace.
    ///
    /// The actor decides what is visible: for every actor but [`Actor::User`], the body and attachments
    /// of protected notes are withheld.
    pub fn read<T, E>(&self, actor: &Actor, f: impl FnOnce(&Reader<'_>) -> Result<T, E>) -> Result<T, E>
    where
        E: From<Error>,
    {
        self.read_with(actor, None, f)
    }

    /// [`Workspace::read`] as the user, holding the unlocked key: sealed notes open (see [`crate::seal`]).
    pub fn read_unlocked<T, E>(&self, key: &Unlocked, f: impl FnOnce(&Reader<'_>) -> Result<T, E>) -> Result<T, E>
    where
        E: From<Error>,
    {
        self.read_with(&Actor::User, Some(key), f)
    }

    fn read_with<T, E>(
        &self,
        actor: &Actor,
        key: Option<&Unlocked>,
        f: impl FnOnce(&Reader<'_>) -> Result<T, E>,
    ) -> Result<T, E>
    where
        E: From<Error>,
    {
        if let Some(client) = self.staged_client(actor, key)
            && self.has_pending(client)?
        {
            return self.read_staged(client, actor, f);
        }
        let conn = self.pool.get().map_err(Error::from)?;
        let tx = ReadTransaction::begin(&conn).map_err(Error::from)?;
        if let Some(key) = key {
            crate::seal::check_key(tx.0, key)?;
        }
        let mut reader = Reader::new(
            tx.0,
            actor,
            self.embedder.clone(),
            self.vectors.clone(),
            self.scope.as_deref(),
        )
        .read_only()
        .with_fulltext(self.fulltext.clone())
        .with_key(key);
        if self.ledger.records(actor) {
            reader = reader.recording();
        }
        // The transaction only reads; dropping it ends it.
        let answer = f(&reader);
        if answer.is_ok() {
            self.ledger.add(actor, reader.take_reads());
        }
        answer
    }

    /// Runs `f` in one `BEGIN IMMEDIATE` write transaction on behalf of `actor`.
    ///
    /// If `f` returns `Err` or panics, everything it wrote is rolled back (a panic is then resumed).
    /// The guards for non-user actors are part of [`Writer`]'s methods, so `f` cannot skip them.
    pub fn write<T, E>(&self, actor: &Actor, f: impl FnOnce(&mut Writer<'_>) -> Result<T, E>) -> Result<T, E>
    where
        E: From<Error>,
    {
        self.write_with(actor, None, f)
    }

    /// [`Workspace::write`] as the user, holding the unlocked key: sealed notes can be read, changed and unsealed.
    pub fn write_unlocked<T, E>(&self, key: &Unlocked, f: impl FnOnce(&mut Writer<'_>) -> Result<T, E>) -> Result<T, E>
    where
        E: From<Error>,
    {
        self.write_with(&Actor::User, Some(key), f)
    }

    fn write_with<T, E>(
        &self,
        actor: &Actor,
        key: Option<&Unlocked>,
        f: impl FnOnce(&mut Writer<'_>) -> Result<T, E>,
    ) -> Result<T, E>
    where
        E: From<Error>,
    {
        if let Some(client) = self.staged_client(actor, key) {
            return self.write_staged(client, actor, f);
        }
        let mut conn = self.pool.get().map_err(Error::from)?;
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(Error::from)?;
        let outcome = {
            let mut writer = Writer::new(
                &tx,
                actor,
                self.embedder.clone(),
                self.vectors.clone(),
                self.scope.as_deref(),
                key,
            );
            if let Some(key) = key {
                crate::seal::check_key(&tx, key)?;
            }
            let outcome = match catch_unwind(AssertUnwindSafe(|| f(&mut writer))) {
                Ok(Ok(value)) => Ok(writer.before_commit().map(|()| value).map_err(E::from)),
                other => other,
            };
            (outcome, writer.is_bulk(), writer.sealed_something())
        };
        let (outcome, bulk, sealed) = outcome;
        let finished = match outcome {
            Ok(Ok(value)) => Ok(tx.commit().map(|()| value).map_err(|e| E::from(Error::from(e)))),
            Ok(Err(e)) => {
                drop(tx);
                Ok(Err(e))
            }
            Err(panic) => {
                // Rolled back before the panic travels on, so the connection goes back to the pool clean.
                drop(tx);
                Err(panic)
            }
        };
        if bulk {
            // After the commit, so the transaction's pages stayed in memory until then. Failing leaves only a
            // larger cache on this connection.
            let _ = conn.pragma_update(None, "cache_size", CACHE_KIB);
        }
        let finished = finished.unwrap_or_else(|panic| resume_unwind(panic));
        if sealed && finished.is_ok() {
            self.after_sealing(&mut conn).map_err(E::from)?;
        }
        finished
    }

    /// Sets how many notes a whole build of the word-search index must exceed to run in a background thread (plain
    /// word searches use FTS5 until it is done; default 20,000). Smaller builds, and the catching up after writes,
    /// run before the search that needs them. For every handle on this workspace.
    pub fn set_search_index_background_above(&self, notes: u64) {
        self.fulltext.set_background_above(notes);
    }

    /// Whether large whole builds of the word-search index may start in a background thread (default: yes). A
    /// short-lived process, such as one CLI command, turns it off: it would exit before the build ends, so FTS5
    /// answers there; the long-lived ones (`quire serve`, `mcp`, `chat`) build it. For every handle on this workspace.
    pub fn set_search_index_builds_in_background(&self, allowed: bool) {
        self.fulltext.set_background(allowed);
    }

    /// How many searches the word-search index answered through this workspace's handles (the others went to
    /// FTS5); for tests and diagnostics.
    pub fn search_index_answers(&self) -> u64 {
        self.fulltext.answered()
    }

    /// Whether the word-search index is being built in the background (see
    /// [`Workspace::set_search_index_background_above`]).
    pub fn search_index_building(&self) -> bool {
        self.fulltext.is_building()
    }

    /// Builds the full-text search index beside the workspace file again from the file (it is derived, and is
    /// otherwise kept up to date before each search); returns how many notes it holds. For an index that was
    /// damaged or deleted by hand, or to build it ahead of the first search of a large workspace.
    pub fn rebuild_search_index(&self) -> Result<u64> {
        let mut conn = self.pool.get()?;
        let tx = conn.transaction()?;
        self.fulltext.rebuild(&tx).map_err(|e| Error::Io {
            context: match self.fulltext.dir() {
                Some(dir) => format!("cannot build the search index in {}", dir.display()),
                None => "cannot build the search index".into(),
            },
            source: std::io::Error::other(e.0),
        })
    }

    /// After a write sealed content that was plain: the WAL, which holds the pages as they were, is checkpointed
    /// and cut to nothing, and the word index beside the file is built again without the sealed words (when
    /// another process holds it, that process builds it again before its next search: the seal changed its key).
    fn after_sealing(&self, conn: &mut Connection) -> Result<()> {
        if self.fulltext.dir().is_some() {
            for attempt in 0..50 {
                let busy: i64 = conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| r.get(0))?;
                if busy == 0 {
                    break;
                }
                // A reader still uses an older snapshot: wait for it to finish.
                std::thread::sleep(Duration::from_millis(20 * (attempt + 1).min(5)));
            }
        }
        let tx = conn.transaction()?;
        // Failing (another process holds the index) leaves the rebuild to its holder, see above.
        let _ = self.fulltext.forget_sealed(&tx);
        Ok(())
    }

    /// Rewrites the whole file (`VACUUM`), then empties the WAL: text deleted before `secure_delete` was on (a
    /// workspace made by an older quire) can linger in free pages and free space inside pages until then.
    /// `quire lock init` does it once, after sealing.
    pub(crate) fn vacuum(&self) -> Result<()> {
        let conn = self.pool.get()?;
        conn.execute_batch("VACUUM")?;
        if self.path.is_some() {
            let _: i64 = conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| r.get(0))?;
        }
        Ok(())
    }

    /// Runs SQLite's `integrity_check` and `foreign_key_check`; returns the problems found (empty when sound).
    ///
    /// A file-backed workspace is checked on a connection of its own: FTS5's integrity check trusts state that a
    /// long-lived pooled connection caches, and reported false checksum mismatches after heavy concurrent writes.
    pub fn check_integrity(&self) -> Result<Vec<String>> {
        match &self.path {
            Some(path) => {
                let mut conn = Connection::open(path)?;
                configure(&mut conn, true)?;
                integrity_problems(&conn)
            }
            None => integrity_problems(&*self.pool.get()?),
        }
    }

    fn migrate(&self) -> Result<()> {
        let mut conn = self.pool.get()?;
        schema::migrate(&mut conn)
    }
}

fn integrity_problems(conn: &Connection) -> Result<Vec<String>> {
    {
        let mut problems = Vec::new();
        let mut stmt = conn.prepare("PRAGMA integrity_check")?;
        for row in stmt.query_map([], |r| r.get::<_, String>(0))? {
            let row = row?;
            if row != "ok" {
                problems.push(row);
            }
        }
        let mut stmt = conn.prepare("PRAGMA foreign_key_check")?;
        let rows = stmt.query_map([], |r| {
            Ok(format!("foreign key violation in {}", r.get::<_, String>(0)?))
        })?;
        for row in rows {
            problems.push(row?);
        }
        Ok(problems)
    }
}

/// Page cache per connection, in KiB (as SQLite's negative `cache_size`): 32 MiB (the default 2 MiB spilled a
/// large transaction to disk and read it back).
const CACHE_KIB: i64 = -32 * 1024;

/// The page size of a new workspace file (SQLite's default is 4 KiB; files made before keep theirs). Against
/// 4 KiB in the same runs: a bulk write (an import) 15% faster, for a single insert about a quarter slower (a
/// commit writes whole pages to the WAL) and a note read from outside the page cache about 10 µs slower (each page
/// copied in is four times larger). See docs/performance.md, "Page size", for the figures.
const PAGE_SIZE: i64 = 16 * 1024;

/// Settings applied to every new connection of the pool.
/// The size, in bytes, a WAL is truncated to when it is reset (`PRAGMA journal_size_limit`).
const JOURNAL_SIZE_LIMIT: i64 = 32 * 1024 * 1024;

fn configure(conn: &mut Connection, wal: bool) -> rusqlite::Result<()> {
    // Before anything is written; a no-op on a file that has pages already.
    conn.pragma_update(None, "page_size", PAGE_SIZE)?;
    if wal {
        conn.pragma_update(None, "journal_mode", "WAL")?;
    }
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    // A WAL that grew (a large import, a long write) is cut back to this size when it is next reset, instead of
    // keeping its largest size on disk for ever.
    conn.pragma_update(None, "journal_size_limit", JOURNAL_SIZE_LIMIT)?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    // Deleted content is overwritten, not left in free pages: sealing a note must leave no plain copy behind.
    conn.pragma_update(None, "secure_delete", "ON")?;
    // Savepoints (an import writes each file in one) keep their undo pages in a temporary file per savepoint
    // otherwise: creating and writing those files made an import of 10,000 notes several times slower.
    conn.pragma_update(None, "temp_store", "MEMORY")?;
    // Room for every statement a write runs, so none is parsed twice.
    conn.set_prepared_statement_cache_capacity(256);
    conn.pragma_update(None, "cache_size", CACHE_KIB)?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    Ok(())
}

/// A deferred read transaction begun and ended with cached statements: rusqlite's `Transaction` parses `BEGIN` and
/// `ROLLBACK` on every use (beginning and ending a read is about a fifth of a `read_note` call, most of it the WAL
/// read lock's system calls, which stay). Dropping it (also while unwinding) ends it; it only read, so there is
/// nothing to keep or lose.
struct ReadTransaction<'c>(&'c rusqlite::Connection);

impl<'c> ReadTransaction<'c> {
    fn begin(conn: &'c rusqlite::Connection) -> rusqlite::Result<ReadTransaction<'c>> {
        // A pooled connection whose last read failed to end is ended first rather than refused. (A write begun on it
        // would still be refused; a ROLLBACK of a read has not been seen to fail.)
        end(conn)?;
        conn.prepare_cached("BEGIN DEFERRED")?.execute([])?;
        Ok(ReadTransaction(conn))
    }
}

impl Drop for ReadTransaction<'_> {
    fn drop(&mut self) {
        // As rusqlite's Transaction, a failure is ignored: it leaves the transaction open until the next read on this
        // connection ends it.
        let _ = end(self.0);
    }
}

/// Ends the connection's transaction, if it is in one (SQLite may have ended it already after an error).
fn end(conn: &rusqlite::Connection) -> rusqlite::Result<()> {
    if !conn.is_autocommit() {
        conn.prepare_cached("ROLLBACK")?.execute([])?;
    }
    Ok(())
}

impl Workspace {
    /// Receives what happens to the workspace after `from` (from now on when `None`), as the one watcher of this
    /// workspace reads it (see [`crate::news`]). A cursor from before now is caught up by the receiver's first read.
    pub fn news(&self, from: Option<crate::news::NewsCursor>) -> Result<crate::news::NewsReceiver> {
        use crate::news::{BATCH, NewsReceiver, ReadNews, watch};
        let ws = self.clone();
        let read: ReadNews = Arc::new(move |cursor| ws.read(&Actor::User, |r| r.news_after(cursor, BATCH)));
        // Registered before "now" is read: a batch the watcher reads from then on reaches this receiver, and one it
        // read before holds nothing past "now".
        let (inbox, start) = self.news.register();
        let now = match self.read(&Actor::User, |r| r.news_cursor()) {
            Ok(now) => now,
            Err(e) => {
                if start {
                    self.news.not_running();
                }
                return Err(e);
            }
        };
        if start {
            let (feed, watcher) = (self.news.clone(), read.clone());
            let spawned = std::thread::Builder::new()
                .name("quire-news".into())
                .spawn(move || watch(&watcher, &feed, now));
            if let Err(source) = spawned {
                self.news.not_running();
                return Err(Error::Io {
                    context: "cannot start the news watcher".into(),
                    source,
                });
            }
        }
        Ok(NewsReceiver::new(read, inbox, from.unwrap_or(now), now))
    }
}

#[cfg(test)]
mod tests {
    use super::ReadTransaction;

    #[test]
    fn a_read_transaction_ends_when_dropped_and_ends_one_left_open() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        conn.execute_batch("CREATE TABLE t (x); INSERT INTO t VALUES (1);")
            .unwrap();
        {
            let tx = ReadTransaction::begin(&conn).unwrap();
            assert!(!tx.0.is_autocommit());
            let x: i64 = tx.0.query_row("SELECT x FROM t", [], |r| r.get(0)).unwrap();
            assert_eq!(x, 1);
        }
        assert!(conn.is_autocommit());
        // Unwinding out of a read ends it too.
        let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _tx = ReadTransaction::begin(&conn).unwrap();
            panic!("the reader failed");
        }));
        assert!(unwound.is_err() && conn.is_autocommit());
        // A connection handed back still inside a transaction is not refused: the next read ends that one first.
        conn.execute_batch("BEGIN").unwrap();
        let tx = ReadTransaction::begin(&conn).unwrap();
        drop(tx);
        assert!(conn.is_autocommit());
    }
}
