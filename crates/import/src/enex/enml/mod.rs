//! ENML (Evernote's XHTML with its own elements) to Markdown. The body is read the way a browser reads HTML
//! (html5ever, see [`parse`]), so markup errors are repaired and said, never a reason to lose a note; the tree is
//! then reshaped ([`rewrite`]): `<en-media>` an image or link to its resource, `<en-todo>` and checklists task
//! items, Evernote Tasks a checklist where their group was, `<en-crypt>` a labelled block of its cipher text, code
//! blocks fenced blocks, lists written beside the items nested, inline styles emphasis, hidden text left out; htmd
//! converts the result (and a Joplin note's HTML), and [`tidy`] finishes the Markdown.

mod dom;
mod inline;
mod lines;
mod lists;
mod parse;
mod rewrite;
#[cfg(test)]
mod tests;
mod tidy;

use std::collections::HashMap;

use htmd::Element;
use htmd::element_handler::{HandlerResult, Handlers};
use quire_core::Timestamp;

/// Checkbox marks put in the text where a checkbox was, turned into `[x]` / `[ ]` after the conversion: characters
/// of the private use area, removed from the text before, so only the marks are left.
const CHECKED: char = '\u{F8F0}';
const UNCHECKED: char = '\u{F8F1}';

/// The HTML to Markdown converter: `-` bullets, one space after list markers, `---` rules; scripts and styles
/// dropped; struck text `~~`, highlights `==`, underlines kept as `<u>` (Markdown has none; the preview shows it).
pub(crate) fn converter() -> htmd::HtmlToMarkdown {
    htmd::HtmlToMarkdown::builder()
        .options(htmd::options::Options {
            bullet_list_marker: htmd::options::BulletListMarker::Dash,
            ul_bullet_spacing: 1,
            ol_number_spacing: 1,
            hr_style: htmd::options::HrStyle::Dashes,
            ..htmd::options::Options::default()
        })
        .skip_tags(vec!["script", "style", "head", "title"])
        .add_handler(vec!["del", "s", "strike"], |h: &dyn Handlers, e: Element| {
            delimited(h, e, "~~", "~~")
        })
        .add_handler(vec!["mark"], |h: &dyn Handlers, e: Element| delimited(h, e, "==", "=="))
        .add_handler(vec!["u", "ins"], |h: &dyn Handlers, e: Element| {
            delimited(h, e, "<u>", "</u>")
        })
        .add_handler(vec!["br"], |_: &dyn Handlers, _: Element| {
            Some(format!("{}\n", tidy::BREAK).into())
        })
        .add_handler(vec!["hr"], |_: &dyn Handlers, _: Element| {
            Some(format!("\n\n{}\n\n", tidy::RULE).into())
        })
        .add_handler(vec!["a"], |h: &dyn Handlers, e: Element| {
            autolink(&e).or_else(|| h.fallback(e).map(plain_parentheses))
        })
        .build()
}

/// A link's address with its parentheses as written when they pair up (CommonMark allows that; htmd escapes them
/// all, which shows as `\(` in the text of the note).
fn plain_parentheses(mut result: HandlerResult) -> HandlerResult {
    let content = &result.content;
    if let Some(at) = content.rfind("](")
        && content.ends_with(')')
    {
        let address = &content[at + 2..content.len() - 1];
        if address.contains('\\') && !address.contains(char::is_whitespace) {
            let plain = address.replace("\\(", "(").replace("\\)", ")");
            let mut depth = 0i32;
            let paired = plain.chars().all(|c| {
                depth += match c {
                    '(' => 1,
                    ')' => -1,
                    _ => 0,
                };
                depth >= 0
            }) && depth == 0;
            if paired && !plain.contains('\\') {
                result.content = format!("{}]({plain})", &content[..at]);
            }
        }
    }
    result
}

/// A link whose text is its address (`<a href="https://x.org">https://x.org</a>`) as an autolink: `<https://x.org>`.
fn autolink(element: &Element) -> Option<HandlerResult> {
    let href = element
        .attrs
        .iter()
        .find(|a| &*a.name.local == "href")?
        .value
        .trim()
        .to_owned();
    let text = dom::text_content(element.node);
    let scheme = href.split_once(':').map(|(s, _)| s).unwrap_or_default();
    let absolute = !scheme.is_empty()
        && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        && !href.contains(|c: char| c.is_whitespace() || c == '<' || c == '>');
    (absolute && text.trim() == href).then(|| format!("<{href}>").into())
}

/// An inline element's Markdown between two delimiters, the whitespace at its edges kept outside them (CommonMark
/// does not close emphasis after a space).
fn delimited(handlers: &dyn Handlers, element: Element, open: &str, close: &str) -> Option<HandlerResult> {
    let content = handlers.walk_children(element.node).content;
    let inner = content.trim();
    if inner.is_empty() {
        return Some(content.into());
    }
    let before = &content[..content.len() - content.trim_start().len()];
    let after = &content[content.trim_end().len()..];
    Some(format!("{before}{open}{inner}{close}{after}").into())
}

/// An HTML text that could not be turned into Markdown, and why.
#[derive(Debug, thiserror::Error)]
#[error("its HTML could not be converted: {0}")]
pub(crate) struct NotConverted(String);

/// An HTML text (a Joplin web clip, say) as Markdown, finished as a note's is.
pub(crate) fn html_to_markdown(html: &str, converter: &htmd::HtmlToMarkdown) -> Result<String, NotConverted> {
    let html = html.replace([CHECKED, UNCHECKED, tidy::RULE, tidy::BREAK], "");
    converter
        .convert(&html)
        .map(|markdown| tidy::tidy(&markdown))
        .map_err(|e| NotConverted(e.to_string()))
}

/// A resource, decoded and written.
pub(super) struct Media {
    pub(super) mime: String,
    pub(super) title: String,
}

/// An Evernote task of the note (a `<task>` of its `<note>`).
#[derive(Debug, Clone, Default)]
pub(super) struct Task {
    pub(super) title: String,
    pub(super) done: bool,
    /// The task group it belongs to (`taskGroupNoteLevelID`), matched against a placeholder's `--en-id`.
    pub(super) group: String,
    /// Evernote's order of the tasks in a group.
    pub(super) sort: String,
    pub(super) due: Option<Timestamp>,
    /// The day it is due, as its owner sees it (`YYYY-MM-DD`).
    pub(super) due_day: Option<String>,
    /// Flagged as important in Evernote.
    pub(super) flagged: bool,
    /// The day of its reminder (UTC).
    pub(super) reminder_day: Option<String>,
}

/// A link to another Evernote note (`evernote:///view/...`), with its text: the target's title, by which it is
/// found among the notes of the export.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct NoteLink {
    pub(super) url: String,
    pub(super) text: String,
}

/// A note's ENML, converted.
pub(super) struct Converted {
    /// The Markdown, its media pointing at the resources by hash (`:/HASH`, turned into attachment links once
    /// they are written).
    pub(super) markdown: String,
    /// What was wrong with the ENML as XML, and repaired.
    pub(super) repaired: Option<String>,
    pub(super) note_links: Vec<NoteLink>,
}

/// Another app's HTML (Google Keep's rich text, a saved page) as Markdown, read the way an ENML body is: tolerant
/// parsing, inline styles (bold, italic, struck spans) as emphasis, checklists as tasks.
pub(crate) fn rich_html_to_markdown(html: &str, converter: &htmd::HtmlToMarkdown) -> String {
    let markdown = enml_to_markdown(html, &HashMap::new(), &[], converter).markdown;
    // A heading set in bold (Keep's are) is a heading: `# **Title**` is `# Title`.
    markdown
        .split_inclusive('\n')
        .map(|line| {
            let text = line.trim_end_matches('\n');
            let marks = text.len() - text.trim_start_matches('#').len();
            let inner = text[marks..]
                .strip_prefix(' ')
                .and_then(|t| t.strip_prefix("**"))
                .and_then(|t| t.strip_suffix("**"))
                .filter(|t| (1..=6).contains(&marks) && !t.contains("**"));
            match inner {
                Some(inner) => format!("{} {inner}{}", &text[..marks], &line[text.len()..]),
                None => line.to_owned(),
            }
        })
        .collect()
}

/// A note's ENML as Markdown.
pub(super) fn enml_to_markdown(
    enml: &str,
    media: &HashMap<String, Media>,
    tasks: &[Task],
    converter: &htmd::HtmlToMarkdown,
) -> Converted {
    let enml = enml.replace([CHECKED, UNCHECKED, tidy::RULE, tidy::BREAK], "");
    let (document, repaired) = parse::parse(&enml);
    let mut rewrite = rewrite::Rewrite {
        media,
        tasks,
        placed: vec![false; tasks.len()],
        note_links: Vec::new(),
    };
    rewrite.run(&document);
    rewrite::note_as_div(&document);
    let markdown = converter.tree_to_markdown(&document);
    Converted {
        markdown: tidy::tidy(&tidy::checkboxes(&markdown)),
        repaired,
        note_links: rewrite.note_links,
    }
}
