//! `move_notebook`: put a notebook inside another one (or at the top level).

use crate::prelude::*;

/// Arguments of `move_notebook`.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// The notebook to move.
    #[serde(alias = "id")]
    pub notebook_id: String,
    /// The new parent; `_root` for the top level.
    #[serde(alias = "new_parent_id", alias = "target_notebook_id")]
    pub parent_id: String,
}

tool! {
    /// Move a notebook, with everything in it, into another notebook or to the top level.
    name: "move_notebook",
    title: "Move notebook",
    effect: mutating,
    input: Input,
    output: NotebookInfo,
    run: run,
}

fn run(w: &mut Writer<'_>, input: Input) -> Result<NotebookInfo, ToolError> {
    w.move_notebook(&input.notebook_id, &input.parent_id)?;
    notebook_info(w, &input.notebook_id)
}
