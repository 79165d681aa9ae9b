//! The system prompt: the workspace, the focused note and selection, the Markdown rules, the selection rule.

use crate::context::NoteContext;

const MARKDOWN_RULES: &str = "\
Notes are Markdown (CommonMark, GitHub tables, task lists `- [ ]`, fenced code; ```mermaid is a diagram). Keep a \
note's style (headings, list markers, line breaks). Link a note as [[Title]] or [text](quire://note/ID). Never wrap a \
whole answer in a code block when writing into a note.";

/// Builds the system prompt of a turn. It is computed once per turn and sent unchanged at every step, so a
/// provider's prompt cache keeps working. Every word is paid on every request: `cargo xtask bench prompt` counts
/// it with the tool definitions, against a budget.
pub fn system_prompt(context: &NoteContext) -> String {
    let mut prompt = String::from(
        "You are the assistant in quire, the user's local notes: Markdown notes in notebooks, with tags and \
         attributes.\n\
         Find, read and change notes with the tools; never guess a note's content or id. Search before creating. \
         Change only what was asked. Changes are saved as revisions the user can undo; deleting needs their approval. \
         Protected notes show their title only: you cannot read or change them, so say so. A tool error says how to \
         fix the call. Lists come in pages: with has_more, ask again at offset plus the items you got (a long text: at next_offset).\n\n",
    );
    prompt.push_str(MARKDOWN_RULES);
    prompt.push_str("\n\n");
    match &context.note {
        None => prompt.push_str("No note is open in the editor."),
        Some(note) => {
            let view = crate::view::note_view(note, context.view_budget());
            prompt.push_str(&format!(
                "The user has this note open in the editor (id {}).\nTitle: {}\n{}",
                note.id, note.title, view.text
            ));
            match context.selected_text() {
                Some(selected) => prompt.push_str(&format!(
                    "\nThe user selected:\n<selection>\n{selected}\n</selection>\nChange only the selection, with \
                     edit_selection.\n"
                )),
                None => prompt.push_str(
                    "\nChange this note with rewrite_paragraph, insert_before_anchor, insert_after_anchor or \
                     append_to_note (anchors quote its text exactly); the user reviews the diff.\n",
                ),
            }
        }
    }
    prompt
}
