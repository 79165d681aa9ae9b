//! ENML generated from Markdown comes back as that Markdown: a small document is drawn from a grammar (paragraphs
//! with bold, italic, struck, highlighted, underlined and code spans and links, hard breaks, headings, bullet,
//! numbered and task lists nested up to three deep with items of one or two lines, fenced code with indentation and
//! `*`/`_`, block quotes), written as ENML the way Evernote writes it (a `<div>` per line, paragraphs apart by an
//! empty `<div>`, a nested list inside its
//! item or beside it, `-en-codeblock` divs, `--en-todo` checklists, styles as tags or as inline CSS, empty `<div>`s
//! between blocks), wrapped in an ENEX file and imported; the note's body must be the Markdown. The grammar only
//! draws Markdown in the one form quire writes, so the comparison is exact.

use proptest::prelude::*;
use quire_core::{Actor, Workspace};
use quire_import::{ImportOptions, import};

const WORDS: &[&str] = &[
    "alpha",
    "beta",
    "gamma",
    "delta",
    "river",
    "stone",
    "Lisbon",
    "tea",
    "中文",
    "Привет",
    "café",
    "naïve",
];
const URLS: &[&str] = &[
    "https://example.org/",
    "https://example.org/a?b=1&c=2",
    "mailto:ana@example.org",
];
/// The text of code spans: characters that would be markup outside code.
const CODE_WORDS: &[&str] = &["a*b", "x_y", "<tag>", "f(x)", "#1", "a & b"];
/// Lines of code blocks: Markdown and HTML look-alikes that must come back as written.
const CODE_LINES: &[&str] = &[
    "let x = a * b;",
    "fn f(_a: u8) {}",
    "# not a heading",
    "- not a list",
    "x < y && y > z",
    "**kept** as _is_",
    "1. not a number",
    "}",
];

#[derive(Debug, Clone)]
enum Inline {
    Word(usize),
    /// Words, and which of Evernote's ways of writing the style.
    Bold(Vec<usize>, usize),
    Italic(Vec<usize>, usize),
    Strike(Vec<usize>, usize),
    Highlight(Vec<usize>, usize),
    Underline(Vec<usize>),
    /// Words and a URL.
    Link(Vec<usize>, usize),
    Code(usize),
}

#[derive(Debug, Clone, Copy)]
enum Kind {
    Bullet,
    Numbered,
    Task,
}

#[derive(Debug, Clone)]
struct Item {
    text: Vec<Inline>,
    /// A second line of the item (a second `<div>` in it).
    more: Option<Vec<Inline>>,
    checked: bool,
    children: Option<List>,
}

#[derive(Debug, Clone)]
struct List {
    kind: Kind,
    items: Vec<Item>,
    /// Evernote's form: a nested list written beside its item instead of inside it.
    beside: bool,
}

#[derive(Debug, Clone)]
enum Block {
    /// Lines joined by hard breaks.
    Paragraph(Vec<Vec<Inline>>),
    Heading(usize, Vec<Inline>),
    List(List),
    /// Lines as (indent, line; `None` an empty line), and whether the indent is written as `&nbsp;`.
    Code(Vec<(usize, Option<usize>)>, bool),
    Quote(Vec<Vec<Inline>>),
}

fn words() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(0..WORDS.len(), 1..3)
}

fn inline() -> impl Strategy<Value = Inline> {
    prop_oneof![
        3 => (0..WORDS.len()).prop_map(Inline::Word),
        1 => (words(), 0..4usize).prop_map(|(w, f)| Inline::Bold(w, f)),
        1 => (words(), 0..3usize).prop_map(|(w, f)| Inline::Italic(w, f)),
        1 => (words(), 0..4usize).prop_map(|(w, f)| Inline::Strike(w, f)),
        1 => (words(), 0..3usize).prop_map(|(w, f)| Inline::Highlight(w, f)),
        1 => words().prop_map(Inline::Underline),
        1 => (words(), 0..URLS.len()).prop_map(|(w, u)| Inline::Link(w, u)),
        1 => (0..CODE_WORDS.len()).prop_map(Inline::Code),
    ]
}

/// A line of text: it starts with a plain word, so it can never read as a block marker.
fn line() -> impl Strategy<Value = Vec<Inline>> {
    (0..WORDS.len(), prop::collection::vec(inline(), 0..4)).prop_map(|(first, rest)| {
        let mut line = vec![Inline::Word(first)];
        line.extend(rest);
        line
    })
}

fn list(depth: usize) -> BoxedStrategy<List> {
    let child = if depth < 3 {
        prop::option::weighted(0.35, list(depth + 1)).boxed()
    } else {
        Just(None).boxed()
    };
    let kind = prop_oneof![Just(Kind::Bullet), Just(Kind::Numbered), Just(Kind::Task)];
    let item = (line(), prop::option::weighted(0.2, line()), any::<bool>(), child);
    (kind, prop::collection::vec(item, 1..4), any::<bool>())
        .prop_map(|(kind, items, beside)| List {
            kind,
            items: items
                .into_iter()
                .map(|(text, more, checked, children)| Item {
                    text,
                    more,
                    checked,
                    children,
                })
                .collect(),
            beside,
        })
        .boxed()
}

fn code_lines() -> impl Strategy<Value = Vec<(usize, Option<usize>)>> {
    let line = (0..3usize, prop::option::weighted(0.85, 0..CODE_LINES.len()));
    (
        0..CODE_LINES.len(),
        prop::collection::vec(line, 0..4),
        0..CODE_LINES.len(),
    )
        .prop_map(|(first, middle, last)| {
            // The first and last lines have text: an empty line at either end is not part of what is tested here.
            let mut lines = vec![(0, Some(first))];
            lines.extend(
                middle
                    .into_iter()
                    .map(|(indent, l)| (if l.is_some() { indent * 4 } else { 0 }, l)),
            );
            lines.push((0, Some(last)));
            lines
        })
}

fn block() -> impl Strategy<Value = Block> {
    prop_oneof![
        3 => prop::collection::vec(line(), 1..3).prop_map(Block::Paragraph),
        1 => (1..4usize, line()).prop_map(|(level, text)| Block::Heading(level, text)),
        3 => list(1).prop_map(Block::List),
        2 => (code_lines(), any::<bool>()).prop_map(|(lines, nbsp)| Block::Code(lines, nbsp)),
        1 => prop::collection::vec(line(), 1..3).prop_map(Block::Quote),
    ]
}

/// Blocks, each with whether an empty `<div>` follows it. Two lists in a row are one list in Markdown, so a
/// paragraph goes between them.
fn document() -> impl Strategy<Value = Vec<(Block, bool)>> {
    prop::collection::vec((block(), any::<bool>()), 1..6).prop_map(|blocks| {
        let mut out: Vec<(Block, bool)> = Vec::new();
        for (block, spacer) in blocks {
            if matches!(block, Block::List(_)) && matches!(out.last(), Some((Block::List(_), _))) {
                out.push((Block::Paragraph(vec![vec![Inline::Word(0)]]), false));
            }
            out.push((block, spacer));
        }
        out
    })
}

fn joined(ws: &[usize]) -> String {
    ws.iter().map(|w| WORDS[*w]).collect::<Vec<_>>().join(" ")
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

fn inline_md(line: &[Inline]) -> String {
    let parts: Vec<String> = line
        .iter()
        .map(|i| match i {
            Inline::Word(w) => WORDS[*w].to_owned(),
            Inline::Bold(ws, _) => format!("**{}**", joined(ws)),
            Inline::Italic(ws, _) => format!("*{}*", joined(ws)),
            Inline::Strike(ws, _) => format!("~~{}~~", joined(ws)),
            Inline::Highlight(ws, _) => format!("=={}==", joined(ws)),
            Inline::Underline(ws) => format!("<u>{}</u>", joined(ws)),
            Inline::Link(ws, u) => format!("[{}]({})", joined(ws), URLS[*u]),
            Inline::Code(c) => format!("`{}`", CODE_WORDS[*c]),
        })
        .collect();
    parts.join(" ")
}

fn inline_enml(line: &[Inline]) -> String {
    let parts: Vec<String> = line
        .iter()
        .map(|i| match i {
            Inline::Word(w) => WORDS[*w].to_owned(),
            // Evernote starts a new span where only the colour changes: two bold spans side by side are one run.
            Inline::Bold(ws, 3) if ws.len() > 1 => format!(
                "<span style=\"font-weight: bold;\">{}</span><span style=\"font-weight: bold; color: red;\"> {}</span>",
                WORDS[ws[0]],
                joined(&ws[1..])
            ),
            Inline::Bold(ws, form) => {
                let (open, close) = [
                    ("<b>", "</b>"),
                    ("<strong>", "</strong>"),
                    ("<span style=\"font-weight: bold;\">", "</span>"),
                    ("<b>", "</b>"),
                ][*form];
                format!("{open}{}{close}", joined(ws))
            }
            Inline::Italic(ws, form) => {
                let (open, close) = [
                    ("<i>", "</i>"),
                    ("<em>", "</em>"),
                    ("<span style=\"font-style: italic;\">", "</span>"),
                ][*form];
                format!("{open}{}{close}", joined(ws))
            }
            Inline::Strike(ws, form) => {
                let (open, close) = [
                    ("<s>", "</s>"),
                    ("<strike>", "</strike>"),
                    ("<del>", "</del>"),
                    ("<span style=\"text-decoration: line-through;\">", "</span>"),
                ][*form];
                format!("{open}{}{close}", joined(ws))
            }
            Inline::Highlight(ws, form) => {
                let style = [
                    "--en-highlight:yellow;background-color: #ffef9e;",
                    "background-color: rgb(255, 250, 165);-evernote-highlight:true;",
                    "background-color: #b7f7d1;",
                ][*form];
                format!("<span style=\"{style}\">{}</span>", joined(ws))
            }
            Inline::Underline(ws) => format!("<u>{}</u>", joined(ws)),
            Inline::Link(ws, u) => format!("<a href=\"{}\">{}</a>", escape(URLS[*u]), joined(ws)),
            Inline::Code(c) => format!("<code>{}</code>", escape(CODE_WORDS[*c])),
        })
        .collect();
    parts.join(" ")
}

fn list_md(list: &List, indent: usize, out: &mut Vec<String>) {
    for (n, item) in list.items.iter().enumerate() {
        let marker = match list.kind {
            Kind::Numbered => format!("{}. ", n + 1),
            Kind::Bullet | Kind::Task => "- ".to_owned(),
        };
        let task = match (list.kind, item.checked) {
            (Kind::Task, true) => "[x] ",
            (Kind::Task, false) => "[ ] ",
            _ => "",
        };
        out.push(format!("{}{marker}{task}{}", " ".repeat(indent), inline_md(&item.text)));
        if let Some(more) = &item.more {
            // The line before ends in a hard break; this one starts at the item's text column.
            if let Some(last) = out.last_mut() {
                last.push_str("  ");
            }
            out.push(format!("{}{}", " ".repeat(indent + marker.len()), inline_md(more)));
        }
        if let Some(children) = &item.children {
            list_md(children, indent + marker.len(), out);
        }
    }
}

fn list_enml(list: &List, out: &mut String) {
    let (tag, style) = match list.kind {
        Kind::Bullet => ("ul", ""),
        Kind::Numbered => ("ol", ""),
        Kind::Task => ("ul", " style=\"--en-todo:true;\""),
    };
    out.push_str(&format!("<{tag}{style}>"));
    for item in &list.items {
        match list.kind {
            Kind::Task => out.push_str(&format!("<li style=\"--en-checked:{};\">", item.checked)),
            _ => out.push_str("<li>"),
        }
        out.push_str(&format!("<div>{}</div>", inline_enml(&item.text)));
        if let Some(more) = &item.more {
            out.push_str(&format!("<div>{}</div>", inline_enml(more)));
        }
        match &item.children {
            Some(children) if list.beside => {
                out.push_str("</li>");
                list_enml(children, out);
            }
            Some(children) => {
                list_enml(children, out);
                out.push_str("</li>");
            }
            None => out.push_str("</li>"),
        }
    }
    out.push_str(&format!("</{tag}>"));
}

/// The document as quire writes Markdown.
fn markdown(doc: &[(Block, bool)]) -> String {
    let blocks: Vec<String> = doc
        .iter()
        .map(|(block, _)| match block {
            Block::Paragraph(lines) => lines.iter().map(|l| inline_md(l)).collect::<Vec<_>>().join("  \n"),
            Block::Heading(level, text) => format!("{} {}", "#".repeat(*level), inline_md(text)),
            Block::List(list) => {
                let mut lines = Vec::new();
                list_md(list, 0, &mut lines);
                lines.join("\n")
            }
            Block::Code(lines, _) => {
                let body: Vec<String> = lines
                    .iter()
                    .map(|(indent, l)| l.map_or(String::new(), |l| format!("{}{}", " ".repeat(*indent), CODE_LINES[l])))
                    .collect();
                format!("```\n{}\n```", body.join("\n"))
            }
            Block::Quote(paragraphs) => paragraphs
                .iter()
                .map(|p| format!("> {}", inline_md(p)))
                .collect::<Vec<_>>()
                .join("\n>\n"),
        })
        .collect();
    format!("{}\n", blocks.join("\n\n"))
}

/// The document as Evernote writes ENML.
fn enml(doc: &[(Block, bool)]) -> String {
    let mut out = String::from("<en-note>");
    for (at, (block, spacer)) in doc.iter().enumerate() {
        match block {
            // A line a `<div>`, as Evernote writes them; a paragraph ends at an empty `<div>` (the blank line typed)
            // or at a block that is not a line.
            Block::Paragraph(lines) => {
                for line in lines {
                    out.push_str(&format!("<div>{}</div>", inline_enml(line)));
                }
                if !spacer && matches!(doc.get(at + 1), Some((Block::Paragraph(_), _))) {
                    out.push_str("<div><br /></div>");
                }
            }
            Block::Heading(level, text) => out.push_str(&format!("<h{level}>{}</h{level}>", inline_enml(text))),
            Block::List(list) => list_enml(list, &mut out),
            Block::Code(lines, nbsp) => {
                out.push_str(
                    "<div style=\"box-sizing: border-box; font-family: Monaco, monospace; -en-codeblock:true;\">",
                );
                for (indent, l) in lines {
                    match l {
                        None => out.push_str("<div><br /></div>"),
                        Some(l) => {
                            let space = if *nbsp { "&nbsp;" } else { " " };
                            out.push_str(&format!(
                                "<div>{}{}</div>",
                                space.repeat(*indent),
                                escape(CODE_LINES[*l])
                            ));
                        }
                    }
                }
                out.push_str("</div>");
            }
            Block::Quote(paragraphs) => {
                out.push_str("<blockquote>");
                for (i, p) in paragraphs.iter().enumerate() {
                    if i > 0 {
                        out.push_str("<div><br /></div>");
                    }
                    out.push_str(&format!("<div>{}</div>", inline_enml(p)));
                }
                out.push_str("</blockquote>");
            }
        }
        if *spacer {
            out.push_str("<div><br /></div>");
        }
    }
    out.push_str("</en-note>");
    out
}

fn enex(enml: &str) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <!DOCTYPE en-export SYSTEM \"http://xml.evernote.com/pub/evernote-export4.dtd\">\n\
         <en-export export-date=\"20250110T090000Z\" application=\"Evernote\" version=\"10.120.3\">\n\
         <note><title>Generated</title><created>20240101T000000Z</created><updated>20240101T000000Z</updated>\
         <note-attributes></note-attributes><content><![CDATA[<?xml version=\"1.0\" encoding=\"UTF-8\" \
         standalone=\"no\"?>\n<!DOCTYPE en-note SYSTEM \"http://xml.evernote.com/pub/enml2.dtd\">{enml}]]></content>\
         </note>\n</en-export>\n"
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn enml_written_from_markdown_imports_as_that_markdown(doc in document()) {
        let expected = markdown(&doc);
        let enml = enml(&doc);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("generated.enex");
        std::fs::write(&path, enex(&enml)).unwrap();
        let ws = Workspace::open_in_memory().unwrap();
        let report = import(&ws, &path, &ImportOptions::default(), &|_, _| {}).unwrap();
        prop_assert_eq!((report.imported, report.failed), (1, 0), "{:#?}", report);
        let id = report.items.iter().find_map(|i| i.note_id.clone()).unwrap();
        let body = ws.read(&Actor::User, |r| r.note(&id)).unwrap().body;
        prop_assert_eq!(body, expected, "ENML:\n{}", enml);
    }
}
