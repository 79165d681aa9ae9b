//! Statements prepared once per connection: every write of a note runs the same few dozen statements, and parsing
//! them again each time was a sixth of an import's time.

use rusqlite::{Connection, Params, Row};

/// `execute` and `query_row` through the connection's statement cache.
pub(crate) trait Cached {
    /// Runs a statement that returns no rows; the number of rows changed.
    fn exec_cached<P: Params>(&self, sql: &str, params: P) -> rusqlite::Result<usize>;
    /// The first row of a query, mapped by `f`.
    fn row_cached<T, P: Params, F: FnOnce(&Row<'_>) -> rusqlite::Result<T>>(
        &self,
        sql: &str,
        params: P,
        f: F,
    ) -> rusqlite::Result<T>;
}

impl Cached for Connection {
    fn exec_cached<P: Params>(&self, sql: &str, params: P) -> rusqlite::Result<usize> {
        self.prepare_cached(sql)?.execute(params)
    }

    fn row_cached<T, P: Params, F: FnOnce(&Row<'_>) -> rusqlite::Result<T>>(
        &self,
        sql: &str,
        params: P,
        f: F,
    ) -> rusqlite::Result<T> {
        self.prepare_cached(sql)?.query_row(params, f)
    }
}
