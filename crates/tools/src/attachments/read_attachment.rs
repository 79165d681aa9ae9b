//! `read_attachment`: the text extracted from an attachment, paged by characters.

use crate::prelude::*;

/// Arguments of `read_attachment`.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// From read_note's attachments.
    #[serde(alias = "id")]
    pub attachment_id: String,
    /// Chars.
    pub offset: Option<u64>,
    /// Or from page.
    pub page: Option<u32>,
    /// Default about 10000.
    pub max_chars: Option<u64>,
}

/// The attachment and a slice of its text.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Output {
    /// The attachment's id.
    pub attachment_id: String,
    /// The note it belongs to.
    pub note_id: String,
    /// Its title, usually a file name.
    pub title: String,
    /// Its media type.
    pub mime: String,
    /// Its size in bytes.
    pub size: u64,
    /// The text from offset.
    pub text: String,
    /// Where this slice starts, in characters.
    pub offset: u64,
    /// The length of the whole text, in characters.
    pub total_chars: u64,
    /// The page this slice starts on, from 1 (a PDF's pages, or 1).
    pub page: u32,
    /// How many pages the text has.
    pub pages: u32,
    /// Whether the text goes on after this slice.
    pub has_more: bool,
    /// The offset to read the rest from, when has_more.
    pub next_offset: Option<u64>,
}

tool! {
    /// Read the text of an attachment (a PDF, scan or text file), in slices.
    name: "read_attachment",
    title: "Read attachment",
    effect: read_only,
    input: Input,
    output: Output,
    run: run,
}

fn run(r: &Reader<'_>, input: Input) -> Result<Output, ToolError> {
    let info = r.attachment(&input.attachment_id)?;
    let text = r.attachment_text(&input.attachment_id)?.ok_or_else(|| {
        ToolError::new(format!(
            "The attachment '{}' ({}) has no readable text.",
            info.title, info.mime
        ))
    })?;
    let pages = quire_core::pages::count(&text);
    let offset = match input.page {
        Some(page) => quire_core::pages::start_char(&text, page).ok_or_else(|| {
            let plural = if pages == 1 { "" } else { "s" };
            ToolError::new(format!(
                "The attachment has {pages} page{plural}; there is no page {page}."
            ))
        })? as u64,
        None => input.offset.unwrap_or(0),
    };
    let max = input.max_chars.unwrap_or(100_000).clamp(1, 100_000);
    let mut output = Output {
        attachment_id: info.id,
        note_id: info.note_id,
        title: crate::budget::shorten(&info.title, crate::types::TITLE_CHARS),
        mime: info.mime,
        size: info.size,
        text: String::new(),
        offset,
        total_chars: 0,
        page: quire_core::pages::at_char(&text, usize::try_from(offset).unwrap_or(usize::MAX)),
        pages,
        has_more: false,
        next_offset: None,
    };
    // The text gets what the rest of the answer leaves of the budget.
    let budget = OUTPUT_TOKENS.saturating_sub(crate::budget::estimate_json(&output) + 10);
    let (slice, total_chars) = crate::budget::slice(&text, offset, max, budget, "text")?;
    let end = offset + slice.chars().count() as u64;
    output.text = slice;
    output.total_chars = total_chars;
    output.has_more = end < total_chars;
    output.next_offset = output.has_more.then_some(end);
    Ok(output)
}
