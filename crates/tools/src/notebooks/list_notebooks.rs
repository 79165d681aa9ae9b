//! `list_notebooks`: the notebook tree with the number of notes in each notebook.

use std::collections::HashMap;

use crate::prelude::*;

/// The most notebooks one call lists.
const MAX_NOTEBOOKS: usize = 500;

/// Arguments of `list_notebooks` (none are needed).
#[allow(
    missing_docs,
    reason = "a doc comment would become a schema description the model pays for on every turn"
)]
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// Only this notebook's sub-tree.
    #[serde(alias = "notebook_id")]
    pub parent_id: Option<String>,
    pub offset: Option<u64>,
}

/// A notebook in the tree.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct TreeItem {
    /// The notebook.
    #[serde(flatten)]
    pub notebook: NotebookInfo,
    /// How deep it is: 0 for a top-level notebook.
    pub depth: u32,
    /// How many notes it holds directly (not counting sub-notebooks or the trash).
    pub note_count: u64,
}

/// The tree, parents before their children.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Output {
    /// Notes at the top level, outside any notebook.
    pub top_level_note_count: u64,
    /// The notebooks.
    #[serde(flatten)]
    pub page: Page<TreeItem>,
}

impl Listed for TreeItem {
    const FIELD: &'static str = "notebooks";
    const ABOUT: &'static str = "The notebooks, depth first, siblings by title.";
}

tool! {
    /// List the notebooks as a tree (parents first), with their ids and note counts.
    name: "list_notebooks",
    title: "List notebooks",
    effect: read_only,
    input: Input,
    output: Output,
    run: run,
}

fn run(r: &Reader<'_>, input: Input) -> Result<Output, ToolError> {
    let notebooks = Notebooks::load(r)?;
    let counts = r.notebook_note_counts()?;
    let start = input.parent_id.as_deref().unwrap_or(quire_core::ROOT_NOTEBOOK_ID);
    r.notebook(start)?;
    let mut children: HashMap<&str, Vec<&quire_core::Notebook>> = HashMap::new();
    for nb in notebooks.all() {
        if let Some(parent) = nb.parent_id.as_deref() {
            children.entry(parent).or_default().push(nb);
        }
    }
    for list in children.values_mut() {
        list.sort_by(|a, b| {
            a.title
                .to_lowercase()
                .cmp(&b.title.to_lowercase())
                .then(a.id.cmp(&b.id))
        });
    }
    let mut items = Vec::new();
    let mut stack: Vec<(&str, u32)> = vec![(start, 0)];
    let mut ordered = Vec::new();
    while let Some((id, depth)) = stack.pop() {
        for child in children.get(id).map(Vec::as_slice).unwrap_or_default().iter().rev() {
            stack.push((child.id.as_str(), depth + 1));
        }
        if id != start {
            ordered.push((id, depth - 1));
        }
    }
    let total = ordered.len() as u64;
    let offset = input.offset.unwrap_or(0);
    for (id, depth) in ordered.into_iter().skip(offset as usize).take(MAX_NOTEBOOKS) {
        if let Some(nb) = notebooks.get(id) {
            items.push(TreeItem {
                notebook: notebooks.notebook(nb),
                depth,
                note_count: counts.get(id).copied().unwrap_or(0),
            });
        }
    }
    Ok(Output {
        top_level_note_count: counts.get(quire_core::ROOT_NOTEBOOK_ID).copied().unwrap_or(0),
        page: Page::fitted(items, total, offset),
    })
}
