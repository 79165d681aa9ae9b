//! `rename_notebook`: give a notebook a new title.

use crate::prelude::*;

/// Arguments of `rename_notebook`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Input {
    /// The notebook's id.
    #[serde(alias = "id")]
    pub(crate) notebook_id: String,
    /// The new title: one line, not empty.
    #[serde(alias = "new_title")]
    pub(crate) title: String,
}

tool! {
    /// Rename a notebook. Its notes and sub-notebooks stay where they are; only the title changes.
    name: "rename_notebook",
    title: "Rename notebook",
    effect: mutating,
    input: Input,
    output: NotebookInfo,
    run: run,
}

fn run(w: &mut Writer<'_>, input: Input) -> Result<NotebookInfo, ToolError> {
    w.rename_notebook(&input.notebook_id, &input.title)?;
    notebook_info(w, &input.notebook_id)
}
