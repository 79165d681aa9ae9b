//! Finding what the command line names: a notebook by title or path (or why there is none), and a notebook's path
//! as the commands print it.

use quire_core::{Actor, Workspace};

use crate::output;

/// A notebook by title or path, which must exist (listing never creates one).
pub(crate) fn find_notebook(ws: &Workspace, name: &str) -> anyhow::Result<String> {
    ws.read(&Actor::User, |r| find_notebook_in(r, name))
}

/// [`find_notebook`] inside a read or a write, by quire-core's rule ([`quire_core::Reader::find_notebook`]): a title
/// names the one notebook with it (of several, the one at the top level), a path such as `Work/Projects` is walked
/// from the top; an empty path is the top level. A missing one is a [`NoSuchNotebook`], which commands that can
/// create it recognise.
pub(crate) fn find_notebook_in(r: &quire_core::Reader<'_>, name: &str) -> anyhow::Result<String> {
    match r.find_notebook(name)? {
        Some(notebook) => Ok(notebook.id),
        None => Err(NoSuchNotebook {
            path: name.to_owned(),
            titled: !name.trim().trim_matches('/').contains('/'),
        }
        .into()),
    }
}

/// A notebook named on the command line does not exist. Commands that can create it say how.
#[derive(Debug)]
pub(crate) struct NoSuchNotebook {
    /// The title or path as given.
    pub(crate) path: String,
    /// Whether it was a lone title (looked up anywhere) rather than a path.
    titled: bool,
}

impl std::fmt::Display for NoSuchNotebook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.titled {
            write!(f, "no notebook is titled '{}' (see `quire notebook list`)", self.path)
        } else {
            write!(f, "no notebook '{}' (see `quire notebook list`)", self.path)
        }
    }
}

impl std::error::Error for NoSuchNotebook {}

/// A notebook's path as commands print it: quire-core's path text, or `(top level)`.
pub(crate) fn path_of(r: &quire_core::Reader<'_>, id: &str) -> anyhow::Result<String> {
    Ok(output::shown_path(r.notebook_path_text(id)?))
}
