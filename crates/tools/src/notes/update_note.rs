//! `update_note`: change a note's title, replace or extend its body, or make exact find/replace edits.

use crate::prelude::*;

/// One exact edit.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Edit {
    /// Text occurring exactly once in the body.
    #[serde(alias = "old_text", alias = "old")]
    pub find: String,
    /// Its replacement (empty deletes).
    #[serde(alias = "new_text", alias = "new")]
    pub replace: String,
}

/// Arguments of `update_note`.
#[allow(
    missing_docs,
    reason = "a doc comment would become a schema description the model pays for on every turn"
)]
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    #[serde(alias = "id")]
    pub note_id: String,
    /// New title.
    pub title: Option<String>,
    /// Replaces the whole body. Not with append, prepend or edits.
    #[serde(alias = "content")]
    pub body: Option<String>,
    /// Added at the end.
    pub append: Option<String>,
    /// Added at the start.
    pub prepend: Option<String>,
    /// Applied in order; all or none.
    pub edits: Option<Vec<Edit>>,
    /// A to-do's state.
    pub completed: Option<bool>,
    /// With a new title: fix [[Old title]] links elsewhere.
    pub update_links: Option<bool>,
}

/// The note after the update.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Output {
    /// The note.
    #[serde(flatten)]
    pub note: NoteInfo,
    /// The length of the body now, in characters.
    pub total_chars: u64,
    /// What changed: title, body, completed.
    pub changed: Vec<String>,
    /// With update_links: the notes whose links were changed to the new title.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub links_updated: Vec<String>,
    /// With update_links: notes that link here but could not be changed, with why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub links_not_updated: Vec<String>,
    /// How many more notes' links were changed than are listed (absent when all are).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub more_links_updated: Option<u64>,
    /// How many more notes could not be changed than are listed (absent when all are).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub more_links_not_updated: Option<u64>,
}

tool! {
    /// Change a note: title, whole body, append, prepend, or exact find/replace edits (best for small changes).
    name: "update_note",
    title: "Update note",
    effect: mutating,
    input: Input,
    output: Output,
    run: run,
}

fn run(w: &mut Writer<'_>, input: Input) -> Result<Output, ToolError> {
    let body_changes = [
        input.body.is_some(),
        input.append.is_some() || input.prepend.is_some(),
        input.edits.is_some(),
    ];
    if body_changes.iter().filter(|c| **c).count() > 1 {
        return Err(ToolError::new(
            "Give only one way of changing the body: body (replace all of it), append/prepend, or edits.",
        ));
    }
    if input.title.is_none() && !body_changes.contains(&true) && input.completed.is_none() {
        return Err(ToolError::new(
            "Nothing to change: give title, body, append, prepend, edits or completed.",
        ));
    }
    let current = w.note_for_edit(&input.note_id)?;
    let new_body = if let Some(body) = input.body {
        Some(body)
    } else if input.append.is_some() || input.prepend.is_some() {
        let mut body = current.body.clone();
        if let Some(prepend) = input.prepend {
            body = join(&prepend, &body);
        }
        if let Some(append) = input.append {
            body = join(&body, &append);
        }
        Some(body)
    } else if let Some(edits) = input.edits {
        Some(apply_edits(&current.body, &edits)?)
    } else {
        None
    };
    if input.completed.is_some() && !current.summary.is_todo {
        return Err(ToolError::new("This note is not a to-do, so it cannot be completed."));
    }
    let mut changed = Vec::new();
    if input
        .title
        .as_deref()
        .is_some_and(|t| t.trim() != current.summary.title)
    {
        changed.push("title".to_owned());
    }
    if new_body.as_ref().is_some_and(|b| *b != current.body) {
        changed.push("body".to_owned());
    }
    let todo_completed = input.completed.map(|done| done.then(quire_core::Timestamp::now));
    if input
        .completed
        .is_some_and(|done| done != current.summary.todo_completed.is_some())
    {
        changed.push("completed".to_owned());
    }
    let update = quire_core::NoteUpdate {
        title: input.title,
        body: new_body,
        is_todo: None,
        todo_completed,
    };
    let (note, relinked) = if input.update_links == Some(true) {
        w.update_note_relinking(&input.note_id, update)?
    } else {
        (w.update_note(&input.note_id, update)?, quire_core::Relinked::default())
    };
    let mut links_updated = relinked.updated;
    let mut links_not_updated: Vec<String> = relinked
        .skipped
        .into_iter()
        .map(|(id, why)| format!("{id}: {why}"))
        .collect();
    // A rename can touch many notes: the answer lists the first of them (the change set has them all).
    let more_links_updated = crate::budget::fit_counted(&mut links_updated, OUTPUT_TOKENS / 4);
    let more_links_not_updated = crate::budget::fit_counted(&mut links_not_updated, OUTPUT_TOKENS / 4);
    Ok(Output {
        note: summary_info(w, &note.summary)?,
        total_chars: note.body.chars().count() as u64,
        changed,
        links_updated,
        links_not_updated,
        more_links_updated,
        more_links_not_updated,
    })
}

/// Joins two pieces of Markdown with a line break unless one is already there.
fn join(first: &str, second: &str) -> String {
    if first.is_empty() || second.is_empty() || first.ends_with('\n') || second.starts_with('\n') {
        format!("{first}{second}")
    } else {
        format!("{first}\n{second}")
    }
}

/// Applies every edit in order to a working copy; the first that does not match exactly once fails them all.
pub(crate) fn apply_edits(body: &str, edits: &[Edit]) -> Result<String, ToolError> {
    if edits.is_empty() {
        return Err(ToolError::new("edits is empty: give at least one {find, replace}."));
    }
    let mut text = body.to_owned();
    let n = edits.len();
    for (i, edit) in edits.iter().enumerate() {
        let which = if n > 1 {
            format!("Edit {} of {n}", i + 1)
        } else {
            "The edit".to_owned()
        };
        if edit.find.is_empty() {
            return Err(ToolError::new(format!(
                "{which}: find is empty; give the exact text to replace."
            )));
        }
        if edit.find == edit.replace {
            return Err(ToolError::new(format!(
                "{which}: find and replace are identical, so there is nothing to change."
            )));
        }
        let matches = text.matches(edit.find.as_str()).count();
        match matches {
            1 => text = text.replacen(edit.find.as_str(), &edit.replace, 1),
            0 => {
                return Err(ToolError::new(format!(
                    "{which}: find matches 0 times. It must match the note exactly, including spaces, line breaks and \
                     punctuation{}; read the note again with read_note and copy the text. No edit was applied.",
                    if i > 0 { ", after the earlier edits" } else { "" }
                )));
            }
            many => {
                return Err(ToolError::new(format!(
                    "{which}: find matches {many} times. Include more of the surrounding text so it matches exactly \
                     once. No edit was applied."
                )));
            }
        }
    }
    Ok(text)
}
