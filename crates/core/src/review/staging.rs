//! The staged handle ([`Workspace::staged`]): an MCP client's writes run with every guard in a transaction that is
//! rolled back, what they changed is recorded for review, and the client's reads see its pending changes; and
//! [`Workspace::decide_review`], the user's decision.

use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::Arc;

use rusqlite::TransactionBehavior;

use crate::entity::Actor;
use crate::error::{Error, Result};
use crate::read::Reader;
use crate::seal::Unlocked;
use crate::workspace::Workspace;
use crate::write::Writer;

impl Workspace {
    /// A handle on the same workspace whose MCP clients' writes are staged for the user's review instead of applied
    /// (see [`crate::review`]). A write by [`Actor::Mcp`] through it runs with every guard, inside a transaction
    /// that is rolled back; what it changed is recorded in the client's open review set, and the write's answer is
    /// what it would have been. Reads and writes by that client see its pending changes, merged onto the workspace
    /// as it is now. Other actors read and write as through any handle. [`Workspace::staging_report`] says what the
    /// handle's calls staged and showed.
    pub fn staged(&self) -> Workspace {
        let mut staged = self.clone();
        staged.staging = Some(Arc::default());
        staged
    }

    /// Whether this handle stages its MCP clients' writes ([`Workspace::staged`]).
    pub fn is_staged(&self) -> bool {
        self.staging.is_some()
    }

    /// The same handle (scope included) without staging: for reading a review as it stands, and deciding on it.
    pub fn unstaged(&self) -> Workspace {
        let mut plain = self.clone();
        plain.staging = None;
        plain
    }

    /// What the calls through this staged handle staged and showed since the last time this was asked (`None` for
    /// a handle that is not staged).
    pub fn staging_report(&self) -> Option<crate::review::StagingReport> {
        let slot = self.staging.as_ref()?;
        let mut report = slot.lock().unwrap_or_else(|e| e.into_inner());
        Some(std::mem::take(&mut *report))
    }

    /// The client whose writes this handle stages, for this actor.
    pub(crate) fn staged_client<'c>(&self, actor: &'c Actor, key: Option<&Unlocked>) -> Option<&'c str> {
        match (actor, &self.staging, key) {
            (Actor::Mcp { client }, Some(_), None) => Some(client),
            _ => None,
        }
    }

    fn note_staging(&self, f: impl FnOnce(&mut crate::review::StagingReport)) {
        if let Some(slot) = &self.staging {
            f(&mut slot.lock().unwrap_or_else(|e| e.into_inner()));
        }
    }

    /// Accepts or rejects the chosen pending changes of a review set, as the user. Accepted changes are merged
    /// onto the workspace as it is now and written as one change set in the client's name (undone like any other);
    /// a change whose place changed meanwhile stays pending and is named in [`crate::review::ReviewOutcome::stale`].
    /// Refused through a staged handle.
    pub fn decide_review(
        &self,
        id: i64,
        accept: bool,
        selection: &crate::review::Selection,
    ) -> Result<crate::review::ReviewOutcome> {
        if self.staging.is_some() {
            return Err(Error::UserOnly("accept or reject staged changes"));
        }
        let client = self.read(&Actor::User, |r| r.review_client(id))?;
        let actor = if accept { Actor::Mcp { client } } else { Actor::User };
        let ((accepted, rejected, stale), change_set_id) = self.write(&actor, |w| {
            let decided = w.decide_review(id, accept, selection)?;
            Ok::<_, Error>((decided, w.change_set_id().map(str::to_owned)))
        })?;
        let set = self.read(&Actor::User, |r| r.review_set(id))?;
        Ok(crate::review::ReviewOutcome {
            accepted,
            rejected,
            stale,
            change_set_id,
            set,
        })
    }

    /// A writer on a transaction of this handle, without the key (a staged client is never the user).
    fn writer_on<'a>(&'a self, conn: &'a rusqlite::Connection, actor: &'a Actor) -> Writer<'a> {
        Writer::new(
            conn,
            actor,
            self.embedder.clone(),
            self.vectors.clone(),
            self.scope.as_deref(),
            None,
        )
    }

    /// Whether a client has changes waiting for review.
    pub(crate) fn has_pending(&self, client: &str) -> Result<bool> {
        let conn = self.pool.get()?;
        Ok(conn.query_row(
            "SELECT EXISTS (SELECT 1 FROM review_rows r JOIN review_sets s ON s.id = r.set_id \
             WHERE r.settled = 0 AND s.client = ?1)",
            [client],
            |r| r.get(0),
        )?)
    }

    /// A staged client's read: its pending changes put in a write transaction, the read, then all of it rolled back.
    pub(crate) fn read_staged<T, E>(
        &self,
        client: &str,
        actor: &Actor,
        f: impl FnOnce(&Reader<'_>) -> Result<T, E>,
    ) -> Result<T, E>
    where
        E: From<Error>,
    {
        let mut conn = self.pool.get().map_err(Error::from)?;
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(Error::from)?;
        let mut writer = self.writer_on(&tx, actor);
        let shown = writer.apply_review_overlay(client)?;
        self.note_staging(|report| report.shown.extend(shown));
        if self.ledger.records(actor) {
            writer.record_reads();
        }
        let answer = f(&writer);
        if answer.is_ok() {
            self.ledger.add(actor, writer.take_reads());
        }
        drop(writer);
        // Dropping the transaction rolls it back: the pending changes were never stored.
        drop(tx);
        answer
    }

    /// A staged client's write: inside a savepoint, its pending changes, then the write with every guard; what the
    /// write changed is taken down, the savepoint rolled back, and the changes recorded for review instead.
    pub(crate) fn write_staged<T, E>(
        &self,
        client: &str,
        actor: &Actor,
        f: impl FnOnce(&mut Writer<'_>) -> Result<T, E>,
    ) -> Result<T, E>
    where
        E: From<Error>,
    {
        let mut conn = self.pool.get().map_err(Error::from)?;
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(Error::from)?;
        tx.execute_batch("SAVEPOINT staged").map_err(Error::from)?;
        let new_writer = || self.writer_on(&tx, actor);
        let mut writer = new_writer();
        let shown = writer.apply_review_overlay(client)?;
        let mark = writer.change_log_mark()?;
        let value = match catch_unwind(AssertUnwindSafe(|| f(&mut writer))) {
            Ok(Ok(value)) => value,
            // Dropping the transaction rolls everything back.
            Ok(Err(e)) => return Err(e),
            Err(panic) => {
                drop(writer);
                drop(tx);
                resume_unwind(panic)
            }
        };
        writer.before_commit()?;
        let capture = writer.staged_capture(mark)?;
        drop(writer);
        tx.execute_batch("ROLLBACK TO staged; RELEASE staged")
            .map_err(Error::from)?;
        let staged = new_writer().record_staged(client, capture)?;
        tx.commit().map_err(Error::from)?;
        self.note_staging(|report| {
            report.shown.extend(shown);
            report.staged.extend(staged);
        });
        Ok(value)
    }
}
