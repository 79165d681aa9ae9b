//! The one rule for what of a protected note an actor other than the user may see, in Rust and in SQL.
//!
//! A note is protected when its own flag is set or a notebook above it is protected. To every actor it shows that
//! it exists: its id, title, notebook, to-do state and times. Its content is the user's alone: the body, tags,
//! labels and relations, attachments, revisions, and the text around its links. Every reader in this crate asks
//! this module: a [`NoteSummary`] built from a row goes through [`Protection::summary`], a read of content through
//! [`shows_content`], and a query that filters by content (a tag) adds [`content_visible_sql`].

use std::collections::HashSet;
use std::rc::Rc;

use crate::entity::{Actor, NoteSummary};

/// What a reader needs to apply the rule: which notebooks are protected, and whether the reader is one the rule
/// hides content from.
#[derive(Debug, Clone)]
pub(crate) struct Protection {
    notebooks: Rc<HashSet<String>>,
    hides: bool,
}

impl Protection {
    pub(crate) fn new(notebooks: Rc<HashSet<String>>, actor: &Actor) -> Protection {
        Protection {
            notebooks,
            hides: !actor.is_user(),
        }
    }

    /// For a row whose protection the caller settles afterwards: no notebook is known protected and nothing is
    /// hidden here, so the caller must check [`shows_content`] itself once it knows.
    pub(crate) fn settled_later() -> Protection {
        Protection {
            notebooks: Rc::new(HashSet::new()),
            hides: false,
        }
    }

    /// Whether a note with this own flag in this notebook is protected.
    pub(crate) fn is_protected(&self, own_flag: bool, notebook_id: &str) -> bool {
        own_flag || self.notebooks.contains(notebook_id)
    }

    /// Whether a notebook is protected, itself or by a notebook above it.
    pub(crate) fn notebook_is_protected(&self, notebook_id: &str) -> bool {
        self.notebooks.contains(notebook_id)
    }

    /// A note's summary as this reader may see it: a protected note's tags are withheld from non-user actors.
    pub(crate) fn summary(&self, mut summary: NoteSummary) -> NoteSummary {
        if self.hides && summary.is_protected {
            summary.tags.clear();
        }
        summary
    }

    /// The value to bind to the parameter of [`content_visible_sql`]: `NULL` for the user (who sees everything),
    /// otherwise the protected notebooks as a JSON array.
    pub(crate) fn sql_param(&self) -> Option<String> {
        self.hides.then(|| {
            let ids: Vec<&str> = self.notebooks.iter().map(String::as_str).collect();
            serde_json::to_string(&ids).unwrap_or_else(|_| "[]".to_owned())
        })
    }
}

/// Whether `actor` may see the content of this note (see the module docs).
pub(crate) fn shows_content(actor: &Actor, summary: &NoteSummary) -> bool {
    actor.is_user() || !summary.is_protected
}

/// SQL that holds when the content of the note row `note` (an alias of `notes`) is visible, with `param` bound to
/// [`Protection::sql_param`].
pub(crate) fn content_visible_sql(note: &str, param: &str) -> String {
    format!(
        "({param} IS NULL OR ({note}.is_protected = 0 AND {note}.notebook_id NOT IN (SELECT value FROM json_each({param}))))"
    )
}
