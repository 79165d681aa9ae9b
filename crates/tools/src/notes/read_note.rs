//! `read_note`: a note's Markdown body, paged by characters, with an outline of headings for long notes.

use crate::prelude::*;

/// The most characters one call returns; the output's token budget usually stops the slice first (about 10,000
/// characters of prose).
const MAX_CHARS: u64 = 100_000;
/// The estimated tokens given to the outline, the attachments and the unresolved links, each.
const PARTS_TOKENS: usize = 400;
/// Notes longer than this come with an outline of their headings.
const OUTLINE_ABOVE: u64 = 4_000;

/// Arguments of `read_note`.
#[allow(
    missing_docs,
    reason = "a doc comment would become a schema description the model pays for on every turn"
)]
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    #[serde(alias = "id")]
    pub note_id: String,
    /// Start, in characters; next_offset continues.
    pub offset: Option<u64>,
    /// Default: as many as fit, about 10000.
    pub max_chars: Option<u64>,
}

/// A heading of the body.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Heading {
    /// 1 for `#`, 2 for `##`, ...
    pub level: u8,
    /// The heading's text.
    pub text: String,
    /// Where it starts, in characters; pass it as offset to read from there.
    pub offset: u64,
}

/// An attachment of the note.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct AttachmentRef {
    /// The attachment's id, for read_attachment.
    pub attachment_id: String,
    /// Its title, usually a file name.
    pub title: String,
    /// Its media type.
    pub mime: String,
    /// Its size in bytes.
    pub size: u64,
    /// Whether it has text that read_attachment can return.
    pub has_text: bool,
}

/// A link of the body that points at no note.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct UnresolvedLink {
    /// The link's target as written.
    pub target: String,
    /// Notes it may mean (several share that title: write `Notebook/Title` to pick one); empty when none.
    pub candidates: Vec<LinkCandidate>,
}

/// A note an unresolved link may mean.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct LinkCandidate {
    /// Its id.
    pub note_id: String,
    /// Its title.
    pub title: String,
    /// Its notebook's path.
    pub notebook_path: String,
}

/// The note and a slice of its body.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Output {
    /// The note.
    #[serde(flatten)]
    pub note: NoteInfo,
    /// The Markdown body from offset, at most max_chars characters.
    pub body: String,
    /// Where this slice starts, in characters.
    pub offset: u64,
    /// The length of the whole body, in characters.
    pub total_chars: u64,
    /// Whether the body goes on after this slice.
    pub has_more: bool,
    /// The offset to read the rest from, when has_more.
    pub next_offset: Option<u64>,
    /// The headings of the whole body, for long notes (empty otherwise). When there are too many, the deepest
    /// levels are left out, then the last headings.
    pub outline: Vec<Heading>,
    /// Whether headings were left out of the outline.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub outline_is_partial: bool,
    /// The note's attachments.
    pub attachments: Vec<AttachmentRef>,
    /// How many attachments it has beyond those listed (absent when all are).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub more_attachments: Option<u64>,
    /// `[[links]]` of the body that point at no note, with the notes they may mean.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unresolved_links: Vec<UnresolvedLink>,
}

tool! {
    /// Read a note: details and Markdown body. A long body comes in slices, with an outline of its headings.
    name: "read_note",
    title: "Read note",
    effect: read_only,
    quick: true,
    input: Input,
    output: Output,
    run: run,
}

fn run(r: &Reader<'_>, input: Input) -> Result<Output, ToolError> {
    // Unresolved links come with the first slice only.
    let view = r.note_view(&input.note_id, input.offset.unwrap_or(0) == 0)?;
    let (note, links) = (view.note, view.unresolved_links);
    let mut attachments: Vec<AttachmentRef> = view
        .attachments
        .into_iter()
        .map(|a| AttachmentRef {
            attachment_id: a.id,
            title: crate::budget::shorten(&a.title, crate::types::TITLE_CHARS),
            mime: a.mime,
            size: a.size,
            has_text: a.has_text,
        })
        .collect();
    let more_attachments = crate::budget::fit_counted(&mut attachments, PARTS_TOKENS);
    let offset = input.offset.unwrap_or(0);
    let max_chars = input.max_chars.unwrap_or(MAX_CHARS).clamp(1, MAX_CHARS);
    let total_chars = note.body.chars().count() as u64;
    let (outline, outline_is_partial) = if total_chars > OUTLINE_ABOVE {
        fit_outline(outline(&note.body), PARTS_TOKENS)
    } else {
        (Vec::new(), false)
    };
    // The notebook tree is loaded only when a candidate's path is to be shown.
    let notebooks = if links.iter().any(|l| !l.candidates.is_empty()) {
        Some(Notebooks::load(r)?)
    } else {
        None
    };
    let mut unresolved_links: Vec<UnresolvedLink> = links
        .into_iter()
        .map(|u| UnresolvedLink {
            target: crate::budget::shorten(&u.target, CANDIDATE_CHARS * 2),
            candidates: u
                .candidates
                .iter()
                .take(MAX_CANDIDATES)
                .filter_map(|c| {
                    let info = notebooks.as_ref()?.note(c);
                    Some(LinkCandidate {
                        note_id: info.note_id,
                        title: crate::budget::shorten(&info.title, CANDIDATE_CHARS),
                        notebook_path: crate::budget::shorten(&info.notebook_path, CANDIDATE_CHARS),
                    })
                })
                .collect(),
        })
        .collect();
    crate::budget::fit(&mut unresolved_links, PARTS_TOKENS);
    let mut info = NoteInfo::new(&note.summary, view.notebook_path);
    // The whole title here, where there is room: a model writes links and renames from it.
    info.title.clone_from(&note.summary.title);
    let mut output = Output {
        unresolved_links,
        note: info,
        body: String::new(),
        offset,
        total_chars,
        has_more: false,
        next_offset: None,
        outline,
        outline_is_partial,
        attachments,
        more_attachments,
    };
    // The body gets what the rest of the answer leaves of the budget.
    let budget = OUTPUT_TOKENS.saturating_sub(crate::budget::estimate_json(&output) + 10);
    let (body, _) = crate::budget::slice(&note.body, offset, max_chars, budget, "note")?;
    let end = offset + body.chars().count() as u64;
    output.body = body;
    output.has_more = end < total_chars;
    output.next_offset = output.has_more.then_some(end);
    // The read ledger: the part of the note this answer holds, when not the whole of it.
    if offset > 0 || output.has_more {
        r.read_part(&note.summary.id, &format!("characters {offset}-{end} of {total_chars}"));
    }
    Ok(output)
}

/// Candidates listed for one unresolved link.
const MAX_CANDIDATES: usize = 3;
/// A candidate's title and path are shortened beyond this many characters.
const CANDIDATE_CHARS: usize = 100;

/// The outline within `budget` tokens: every heading when they fit, else the shallowest levels that fit, else the
/// first headings of level 1; with whether any were left out.
fn fit_outline(headings: Vec<Heading>, budget: usize) -> (Vec<Heading>, bool) {
    if crate::budget::is_unlimited() {
        return (headings, false);
    }
    let all = headings.len();
    let mut kept = headings;
    for level in (1..=6u8).rev() {
        kept.retain(|h| h.level <= level);
        if crate::budget::estimate_json(&kept) <= budget {
            let partial = kept.len() < all;
            return (kept, partial);
        }
    }
    crate::budget::fit(&mut kept, budget);
    (kept, true)
}

/// Headings in the outline are shortened beyond this many characters.
const HEADING_CHARS: usize = 120;

/// The ATX headings (`# Title`) outside fenced code blocks, with their character offsets (quire-core's scanner).
fn outline(body: &str) -> Vec<Heading> {
    quire_core::markdown::headings(body)
        .into_iter()
        .map(|h| Heading {
            level: h.level,
            text: crate::budget::shorten(&h.text, HEADING_CHARS),
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
