//! A folder of HTML files (a site saved from a browser, another app's HTML export): each `.html` or `.htm` file a
//! note, converted to Markdown as Evernote's and Joplin's HTML is (htmd), its title from `<title>` or its first
//! `<h1>`, links between the files and images beside them kept as links between notes and attachments. The folder
//! is walked as a Markdown folder is (see `folder.rs`).

use crate::enex::{converter, html_to_markdown, rich_html_to_markdown, strip_tags};

/// Whether a file name is an HTML note's.
pub(crate) fn is_html_name(lower: &str) -> bool {
    lower.ends_with(".html") || lower.ends_with(".htm")
}

/// How many Markdown and HTML files a folder holds, looking a few levels down (not into hidden folders) and at
/// the first few thousand entries: what tells a folder of HTML from one of Markdown.
pub(crate) fn count_below(dir: &std::path::Path) -> (usize, usize) {
    let (mut md, mut html) = (0, 0);
    let walk = walkdir::WalkDir::new(dir)
        .follow_root_links(false)
        .max_depth(4)
        .follow_links(false)
        .into_iter()
        .filter_entry(|e| e.depth() == 0 || !e.file_name().to_string_lossy().starts_with('.'))
        .take(5_000);
    for entry in walk.flatten().filter(|e| e.file_type().is_file()) {
        let name = entry.file_name().to_string_lossy().to_lowercase();
        if name.ends_with(".md") {
            md += 1;
        } else if is_html_name(&name) {
            html += 1;
        }
    }
    (md, html)
}

/// An HTML file as a note: its title (when the file names one) and its text as Markdown.
pub(crate) fn convert(html: &str) -> (Option<String>, String) {
    let title = element_text(html, "title").or_else(|| element_text(html, "h1"));
    let markdown = rich_html_to_markdown(html, &converter());
    // A first heading that is the title is not said twice.
    let body = match &title {
        Some(t) => {
            let trimmed = markdown.trim_start();
            trimmed
                .strip_prefix("# ")
                .and_then(|rest| rest.strip_prefix(t.as_str()))
                .filter(|rest| rest.is_empty() || rest.starts_with('\n'))
                .map_or(markdown.clone(), |rest| rest.trim_start_matches('\n').to_owned())
        }
        None => markdown,
    };
    (title, body)
}

/// The text of the first `<name>` element, tags inside it left out and entities read, when it has some.
fn element_text(html: &str, name: &str) -> Option<String> {
    let lower = html.to_ascii_lowercase();
    let open = format!("<{name}");
    let mut from = 0;
    let start = loop {
        let at = from + lower[from..].find(&open)?;
        let next = lower.as_bytes().get(at + open.len()).copied();
        if matches!(next, Some(b'>' | b' ' | b'\t' | b'\n' | b'\r')) {
            break at + lower[at..].find('>')? + 1;
        }
        from = at + open.len();
    };
    let end = start + lower[start..].find(&format!("</{name}"))?;
    // Tags out without parsing (what is inside a title may be nested without bound), entities read by the converter.
    let inner = strip_tags(&html[start..end]);
    let text = html_to_markdown(&format!("<p>{inner}</p>"), &converter()).ok()?;
    let text: String = text
        .replace(['*', '_', '`', '\\'], "")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    (!text.is_empty()).then_some(text)
}
