//! The guards every non-user write passes, in a fixed order (ARCHITECTURE.md, "Invariants").

use crate::entity::{EntityKind, NoteSummary, Notebook};
use crate::error::{Error, Missing, Result};

use super::{Writer, is_system_id, note_of};

impl<'a> Writer<'a> {
    /// The user, or an import that only protects (what it imports arrives protected as it was exported).
    pub(super) fn require_user_or_import_protecting(&self, protected: bool, what: &'static str) -> Result<()> {
        if protected && matches!(self.actor, crate::Actor::Import { .. }) {
            return Ok(());
        }
        self.require_user(what)
    }

    pub(crate) fn require_user(&self, what: &'static str) -> Result<()> {
        if self.actor.is_user() {
            Ok(())
        } else {
            Err(Error::UserOnly(what))
        }
    }

    /// [`Writer::check_note_writable`] for a caller that needs nothing of the note: the same checks without
    /// reading its summary and tags (an import sets attributes on every note it writes).
    pub(super) fn ensure_note_writable(&self, id: &str) -> Result<()> {
        if self.note_is_protected(id)? && !self.actor.is_user() {
            return Err(Error::Protected(Missing::Note));
        }
        Ok(())
    }

    /// Exists, then (for non-user actors) not protected. Notes have no system entities.
    pub(super) fn check_note_writable(&self, id: &str) -> Result<NoteSummary> {
        let note = self.note_summary(id)?;
        if note.is_protected && !self.actor.is_user() {
            return Err(Error::Protected(Missing::Note));
        }
        Ok(note)
    }

    /// Exists, not a system notebook, then (for non-user actors) not protected. Through a scope, the notebooks it
    /// was given cannot be changed themselves (renamed, moved, deleted), only what is inside them.
    pub(super) fn check_notebook_writable(&self, id: &str, action: &'static str) -> Result<Notebook> {
        let notebook = self.notebook(id)?;
        if is_system_id(id) {
            return Err(Error::System { action });
        }
        // Renaming counts too: `quire mcp --notebook Work` finds its notebook by name.
        if self.scope()?.is_some_and(|s| s.roots.iter().any(|root| root == id)) {
            return Err(Error::OutsideScope(format!(
                "Cannot {action} \"{}\": it is one of the notebooks this client was given, not inside them",
                notebook.title
            )));
        }
        if !self.actor.is_user() && self.protected_notebooks()?.contains(id) {
            return Err(Error::Protected(Missing::Notebook));
        }
        Ok(notebook)
    }

    /// A notebook that something is created in or moved into: it exists and (for non-user actors) is not protected.
    pub(super) fn check_notebook_target(&self, id: &str, action: &str) -> Result<()> {
        let found = self.notebook(id);
        if let Err(Error::NotFound(_)) = found {
            return Err(Error::InvalidTarget("Target notebook not found".into()));
        }
        found?;
        if is_system_id(id) && self.scope()?.is_some() {
            return Err(Error::OutsideScope(format!(
                "Cannot {action} the top level: this client may only use the notebooks it was given (list_notebooks)"
            )));
        }
        if !self.actor.is_user() && self.protected_notebooks()?.contains(id) {
            return Err(Error::InvalidTarget(format!("Cannot {action} a protected notebook")));
        }
        Ok(())
    }

    /// Through a scope, undoing touches only what is inside it: notes and notebooks that this view sees.
    pub(super) fn check_revert_in_scope(
        &self,
        kind: EntityKind,
        entity_id: &str,
        current: Option<&serde_json::Value>,
    ) -> Result<()> {
        let outside =
            || Error::OutsideScope("This change set changed things outside the notebooks this client may use".into());
        let visible = match kind {
            EntityKind::Notebook => self.notebook(entity_id).is_ok(),
            // Tags are shared names; the links that put them on notes are checked on their own.
            EntityKind::Tag => true,
            _ => note_of(kind, entity_id, current).is_some_and(|note| self.note_summary(&note).is_ok()),
        };
        if visible { Ok(()) } else { Err(outside()) }
    }

    pub(super) fn check_revert_allowed(
        &self,
        kind: EntityKind,
        entity_id: &str,
        current: Option<&serde_json::Value>,
    ) -> Result<()> {
        match kind {
            EntityKind::Notebook if current.is_some() => {
                self.check_notebook_writable(entity_id, "change")?;
            }
            _ => {
                if let Some(note) = note_of(kind, entity_id, current)
                    && let Ok(summary) = self.note_summary(&note)
                    && summary.is_protected
                {
                    return Err(Error::Protected(Missing::Note));
                }
            }
        }
        Ok(())
    }
}
