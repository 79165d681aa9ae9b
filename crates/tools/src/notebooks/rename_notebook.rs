//! `rename_notebook`: give a notebook a new title.

use crate::prelude::*;

/// Arguments of `rename_notebook`.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// The notebook.
    #[serde(alias = "id")]
    pub notebook_id: String,
    /// One line.
    #[serde(alias = "new_title")]
    pub title: String,
}

tool! {
    /// Rename a notebook.
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
