//! `read_note`: a note's Markdown body, paged by characters, with an outline of headings for long notes.

use crate::prelude::*;

/// Characters returned when `max_chars` is not given.
const DEFAULT_CHARS: u64 = 20_000;
/// The most characters one call returns.
const MAX_CHARS: u64 = 100_000;
/// Notes longer than this come with an outline of their headings.
const OUTLINE_ABOVE: u64 = 4_000;

/// Arguments of `read_note`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Input {
    #[serde(alias = "id")]
    pub(crate) note_id: String,
    /// Start, in characters; next_offset continues.
    pub(crate) offset: Option<u64>,
    /// Default 20000, at most 100000.
    pub(crate) max_chars: Option<u64>,
}

/// A heading of the body.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Heading {
    /// 1 for `#`, 2 for `##`, ...
    pub(crate) level: u8,
    /// The heading's text.
    pub(crate) text: String,
    /// Where it starts, in characters; pass it as offset to read from there.
    pub(crate) offset: u64,
}

/// An attachment of the note.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct AttachmentRef {
    /// The attachment's id, for read_attachment.
    pub(crate) attachment_id: String,
    /// Its title, usually a file name.
    pub(crate) title: String,
    /// Its media type.
    pub(crate) mime: String,
    /// Its size in bytes.
    pub(crate) size: u64,
    /// Whether it has text that read_attachment can return.
    pub(crate) has_text: bool,
}

/// A link of the body that points at no note.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct UnresolvedLink {
    /// The link's target as written.
    pub(crate) target: String,
    /// Notes it may mean (several share that title: write `Notebook/Title` to pick one); empty when none.
    pub(crate) candidates: Vec<LinkCandidate>,
}

/// A note an unresolved link may mean.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct LinkCandidate {
    /// Its id.
    pub(crate) note_id: String,
    /// Its title.
    pub(crate) title: String,
    /// Its notebook's path.
    pub(crate) notebook_path: String,
}

/// The note and a slice of its body.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Output {
    /// The note.
    #[serde(flatten)]
    pub(crate) note: NoteInfo,
    /// The Markdown body from offset, at most max_chars characters.
    pub(crate) body: String,
    /// Where this slice starts, in characters.
    pub(crate) offset: u64,
    /// The length of the whole body, in characters.
    pub(crate) total_chars: u64,
    /// Whether the body goes on after this slice.
    pub(crate) has_more: bool,
    /// The offset to read the rest from, when has_more.
    pub(crate) next_offset: Option<u64>,
    /// The headings of the whole body, for long notes (empty otherwise).
    pub(crate) outline: Vec<Heading>,
    /// The note's attachments.
    pub(crate) attachments: Vec<AttachmentRef>,
    /// `[[links]]` of the body that point at no note, with the notes they may mean.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) unresolved_links: Vec<UnresolvedLink>,
}

tool! {
    /// Read a note: details and Markdown body. A long body comes in slices, with an outline of its headings.
    name: "read_note",
    title: "Read note",
    effect: read_only,
    input: Input,
    output: Output,
    run: run,
}

fn run(r: &Reader<'_>, input: Input) -> Result<Output, ToolError> {
    let note = r.note(&input.note_id)?;
    let attachments = r
        .attachments_of(&note)?
        .into_iter()
        .map(|a| AttachmentRef {
            attachment_id: a.id,
            title: a.title,
            mime: a.mime,
            size: a.size,
            has_text: a.has_text,
        })
        .collect();
    let offset = input.offset.unwrap_or(0);
    let max_chars = input.max_chars.unwrap_or(DEFAULT_CHARS).clamp(1, MAX_CHARS);
    let (body, total_chars) = crate::types::slice_chars(&note.body, offset, max_chars, "note")?;
    let end = offset + body.chars().count() as u64;
    let has_more = end < total_chars;
    let outline = if total_chars > OUTLINE_ABOVE {
        outline(&note.body)
    } else {
        Vec::new()
    };
    let unresolved_links = if offset == 0 {
        let notebooks = Notebooks::load(r)?;
        r.unresolved_links(&note.summary.id)?
            .into_iter()
            .map(|u| UnresolvedLink {
                target: u.target,
                candidates: u
                    .candidates
                    .iter()
                    .map(|c| LinkCandidate {
                        note_id: c.id.clone(),
                        title: c.title.clone(),
                        notebook_path: notebooks.note(c).notebook_path,
                    })
                    .collect(),
            })
            .collect()
    } else {
        Vec::new()
    };
    Ok(Output {
        unresolved_links,
        note: summary_info(r, &note.summary)?,
        body,
        offset,
        total_chars,
        has_more,
        next_offset: has_more.then_some(end),
        outline,
        attachments,
    })
}

/// The ATX headings (`# Title`) outside fenced code blocks, with their character offsets (quire-core's scanner).
fn outline(body: &str) -> Vec<Heading> {
    quire_core::markdown::headings(body)
        .into_iter()
        .map(|h| Heading {
            level: h.level,
            text: h.text,
            offset: h.offset as u64,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn outline_skips_code_and_counts_characters() {
        let body = "# Été\ntext\n```\n# not a heading\n```\n## Plan ##\n#hashtag\n";
        let headings: Vec<(u8, String, u64)> = super::outline(body)
            .into_iter()
            .map(|h| (h.level, h.text, h.offset))
            .collect();
        assert_eq!(headings, vec![(1, "Été".to_owned(), 0), (2, "Plan".to_owned(), 35)]);
    }
}
