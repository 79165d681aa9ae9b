//! Session tools (tier 1): edits of the focused note's text, applied to a working copy and returned as
//! [`Edit`]s for the editor to preview and apply, never written to the workspace by the agent.

use quire_tools::{ToolError, parse_arguments, portable_schema_for};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::context::{NoteContext, Selection};
use crate::edit::{Edit, byte_at};

/// The session tools (tier 1): they edit the focused note's text in the editor, never the workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionTool {
    /// Replace the selection.
    EditSelection,
    /// Rewrite the passage an anchor quotes.
    RewriteParagraph,
    /// Insert before an anchor.
    InsertBeforeAnchor,
    /// Insert after an anchor.
    InsertAfterAnchor,
    /// Append at the end.
    AppendToNote,
    /// Replace the content of a fenced block.
    ReplaceStructuredBlock,
}

/// Arguments of `edit_selection` and `append_to_note`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct TextInput {
    /// Markdown.
    text: String,
}

/// Arguments of the anchor tools.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct AnchorInput {
    /// The note's text, quoted exactly; it must occur once.
    anchor: String,
    /// Markdown, with the line breaks it needs.
    text: String,
}

/// Arguments of `replace_structured_block`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct BlockInput {
    /// As after the opening fence (mermaid).
    tag: String,
    /// The new content, without fences.
    text: String,
}

impl SessionTool {
    /// Every session tool, in the order they are offered.
    pub const ALL: [SessionTool; 6] = [
        SessionTool::EditSelection,
        SessionTool::RewriteParagraph,
        SessionTool::InsertBeforeAnchor,
        SessionTool::InsertAfterAnchor,
        SessionTool::AppendToNote,
        SessionTool::ReplaceStructuredBlock,
    ];

    /// The tool's `snake_case` name.
    pub fn name(self) -> &'static str {
        match self {
            SessionTool::EditSelection => "edit_selection",
            SessionTool::RewriteParagraph => "rewrite_paragraph",
            SessionTool::InsertBeforeAnchor => "insert_before_anchor",
            SessionTool::InsertAfterAnchor => "insert_after_anchor",
            SessionTool::AppendToNote => "append_to_note",
            SessionTool::ReplaceStructuredBlock => "replace_structured_block",
        }
    }

    /// The session tool with this name.
    pub fn from_name(name: &str) -> Option<SessionTool> {
        SessionTool::ALL.into_iter().find(|t| t.name() == name)
    }

    /// A title for UIs.
    pub fn title(self) -> &'static str {
        match self {
            SessionTool::EditSelection => "Edit selection",
            SessionTool::RewriteParagraph => "Rewrite paragraph",
            SessionTool::InsertBeforeAnchor | SessionTool::InsertAfterAnchor => "Insert text",
            SessionTool::AppendToNote => "Append to note",
            SessionTool::ReplaceStructuredBlock => "Replace block",
        }
    }

    /// What the model reads to decide when to use it.
    pub fn description(self) -> &'static str {
        match self {
            SessionTool::EditSelection => "Replace the text the user selected in the focused note.",
            SessionTool::RewriteParagraph => "Rewrite a passage of the focused note: anchor is its current text.",
            SessionTool::InsertBeforeAnchor => "Insert text into the focused note right before the anchor.",
            SessionTool::InsertAfterAnchor => "Insert text into the focused note right after the anchor.",
            SessionTool::AppendToNote => "Add text at the end of the focused note.",
            SessionTool::ReplaceStructuredBlock => {
                "Replace the content of the focused note's fenced block with this tag (```mermaid, ...)."
            }
        }
    }

    /// The JSON Schema of its arguments, reduced to what every model provider accepts (as for workspace tools).
    pub fn input_schema(self) -> Value {
        self.schema_fn()()
    }

    fn schema_fn(self) -> fn() -> Value {
        match self {
            SessionTool::EditSelection | SessionTool::AppendToNote => portable_schema_for::<TextInput>,
            SessionTool::RewriteParagraph | SessionTool::InsertBeforeAnchor | SessionTool::InsertAfterAnchor => {
                portable_schema_for::<AnchorInput>
            }
            SessionTool::ReplaceStructuredBlock => portable_schema_for::<BlockInput>,
        }
    }

    fn parse<T: serde::de::DeserializeOwned>(self, args: &Value) -> Result<T, ToolError> {
        parse_arguments(self.name(), args.clone(), self.schema_fn())
    }
}

/// A rewrite whose anchor covers more than this share of a note longer than [`LONG_NOTE_CHARS`] is refused.
const MOST_OF_THE_NOTE: f64 = 0.8;
const LONG_NOTE_CHARS: usize = 200;

/// The note's text during a turn, with the selection following the edits, and what of it the model has seen.
#[derive(Debug, Clone)]
pub(crate) struct WorkingCopy {
    pub(crate) id: String,
    pub(crate) body: String,
    pub(crate) selection: Option<Selection>,
    /// The byte ranges of `body` the model has seen (the view it started with, what read_note returned, what it
    /// wrote); `None` when it saw the whole note. An edit anchored in a part it has not seen is refused.
    seen: Option<Vec<(usize, usize)>>,
}

impl WorkingCopy {
    pub(crate) fn from_context(context: &NoteContext) -> Option<WorkingCopy> {
        context.note.as_ref().map(|n| {
            let view = crate::view::note_view(n, context.view_budget());
            WorkingCopy {
                id: n.id.clone(),
                body: n.body.clone(),
                selection: n.selection,
                seen: (!view.whole).then_some(view.seen),
            }
        })
    }

    /// The model read `text` of this note (a slice read_note returned): every place it stands in the working copy
    /// counts as seen.
    pub(crate) fn saw(&mut self, text: &str) {
        let Some(seen) = &mut self.seen else {
            return;
        };
        if text.trim().is_empty() {
            return;
        }
        // The slice as it stands in the note, up to where they differ (a slice may end with a mark of its own).
        let mut probe = text.len().min(120);
        while !text.is_char_boundary(probe) {
            probe -= 1;
        }
        for (at, _) in self.body.match_indices(&text[..probe]) {
            let same = self.body[at..]
                .char_indices()
                .zip(text.chars())
                .take_while(|((_, a), b)| a == b)
                .last()
                .map_or(0, |((i, a), _)| i + a.len_utf8());
            seen.push((at, at + same));
        }
    }

    /// Refuses an edit of the bytes `start..end` when the model has not seen them all.
    fn check_seen(&self, start: usize, end: usize) -> Result<(), ToolError> {
        let Some(seen) = &self.seen else {
            return Ok(());
        };
        let mut ranges = seen.clone();
        ranges.sort_unstable();
        // Walk the covered stretch from `start`.
        let mut reached = start;
        for (a, b) in ranges {
            if a <= reached && b > reached {
                reached = b;
            }
            if reached >= end {
                return Ok(());
            }
        }
        if reached >= end && end > start {
            return Ok(());
        }
        let offset = self.body[..reached.min(self.body.len())].chars().count();
        Err(ToolError::new(format!(
            "That part of the note (from character {offset}) has not been read in this turn, so it cannot be \
             quoted or changed yet: read it with read_note (note_id {}, offset {offset}), then retry.",
            self.id
        )))
    }

    /// The seen ranges after the bytes `start..end` became `inserted` bytes: later ranges shift, the new text is seen.
    fn shift_seen(&mut self, start: usize, end: usize, inserted: usize) {
        let Some(seen) = &mut self.seen else {
            return;
        };
        let moved = |at: usize| {
            if at >= end {
                at + inserted - (end - start)
            } else {
                at.min(start)
            }
        };
        for range in seen.iter_mut() {
            *range = (moved(range.0), moved(range.1).max(moved(range.0)));
        }
        seen.push((start, start + inserted));
    }

    /// Runs one session tool; returns the edit and a short result for the model, or a message saying how to
    /// correct the call.
    pub(crate) fn run(&mut self, tool: SessionTool, args: &Value) -> Result<(Edit, Value), ToolError> {
        let (start, end, new_text) = match tool {
            SessionTool::EditSelection => {
                let input: TextInput = tool.parse(args)?;
                let selection = self
                    .selection
                    .ok_or_else(|| ToolError::new("There is no selection to edit."))?;
                (
                    byte_at(&self.body, selection.start).unwrap_or(0),
                    byte_at(&self.body, selection.end).unwrap_or(0),
                    input.text,
                )
            }
            SessionTool::RewriteParagraph => {
                let input: AnchorInput = tool.parse(args)?;
                let (start, end) = find_anchor(&self.body, &input.anchor)?;
                self.check_seen(start, end)?;
                let covered = self.body[start..end].chars().count();
                let total = self.body.chars().count();
                if total > LONG_NOTE_CHARS && covered as f64 > MOST_OF_THE_NOTE * total as f64 {
                    return Err(ToolError::new(
                        "The anchor covers most of the note. rewrite_paragraph rewrites one paragraph: quote \
                                just that paragraph as the anchor, and use several calls for several paragraphs.",
                    ));
                }
                (start, end, input.text)
            }
            SessionTool::InsertBeforeAnchor => {
                let input: AnchorInput = tool.parse(args)?;
                let (start, end) = find_anchor(&self.body, &input.anchor)?;
                self.check_seen(start, end)?;
                (start, start, input.text)
            }
            SessionTool::InsertAfterAnchor => {
                let input: AnchorInput = tool.parse(args)?;
                let (start, end) = find_anchor(&self.body, &input.anchor)?;
                self.check_seen(start, end)?;
                (end, end, input.text)
            }
            SessionTool::AppendToNote => {
                let input: TextInput = tool.parse(args)?;
                let separator = if self.body.is_empty() || self.body.ends_with('\n') {
                    ""
                } else {
                    "\n"
                };
                (self.body.len(), self.body.len(), format!("{separator}{}", input.text))
            }
            SessionTool::ReplaceStructuredBlock => {
                let input: BlockInput = tool.parse(args)?;
                let tag = input.tag;
                let blocks: Vec<(usize, usize)> = fenced_blocks(&self.body)
                    .into_iter()
                    .filter(|b| b.0.eq_ignore_ascii_case(tag.trim()))
                    .map(|b| (b.1, b.2))
                    .collect();
                let (start, end) = match blocks.as_slice() {
                    [one] => *one,
                    [] => {
                        return Err(ToolError::new(format!(
                            "The note has no ```{tag} block. Use the tag of an existing fenced block, or insert a new block with insert_after_anchor."
                        )));
                    }
                    several => {
                        return Err(ToolError::new(format!(
                            "The note has {} ```{tag} blocks, so it is not clear which one to replace. Use rewrite_paragraph with an anchor quoting the block instead.",
                            several.len()
                        )));
                    }
                };
                self.check_seen(start, end)?;
                let mut content = strip_fences(&input.text);
                if !content.is_empty() && !content.ends_with('\n') {
                    content.push('\n');
                }
                (start, end, content)
            }
        };
        let edit = Edit {
            tool: tool.name().to_owned(),
            start: self.body[..start].chars().count(),
            end: self.body[..end].chars().count(),
            text: new_text.clone(),
        };
        self.body.replace_range(start..end, &new_text);
        self.shift_seen(start, end, new_text.len());
        if let Some(selection) = &mut self.selection
            && tool == SessionTool::EditSelection
        {
            selection.end = selection.start + new_text.chars().count();
        }
        let summary = json!({
            "ok": true,
            "replaced_chars": edit.end - edit.start,
            "inserted_chars": new_text.chars().count(),
            "note_chars": self.body.chars().count(),
        });
        Ok((edit, summary))
    }
}

/// The byte range of the one place `anchor` occurs: exactly, or else after normalising whitespace and quotes.
pub(crate) fn find_anchor(body: &str, anchor: &str) -> Result<(usize, usize), ToolError> {
    if anchor.trim().is_empty() {
        return Err(ToolError::new(
            "The anchor is empty: quote a piece of the note's text exactly.",
        ));
    }
    let shown: String =
        anchor.chars().take(60).collect::<String>() + if anchor.chars().count() > 60 { "…" } else { "" };
    let exact: Vec<usize> = body.match_indices(anchor).map(|(i, _)| i).collect();
    match exact.as_slice() {
        [one] => return Ok((*one, one + anchor.len())),
        [] => {}
        several => return Err(ToolError::new(ambiguous(&shown, several.len()))),
    }
    let (normal_body, origins) = normalise(body);
    let (normal_anchor, _) = normalise(anchor.trim());
    let chars: Vec<char> = normal_body.chars().collect();
    let needle: Vec<char> = normal_anchor.chars().collect();
    let found: Vec<usize> = (0..chars.len().saturating_sub(needle.len()) + 1)
        .filter(|&i| chars.len() >= needle.len() && chars[i..i + needle.len()] == needle[..])
        .collect();
    match found.as_slice() {
        [one] => {
            let start = origins[*one].0;
            let end = origins[one + needle.len() - 1].1;
            Ok((start, end))
        }
        [] => Err(ToolError::new(format!(
            "The anchor \"{shown}\" was not found in the note. Quote text that appears in the note exactly (copy it from \
             the note), or read the note again: it may have changed."
        ))),
        several => Err(ToolError::new(ambiguous(&shown, several.len()))),
    }
}

fn ambiguous(shown: &str, count: usize) -> String {
    format!(
        "The anchor \"{shown}\" matches {count} places in the note. Quote more of the surrounding text so that it matches exactly one place."
    )
}

/// Whitespace runs become one space, curly quotes straight ones; each kept character remembers its byte range.
fn normalise(text: &str) -> (String, Vec<(usize, usize)>) {
    let mut out = String::new();
    let mut origins: Vec<(usize, usize)> = Vec::new();
    let mut in_space = false;
    for (i, c) in text.char_indices() {
        let end = i + c.len_utf8();
        if c.is_whitespace() {
            if in_space {
                if let Some(last) = origins.last_mut() {
                    last.1 = end;
                }
            } else {
                out.push(' ');
                origins.push((i, end));
                in_space = true;
            }
            continue;
        }
        in_space = false;
        out.push(match c {
            '\u{2018}' | '\u{2019}' | '\u{201a}' | '\u{2032}' => '\'',
            '\u{201c}' | '\u{201d}' | '\u{201e}' | '\u{2033}' => '"',
            other => other,
        });
        origins.push((i, end));
    }
    (out, origins)
}

/// Fenced code blocks: (info tag, content start byte, content end byte), as quire-core's scanner finds them.
pub(crate) fn fenced_blocks(body: &str) -> Vec<(String, usize, usize)> {
    quire_core::markdown::fenced_blocks(body)
        .into_iter()
        .map(|b| (b.tag, b.content_start, b.content_end))
        .collect()
}

/// The content of `text` when the model wrapped it in one fenced block of its own (of any fence length, with
/// backticks or tildes, as quire-core's scanner reads fences); otherwise `text` as it is.
fn strip_fences(text: &str) -> String {
    let trimmed = text.trim_matches('\n');
    let wrapped = format!("{trimmed}\n");
    match quire_core::markdown::fenced_blocks(&wrapped).as_slice() {
        [block]
            if !wrapped[..block.content_start].trim_end().contains('\n')
                && !wrapped[block.content_end..].trim_end().contains('\n') =>
        {
            wrapped[block.content_start..block.content_end]
                .trim_end_matches('\n')
                .to_owned()
        }
        _ => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edit::{apply_edits, unified_diff};

    fn check(body: &str, tool: &str, args: Value, expected: &str) {
        let mut copy = WorkingCopy {
            id: "n1".into(),
            body: body.to_owned(),
            selection: Some(Selection { start: 0, end: 5 }),
            seen: None,
        };
        let tool = SessionTool::from_name(tool).unwrap();
        let actual = match copy.run(tool, &args) {
            Ok((edit, _)) => {
                assert_eq!(
                    apply_edits(body, &[edit]).unwrap(),
                    copy.body,
                    "the edit reproduces the working copy"
                );
                copy.body
            }
            Err(e) => format!("error: {}", e.message()),
        };
        assert!(
            actual.starts_with(expected),
            "{} {args}\n got: {actual}\nwant: {expected}",
            tool.name()
        );
    }

    #[test]
    fn tools() {
        let body = "Hello world.\n\nIt’s a  nice day.\n\n```mermaid\ngraph TD\n```\n";
        check(body, "edit_selection", json!({"text": "Goodbye"}), "Goodbye world.");
        check(
            body,
            "insert_before_anchor",
            json!({"anchor": "world", "anchor2": 1, "text": "big "}),
            "Hello big world.",
        );
        check(
            body,
            "insert_after_anchor",
            json!({"anchor": "Hello", "text": ","}),
            "Hello, world.",
        );
        check(
            body,
            "rewrite_paragraph",
            json!({"anchor": "It's a nice day.", "text": "Rain."}),
            "Hello world.\n\nRain.\n",
        );
        check(
            body,
            "append_to_note",
            json!({"text": "The end."}),
            "Hello world.\n\nIt’s a  nice day.\n\n```mermaid\ngraph TD\n```\nThe end.",
        );
        check(
            body,
            "replace_structured_block",
            json!({"tag": "mermaid", "text": "```mermaid\ngraph LR\n```"}),
            "Hello world.\n\nIt’s a  nice day.\n\n```mermaid\ngraph LR\n```\n",
        );
        check(
            body,
            "insert_after_anchor",
            json!({"anchor": "l", "text": "x"}),
            "error: The anchor \"l\" matches 3 places",
        );
        check(
            body,
            "insert_after_anchor",
            json!({"anchor": "absent", "text": "x"}),
            "error: The anchor \"absent\" was not found",
        );
        check(
            body,
            "insert_after_anchor",
            json!({"anchor": " ", "text": "x"}),
            "error: The anchor is empty",
        );
        check(
            body,
            "replace_structured_block",
            json!({"tag": "mermaid", "text": "````mermaid\ngraph RL\n````"}),
            "Hello world.\n\nIt’s a  nice day.\n\n```mermaid\ngraph RL\n```\n",
        );
        check(
            body,
            "replace_structured_block",
            json!({"tag": "abc", "text": "x"}),
            "error: The note has no ```abc block",
        );
        check(
            body,
            "append_to_note",
            json!({}),
            "error: Invalid arguments for append_to_note: missing field `text`",
        );
        let long = "word ".repeat(100);
        check(
            &long,
            "rewrite_paragraph",
            json!({"anchor": long.trim(), "text": "x"}),
            "error: The anchor covers most of the note",
        );
    }

    #[test]
    fn later_edits_see_earlier_ones_and_selection_follows() {
        let mut copy = WorkingCopy {
            id: "n1".into(),
            body: "abc def".into(),
            selection: Some(Selection { start: 4, end: 7 }),
            seen: None,
        };
        let (e1, _) = copy
            .run(SessionTool::EditSelection, &json!({"text": "DEFINED"}))
            .unwrap();
        let (e2, _) = copy
            .run(
                SessionTool::InsertAfterAnchor,
                &json!({"anchor": "DEFINED", "text": "!"}),
            )
            .unwrap();
        let (e3, _) = copy.run(SessionTool::EditSelection, &json!({"text": "x"})).unwrap();
        assert_eq!(copy.body, "abc x!");
        assert_eq!(apply_edits("abc def", &[e1, e2, e3]).unwrap(), "abc x!");
        let diff = unified_diff("abc def\n", "abc x!\n", "note");
        assert!(diff.contains("-abc def") && diff.contains("+abc x!"), "{diff}");
    }
}

#[cfg(test)]
mod schema_tests {
    use serde_json::json;

    use super::{SessionTool, WorkingCopy};

    #[test]
    fn session_tool_schemas_are_portable_and_names_round_trip() {
        for tool in SessionTool::ALL {
            let problems = quire_tools::check_portable_schema(&tool.input_schema());
            assert!(problems.is_empty(), "{}: {problems:?}", tool.name());
            assert_eq!(SessionTool::from_name(tool.name()), Some(tool));
            assert_eq!(serde_json::to_value(tool).unwrap(), tool.name());
        }
        assert_eq!(SessionTool::from_name("update_note"), None);
    }

    #[test]
    fn edits_of_unseen_parts_are_refused_until_read_and_seen_parts_follow_edits() {
        let body = "alpha line\nbeta line\ngamma line\n".to_owned();
        let mut copy = WorkingCopy {
            id: "n1".into(),
            body: body.clone(),
            selection: None,
            // The model saw the first line only.
            seen: Some(vec![(0, 11)]),
        };
        let rewrite = |anchor: &str| json!({"anchor": anchor, "text": "changed"});
        let refused = copy
            .run(SessionTool::RewriteParagraph, &rewrite("gamma line"))
            .unwrap_err()
            .message()
            .to_owned();
        assert!(
            refused.contains("from character 21") && refused.contains("offset 21"),
            "{refused}"
        );
        // An insert before the seen line moves what was seen; quoting across seen and unseen text is refused.
        copy.run(
            SessionTool::InsertBeforeAnchor,
            &json!({"anchor": "alpha", "text": "zero\n"}),
        )
        .unwrap();
        assert!(copy.run(SessionTool::RewriteParagraph, &rewrite("line\nbeta")).is_err());
        copy.run(SessionTool::RewriteParagraph, &rewrite("alpha line")).unwrap();
        // Once read, the rest may be changed.
        copy.saw("beta line\ngamma line\n");
        copy.run(SessionTool::RewriteParagraph, &rewrite("gamma line")).unwrap();
        assert_eq!(copy.body, "zero\nchanged\nbeta line\nchanged\n");
    }
}
