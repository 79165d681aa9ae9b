//! ENML (Evernote's XHTML with its own elements) to Markdown. The body is read the way a browser reads HTML
//! (html5ever, see [`parse`]), so markup errors are repaired and said, never a reason to lose a note; the tree is
//! then reshaped ([`rewrite`]): `<en-media>` an image or link to its resource, `<en-todo>` and checklists task
//! items, Evernote Tasks a checklist where their group was, `<en-crypt>` a labelled block of its cipher text, code
//! blocks fenced blocks, lists written beside the items nested, inline styles emphasis, hidden text left out; htmd
//! converts the result (and a Joplin note's HTML), and [`tidy`] finishes the Markdown.

pub(crate) mod dom;
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

/// Deeper than this, a body is kept as its text (see [`enml_to_markdown`]).
const MAX_DEPTH: usize = 500;

/// How deep the elements of `html` nest, read from its tags alone (an upper bound: what a parser would close on
/// its own is counted open).
fn rough_depth(html: &str) -> usize {
    // Elements that never hold anything, and those whose closing tag HTML lets a page leave out (a list of
    // thousands of `<li>`s without `</li>` is not deep).
    const VOID: &[&str] = &[
        "br", "img", "hr", "input", "meta", "link", "area", "base", "col", "embed", "source", "track", "wbr", "param",
        "p", "li", "dt", "dd", "tr", "td", "th", "option", "optgroup", "thead", "tbody", "tfoot", "colgroup", "rt",
        "rp", "html", "head", "body",
    ];
    let (mut depth, mut deepest) = (0usize, 0usize);
    let bytes = html.as_bytes();
    for (at, _) in html.match_indices('<') {
        match bytes.get(at + 1) {
            Some(b'/') => depth = depth.saturating_sub(1),
            Some(c) if c.is_ascii_alphabetic() => {
                let rest = &html[at + 1..];
                let end = rest.find('>').unwrap_or(rest.len());
                let name_end = rest[..end]
                    .find(|c: char| !c.is_ascii_alphanumeric() && c != '-')
                    .unwrap_or(end);
                let name = rest[..name_end].to_ascii_lowercase();
                if !rest[..end].ends_with('/') && !VOID.contains(&name.as_str()) {
                    depth += 1;
                    deepest = deepest.max(depth);
                }
            }
            _ => {}
        }
    }
    deepest
}

/// The text of `html` with its tags left out (and what is inside `<title>`, `<script>` and `<style>` aside).
pub(crate) fn strip_tags(html: &str) -> String {
    let mut out = String::new();
    let mut rest = html;
    while let Some(at) = rest.find('<') {
        out.push_str(&rest[..at]);
        let after = &rest[at..];
        let lower = after.get(..8).unwrap_or(after).to_ascii_lowercase();
        let skip_to = ["<title", "<script", "<style"]
            .iter()
            .find(|t| lower.starts_with(*t))
            .and_then(|t| {
                let close = format!("</{}", &t[1..]);
                after.to_ascii_lowercase().find(&close)
            });
        let from = skip_to.unwrap_or(0);
        rest = match after[from..].find('>') {
            Some(end) => {
                out.push(' ');
                &after[from + end + 1..]
            }
            None => "",
        };
    }
    out.push_str(rest);
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The text of a document nested deeper than [`MAX_DEPTH`] (read without recursion), or `None`.
fn too_deep(document: &markup5ever_rcdom::Handle) -> Option<String> {
    let mut stack = vec![(document.clone(), 0usize)];
    let mut deep = false;
    while let Some((node, depth)) = stack.pop() {
        if depth > MAX_DEPTH {
            deep = true;
            break;
        }
        for child in node.children.borrow().iter() {
            stack.push((child.clone(), depth + 1));
        }
    }
    if !deep {
        return None;
    }
    let mut text = String::new();
    let mut stack = vec![document.clone()];
    while let Some(node) = stack.pop() {
        if let Some(t) = dom::text_of(&node) {
            text.push_str(&t);
        }
        if dom::is(&node, &["title", "script", "style"]) {
            continue;
        }
        for child in node.children.borrow().iter().rev() {
            stack.push(child.clone());
        }
    }
    Some(text.split_whitespace().collect::<Vec<_>>().join(" "))
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
    // Far too deep to parse in reasonable time (a browser's parser checks the open elements at each tag): its text.
    if rough_depth(&enml) > 4 * MAX_DEPTH {
        return Converted {
            markdown: strip_tags(&enml),
            repaired: Some(format!(
                "its elements are nested more than {MAX_DEPTH} deep: its text is kept without its formatting"
            )),
            note_links: Vec::new(),
        };
    }
    let (document, repaired) = parse::parse(&enml);
    // The conversion walks the tree recursively: a body nested deeper than any real note (200,000 `<div>`s from a
    // hostile file) is kept as its text instead of overflowing the stack.
    if let Some(text) = too_deep(&document) {
        return Converted {
            markdown: text,
            repaired: Some(format!(
                "its elements are nested more than {MAX_DEPTH} deep: its text is kept without its formatting"
            )),
            note_links: Vec::new(),
        };
    }
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
