//! `create_notebook`: a new notebook, at the top level or inside another.

use crate::prelude::*;

/// Arguments of `create_notebook`.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// One line.
    pub title: String,
    /// Default: the top level.
    pub parent_id: Option<String>,
    /// An emoji.
    pub icon: Option<String>,
}

tool! {
    /// Create a notebook, at the top level or inside another notebook.
    name: "create_notebook",
    title: "Create notebook",
    effect: mutating,
    input: Input,
    output: NotebookInfo,
    run: run,
}

fn run(w: &mut Writer<'_>, input: Input) -> Result<NotebookInfo, ToolError> {
    let nb = w.create_notebook(quire_core::NewNotebook {
        title: input.title,
        parent_id: input.parent_id,
        icon: input.icon,
    })?;
    notebook_info(w, &nb.id)
}
