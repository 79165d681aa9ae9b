//! ENML (Evernote's XHTML with its own elements) to Markdown: `<en-media>` an image or link to its resource,
//! `<en-todo>` a task-list checkbox, `<en-crypt>` a line saying what was left out, a table's first row its header, a
//! code block (`-en-codeblock`) a fenced block, a list written beside the items nested into the item before it;
//! htmd converts the rest (and a Joplin note's HTML).

use std::collections::HashMap;

use quick_xml::events::Event;

/// Checkbox marks put in the HTML where `<en-todo>` was, turned into `[x]` / `[ ]` after the conversion: characters
/// of the private use area, removed from the text before, so only the marks are left.
const CHECKED: char = '\u{F8F0}';
const UNCHECKED: char = '\u{F8F1}';

/// Marks, among the open elements, a list item that a nested list written beside the items was put back into (or
/// wrapped in): closed after that list.
const REOPENED_ITEM: &str = "(reopened li)";

/// The HTML to Markdown converter: `-` bullets, one space after list markers, `---` rules; scripts and styles
/// dropped.
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
        .build()
}

/// An HTML text (a Joplin web clip, say) as Markdown.
pub(crate) fn html_to_markdown(html: &str, converter: &htmd::HtmlToMarkdown) -> Result<String, String> {
    let html = html.replace([CHECKED, UNCHECKED], "");
    converter
        .convert(&html)
        .map_err(|e| format!("its HTML could not be converted: {e}"))
}

/// A resource, decoded and written.
pub(super) struct Media {
    pub(super) mime: String,
    pub(super) title: String,
}

/// A note's ENML as Markdown, its media pointing at the resources by hash (`:/HASH`, turned into attachment links
/// once they are written).
pub(super) fn enml_to_markdown(
    enml: &str,
    media: &HashMap<String, Media>,
    converter: &htmd::HtmlToMarkdown,
) -> Result<String, String> {
    let enml = enml.replace([CHECKED, UNCHECKED], "");
    let mut reader = quick_xml::Reader::from_str(&enml);
    reader.config_mut().allow_dangling_amp = true;
    reader.config_mut().check_end_names = false;
    let mut html = String::with_capacity(enml.len());
    // Inside <en-crypt>: its text is cipher text, left out.
    let mut crypt = 0usize;
    // Per open table, whether its first row is still to come or being read: Evernote's tables have no header
    // cells, and a Markdown table needs a header row, so the first row's cells become header cells.
    let mut tables: Vec<FirstRow> = Vec::new();
    // Open elements: the name, whether its tags are written, and (for a list item) how many `<div>`s it has had.
    // Evernote wraps each list item's text in a `<div>`, which would make every item a paragraph of its own.
    let mut open: Vec<(String, bool, usize)> = Vec::new();
    // An Evernote 10 checklist item's mark, until its text comes.
    let mut mark: Option<char> = None;
    // Inside an Evernote code block (`<div style="-en-codeblock:true">`, one `<div>` a line): where it is among the
    // open elements, and whether the current line has text yet. It becomes `<pre><code>`, a fenced block.
    let mut codeblock: Option<usize> = None;
    let mut line_has_text = false;
    loop {
        let event = reader
            .read_event()
            .map_err(|e| format!("its content is not well-formed ENML: {e}"))?;
        let starts = matches!(event, Event::Start(_));
        match event {
            Event::Start(e) | Event::Empty(e) if matches!(e.name().as_ref(), "en-media" | "en-todo" | "en-crypt") => {
                let attribute = |name: &str| {
                    e.try_get_attribute(name)
                        .ok()
                        .flatten()
                        .and_then(|a| {
                            a.normalized_value(quick_xml::XmlVersion::Implicit1_0)
                                .ok()
                                .map(|v| v.into_owned())
                        })
                        .unwrap_or_default()
                };
                match e.name().as_ref() {
                    "en-todo" => html.push(if attribute("checked") == "true" {
                        CHECKED
                    } else {
                        UNCHECKED
                    }),
                    "en-media" => {
                        let hash = attribute("hash").to_lowercase();
                        let (mime, title) = match media.get(&hash) {
                            Some(m) => (m.mime.clone(), m.title.clone()),
                            None => (attribute("type"), "attachment".to_owned()),
                        };
                        let title = quick_xml::escape::escape(title.as_str()).into_owned();
                        if mime.starts_with("image/") {
                            html.push_str(&format!("<img src=\":/{hash}\" alt=\"{title}\">"));
                        } else {
                            html.push_str(&format!("<a href=\":/{hash}\">{title}</a>"));
                        }
                    }
                    _ => {
                        html.push_str("<p>(encrypted text: not imported)</p>");
                        // `<en-crypt/>` has nothing inside to leave out.
                        if starts {
                            crypt += 1;
                        }
                    }
                }
            }
            Event::End(e) if matches!(e.name().as_ref(), "en-media" | "en-todo") => {}
            Event::End(e) if e.name().as_ref() == "en-crypt" => crypt = crypt.saturating_sub(1),
            _ if crypt > 0 => {}
            Event::Start(e) if codeblock.is_some() => {
                // A code block's lines: each `<div>` (or `<p>`) starts one; other tags are left out, text kept.
                let tag = e.name().as_ref().to_owned();
                if tag == "div" || tag == "p" {
                    if open.len() > codeblock.unwrap_or(0) + 1 || line_has_text || html.ends_with('\n') {
                        html.push('\n');
                    }
                    line_has_text = false;
                }
                open.push((tag, false, 0));
            }
            Event::Start(e)
                if e.name().as_ref() == "div"
                    && e.try_get_attribute("style").ok().flatten().is_some_and(|a| {
                        a.normalized_value(quick_xml::XmlVersion::Implicit1_0).is_ok_and(|v| {
                            let style: String = v.chars().filter(|c| !c.is_whitespace()).collect();
                            style.contains("-en-codeblock:true")
                        })
                    }) =>
            {
                html.push_str("<pre><code>");
                open.push(("div".to_owned(), false, 0));
                codeblock = Some(open.len() - 1);
                line_has_text = false;
            }
            Event::Start(e) => {
                let tag = e.name().as_ref().to_owned();
                match tag.as_str() {
                    "table" => tables.push(FirstRow::Ahead),
                    "tr" => {
                        if let Some(t) = tables.last_mut() {
                            *t = if *t == FirstRow::Ahead {
                                FirstRow::Reading
                            } else {
                                FirstRow::Read
                            };
                        }
                    }
                    _ => {}
                }
                let in_item = tag == "div" && open.last().is_some_and(|(t, ..)| t == "li");
                if in_item {
                    // The item's first `<div>` is left out, a later one starts a new line of the item.
                    if let Some((_, _, divs)) = open.last_mut() {
                        if *divs > 0 {
                            html.push_str("<br>");
                        }
                        *divs += 1;
                    }
                    open.push((tag, false, 0));
                    continue;
                }
                // Evernote also writes a nested list as a sibling of the items (`<ul><li>a</li><ul>...</ul></ul>`),
                // which HTML reads as a list with no item: it goes inside the item before it (reopened), or a new one.
                let is_list = |t: &str| t == "ul" || t == "ol";
                if is_list(&tag) && open.last().is_some_and(|(t, ..)| is_list(t)) {
                    let kept = html.trim_end().len();
                    if html[..kept].ends_with("</li>") {
                        html.truncate(kept - "</li>".len());
                    } else {
                        html.push_str("<li>");
                    }
                    open.push((REOPENED_ITEM.to_owned(), false, 0));
                }
                open.push((tag.clone(), true, 0));
                if tag == "en-note" {
                    html.push_str("<div>");
                } else if tag == "td" && tables.last() == Some(&FirstRow::Reading) {
                    html.push_str("<th>");
                } else {
                    html.push('<');
                    html.push_str(&e);
                    html.push('>');
                }
                // Evernote 10 writes a checklist as `<ul style="--en-todo:true">` with `<li style="--en-checked:…">`.
                // The mark goes before the item's first text (often inside a `<div>` of its own).
                if tag == "li" {
                    let style: String = e.chars().filter(|c| !c.is_whitespace()).collect();
                    if style.contains("--en-checked:true") {
                        mark = Some(CHECKED);
                    } else if style.contains("--en-checked:false") {
                        mark = Some(UNCHECKED);
                    }
                }
            }
            Event::Empty(e) if codeblock.is_some() && e.name().as_ref() == "br" && line_has_text => {
                html.push('\n');
                line_has_text = false;
            }
            // Inside a code block, other empty tags (and a `<br/>` on an empty line) add nothing.
            Event::Empty(_) if codeblock.is_some() => {}
            Event::End(_) if codeblock.is_some_and(|at| open.len() == at + 1) => {
                open.pop();
                html.push_str("</code></pre>");
                codeblock = None;
            }
            Event::End(_) if codeblock.is_some() => {
                open.pop();
            }
            Event::Empty(e) => {
                let tag = e.name().as_ref().to_owned();
                html.push('<');
                html.push_str(if tag == "en-note" { "div" } else { &e });
                html.push('>');
                if !is_void(&tag) {
                    html.push_str(&format!("</{}>", if tag == "en-note" { "div" } else { &tag }));
                }
            }
            Event::End(e) => {
                let tag = e.name().as_ref().to_owned();
                if open.pop().is_some_and(|(_, written, _)| !written) {
                    continue;
                }
                let in_first_row = tables.last() == Some(&FirstRow::Reading);
                match tag.as_str() {
                    "table" => {
                        tables.pop();
                    }
                    "tr" if in_first_row => {
                        if let Some(t) = tables.last_mut() {
                            *t = FirstRow::Read;
                        }
                    }
                    _ => {}
                }
                let tag = match tag.as_str() {
                    "en-note" => "div",
                    "td" if in_first_row => "th",
                    other => other,
                };
                html.push_str(&format!("</{tag}>"));
                if open.last().is_some_and(|(t, ..)| t == REOPENED_ITEM) {
                    open.pop();
                    html.push_str("</li>");
                }
            }
            Event::Text(t) if codeblock.is_some() => {
                line_has_text |= !t.is_empty();
                html.push_str(&t);
            }
            Event::Text(t) => {
                if !t.trim().is_empty()
                    && let Some(mark) = mark.take()
                {
                    html.push(mark);
                }
                html.push_str(&t);
            }
            Event::GeneralRef(r) => {
                html.push('&');
                html.push_str(&r);
                html.push(';');
            }
            Event::CData(t) => html.push_str(&quick_xml::escape::escape(&*t)),
            Event::Eof => break,
            // The declaration, doctype, comments, processing instructions.
            _ => {}
        }
    }
    let markdown = converter
        .convert(&html)
        .map_err(|e| format!("its content could not be converted: {e}"))?;
    Ok(tidy(&checkboxes(&markdown)))
}

/// Blank-looking lines made blank, no two blank lines in a row, and no blank line between two items of a list
/// (Evernote's `<div>`s around each line make loose lists and stray line breaks).
fn tidy(markdown: &str) -> String {
    let lines: Vec<&str> = markdown
        .lines()
        .map(|l| if l.trim().is_empty() { "" } else { l })
        .collect();
    let item = |line: &str| {
        let text = line.trim_start();
        let indent = line.len() - text.len();
        let bullet = text.starts_with("- ")
            || text.starts_with("* ")
            || text
                .split_once(". ")
                .is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        bullet.then_some(indent)
    };
    let mut out: Vec<&str> = Vec::with_capacity(lines.len());
    for (i, line) in lines.iter().enumerate() {
        if line.is_empty() {
            let previous = out.last().copied();
            if previous.is_none_or(str::is_empty) {
                continue;
            }
            let next = lines[i + 1..].iter().find(|l| !l.is_empty());
            if let (Some(a), Some(b)) = (previous.and_then(item), next.and_then(|l| item(l)))
                && a == b
            {
                continue;
            }
        }
        out.push(line);
    }
    while out.last().is_some_and(|l| l.is_empty()) {
        out.pop();
    }
    let mut text = out.join("\n");
    text.push('\n');
    text
}

/// Where a table's first row is, as its ENML is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FirstRow {
    Ahead,
    Reading,
    Read,
}

fn is_void(tag: &str) -> bool {
    matches!(
        tag,
        "br" | "hr"
            | "img"
            | "input"
            | "col"
            | "area"
            | "base"
            | "embed"
            | "link"
            | "meta"
            | "source"
            | "track"
            | "wbr"
    )
}

/// The checkbox marks as Markdown: a line starting with one (after a list bullet or not) becomes a task list
/// item; any other becomes `[x]` / `[ ]` in the text.
fn checkboxes(markdown: &str) -> String {
    if !markdown.contains([CHECKED, UNCHECKED]) {
        return markdown.to_owned();
    }
    let mut out = String::with_capacity(markdown.len());
    for line in markdown.split_inclusive('\n') {
        let content = line.trim_start();
        let indent = &line[..line.len() - content.len()];
        let after_bullet = content
            .strip_prefix("- ")
            .or_else(|| content.strip_prefix("* "))
            .unwrap_or(content)
            .trim_start_matches('\\');
        let mut done = None;
        if let Some(rest) = after_bullet.strip_prefix(CHECKED) {
            done = Some(("x", rest));
        } else if let Some(rest) = after_bullet.strip_prefix(UNCHECKED) {
            done = Some((" ", rest));
        }
        let line = match done {
            Some((mark, rest)) => format!("{indent}- [{mark}] {}", rest.trim_start()),
            None => line.to_owned(),
        };
        out.push_str(&line.replace(CHECKED, "[x] ").replace(UNCHECKED, "[ ] "));
    }
    out
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    fn markdown(enml: &str) -> String {
        super::enml_to_markdown(enml, &HashMap::new(), &super::converter()).unwrap_or_else(|e| e)
    }

    #[test]
    fn a_list_written_beside_the_items_nests_like_one_inside_an_item() {
        let standard = markdown("<en-note><ul><li>a<ul><li>b</li></ul></li><li>c</li></ul></en-note>");
        let sibling = markdown("<en-note><ul><li>a</li><ul><li>b</li></ul><li>c</li></ul></en-note>");
        assert_eq!(sibling, standard);
        assert_eq!(sibling.trim_end(), "- a\n  - b\n- c");
        let divs = markdown(
            "<en-note><ol><li><div>one</div></li><ol><li><div>one.a</div></li><ul><li><div>deep</div></li></ul></ol>\
             <li><div>two</div></li></ol></en-note>",
        );
        assert_eq!(divs.trim_end(), "1. one\n   1. one.a\n      - deep\n2. two");
        // A list that opens a list has no item before it: it gets one of its own.
        let first = markdown("<en-note><ul><ul><li>inner</li></ul><li>outer</li></ul></en-note>");
        assert!(first.contains("inner") && first.contains("- outer"), "{first}");
    }

    #[test]
    fn an_evernote_code_block_is_a_fenced_block_with_its_lines_as_written() {
        let enml = "<en-note><div>Before</div><div style=\"box-sizing: border-box; -en-codeblock: true;\">\
                    <div>fn main() {</div><div>    let a_b = 2 * 3; // *not* emphasis</div><div><br/></div>\
                    <div>    println!(\"&lt;{a_b}&gt;\");<br/>}</div></div><div>After</div></en-note>";
        assert_eq!(
            markdown(enml),
            "Before\n\n```\nfn main() {\n    let a_b = 2 * 3; // *not* emphasis\n\n    println!(\"<{a_b}>\");\n}\n```\n\nAfter\n"
        );
    }
}
