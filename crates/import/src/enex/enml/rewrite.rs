//! The note's tree made into HTML that converts to the Markdown a person expects: Evernote's own elements and
//! style-borne blocks become standard ones, and what HTML allows but Markdown cannot say is reshaped. Two passes:
//! blocks first (hidden text, `<en-crypt>`, `<en-media>`, `<en-todo>`, task groups, code blocks, callouts, lists
//! written beside their items), then what depends on them (list items' `<div>`s, checklist marks, inline styles,
//! links around blocks, image text, table headers).

use std::collections::HashMap;

use markup5ever_rcdom::Handle;

use super::dom::{
    append, attr, children, element, find, insert_after, insert_before, is, is_block, parent, prepend,
    previous_element, replace, set_attr, shallow_copy, style, style_value, tag, text, text_content, unwrap,
    wrap_children,
};
use super::{CHECKED, Media, NoteLink, Task, UNCHECKED};

/// What the rewrite reads and gathers.
pub(super) struct Rewrite<'a> {
    pub(super) media: &'a HashMap<String, Media>,
    pub(super) tasks: &'a [Task],
    /// Which tasks have been placed where their group's placeholder was.
    pub(super) placed: Vec<bool>,
    /// The `evernote:///view/...` links met (to other notes of the export, resolved once all are read).
    pub(super) note_links: Vec<NoteLink>,
}

impl Rewrite<'_> {
    /// Both passes over the whole tree, then the tasks no placeholder took, as a list at the end of `note`.
    pub(super) fn run(&mut self, root: &Handle) {
        self.blocks(root);
        self.inline(root);
        super::inline::flatten(root);
        around_blocks(root);
        super::inline::unnest(root, &mut Vec::new());
        super::lines::join_lines(root);
        let left: Vec<usize> = (0..self.tasks.len()).filter(|&i| !self.placed[i]).collect();
        if !left.is_empty() {
            let body = find(root, "en-note")
                .or_else(|| find(root, "body"))
                .unwrap_or_else(|| root.clone());
            append(&body, self.task_list(&left));
        }
    }

    fn blocks(&mut self, node: &Handle) {
        for child in children(node) {
            let Some(name) = tag(&child).map(str::to_owned) else {
                continue;
            };
            if style_value(&child, "display").is_some_and(|v| v.starts_with("none")) {
                // A hidden block still ended a line: what was before and after it stay apart.
                if is_block(&child) {
                    replace(&child, element("br", &[]));
                } else {
                    super::dom::detach(&child);
                }
                continue;
            }
            match name.as_str() {
                "en-crypt" => {
                    crypt(&child);
                    continue;
                }
                "en-media" => {
                    self.media(&child);
                    continue;
                }
                "en-todo" => {
                    let mark = if attr(&child, "checked").is_some_and(|v| v.trim() == "true") {
                        CHECKED
                    } else {
                        UNCHECKED
                    };
                    // Anything an unclosed `<en-todo>` took in comes after it.
                    let mark = text(&mark.to_string());
                    replace(&child, mark.clone());
                    for inner in children(&child).into_iter().rev() {
                        insert_after(&mark, inner);
                    }
                    // A checkbox first inside formatting (`<b><en-todo/></b>text`) starts the line, not the emphasis.
                    while let Some(holder) = parent(&mark).filter(|p| is(p, AROUND_TEXT))
                        && previous_element(&mark).is_none()
                    {
                        insert_before(&holder, mark.clone());
                    }
                    continue;
                }
                _ => {}
            }
            if flag(&child, "--en-task-group") {
                self.task_group(&child);
                continue;
            }
            if flag(&child, "-en-codeblock") || flag(&child, "--en-codeblock") {
                codeblock(&child);
                continue;
            }
            let child = if flag(&child, "--en-callout") {
                let quote = element("blockquote", &[]);
                super::dom::move_children(&child, &quote);
                replace(&child, quote.clone());
                quote
            } else {
                child
            };
            if is(&child, &["ul", "ol"]) {
                super::lists::nest_lists(&child);
            }
            self.blocks(&child);
        }
    }

    fn inline(&mut self, node: &Handle) {
        for child in children(node) {
            if let markup5ever_rcdom::NodeData::Text { contents } = &child.data {
                // Evernote writes spaces it must keep as no-break spaces: in Markdown they are spaces.
                let mut contents = contents.borrow_mut();
                if contents.contains('\u{a0}') {
                    let plain = contents.replace('\u{a0}', " ");
                    *contents = plain.as_str().into();
                }
                continue;
            }
            if is(&child, &["pre"]) {
                preformatted(&child);
                continue;
            }
            self.inline(&child);
            match tag(&child).unwrap_or_default() {
                "li" => list_item(&child),
                "td" | "th" => table_cell(&child),
                "a" => {
                    let href = attr(&child, "href").unwrap_or_default();
                    if is_evernote_note_link(&href) {
                        self.note_links.push(NoteLink {
                            url: href.trim().to_owned(),
                            text: text_content(&child).split_whitespace().collect::<Vec<_>>().join(" "),
                        });
                    }
                }
                "img" => image(&child),
                "table" => header_row(&child),
                _ => {}
            }
            inline_style(&child);
        }
    }

    fn media(&self, node: &Handle) {
        let hash = attr(node, "hash").unwrap_or_default().trim().to_lowercase();
        let (mime, title) = match self.media.get(&hash) {
            Some(m) => (m.mime.clone(), m.title.clone()),
            None => (attr(node, "type").unwrap_or_default(), "attachment".to_owned()),
        };
        let href = format!(":/{hash}");
        let replacement = if mime.starts_with("image/") {
            element("img", &[("src", &href), ("alt", &title)])
        } else {
            let link = element("a", &[("href", &href)]);
            append(&link, text(&title));
            link
        };
        replace(node, replacement.clone());
        // Anything an unclosed `<en-media>` took in comes after it.
        for inner in children(node).into_iter().rev() {
            insert_after(&replacement, inner);
        }
    }

    fn task_group(&mut self, node: &Handle) {
        let group = style_value(node, "--en-id").unwrap_or_default();
        let mut mine: Vec<usize> = (0..self.tasks.len())
            .filter(|&i| !self.placed[i] && self.tasks[i].group.to_lowercase() == group)
            .collect();
        mine.sort_by(|&a, &b| self.tasks[a].sort.cmp(&self.tasks[b].sort));
        if mine.is_empty() {
            super::dom::detach(node);
        } else {
            replace(node, self.task_list(&mine));
        }
    }

    /// The tasks (indexes) as a checklist, each with its due date after its title.
    fn task_list(&mut self, which: &[usize]) -> Handle {
        let list = element("ul", &[]);
        for &i in which {
            self.placed[i] = true;
            let task = &self.tasks[i];
            let item = element("li", &[]);
            let mut line = String::new();
            line.push(if task.done { CHECKED } else { UNCHECKED });
            line.push_str(task.title.trim());
            // The Obsidian Tasks way: a flag as raised priority, a reminder as the day it is scheduled.
            if task.flagged {
                line.push_str(" 🔼");
            }
            if let Some(day) = &task.reminder_day {
                line.push_str(" ⏳ ");
                line.push_str(day);
            }
            if let Some(day) = &task.due_day {
                line.push_str(" 📅 ");
                line.push_str(day);
            }
            append(&item, text(&line));
            append(&list, item);
        }
        list
    }
}

/// Whether an element's style sets one of Evernote's flags (`--en-codeblock: true`).
fn flag(node: &Handle, property: &str) -> bool {
    style_value(node, property).is_some_and(|v| v == "true")
}

/// `<en-crypt>`: its cipher text kept in a labelled block (decryptable where it was made), never dropped.
fn crypt(node: &Handle) {
    let cipher = attr(node, "cipher").unwrap_or_else(|| "RC2".to_owned());
    let hint = attr(node, "hint")
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty());
    let label = match hint {
        Some(hint) => format!("Encrypted text (Evernote, {cipher}; hint: {hint}):"),
        None => format!("Encrypted text (Evernote, {cipher}):"),
    };
    let block = element("div", &[]);
    let paragraph = element("p", &[]);
    append(&paragraph, text(&label));
    append(&block, paragraph);
    let pre = element("pre", &[]);
    let code = element("code", &[("class", "language-evernote-encrypted")]);
    append(&code, text(text_content(node).trim()));
    append(&pre, code);
    append(&block, pre);
    replace(node, block);
}

/// An Evernote code block (a `<div>` a line) as `<pre><code>` with its lines as written.
fn codeblock(node: &Handle) {
    let mut lines = Lines::default();
    for child in children(node) {
        // Whitespace between the line `<div>`s is how the file was laid out, not text of the code.
        if tag(&child).is_none() && text_content(&child).trim().is_empty() && text_content(&child).contains('\n') {
            continue;
        }
        lines.visit(&child);
    }
    lines.end_line();
    while lines.done.last().is_some_and(String::is_empty) {
        lines.done.pop();
    }
    let language = style_value(node, "--en-syntaxlanguage")
        .or_else(|| style_value(node, "--en-codeblocklanguage"))
        .filter(|l| {
            !l.is_empty() && l != "plaintext" && l.chars().all(|c| c.is_ascii_alphanumeric() || "+#-_.".contains(c))
        });
    let pre = element("pre", &[]);
    let class = language.map(|l| format!("language-{l}"));
    let code = match &class {
        Some(class) => element("code", &[("class", class)]),
        None => element("code", &[]),
    };
    append(&code, text(&lines.done.join("\n")));
    append(&pre, code);
    replace(node, pre);
}

/// A `<pre>` as htmd fences it, `<pre><code>` holding its text alone: the styles of a web clip's highlighted code
/// (`<span style="font-weight:bold">fn</span>`) are not Markdown inside a fence, and a bare `<pre>` is not fenced.
fn preformatted(pre: &Handle) {
    let class = std::iter::once(pre.clone())
        .chain(children(pre).into_iter().filter(|c| is(c, &["code"])))
        .filter_map(|n| attr(&n, "class"))
        .find(|c| c.split_whitespace().any(|w| w.starts_with("language-")));
    let mut text = String::new();
    preformatted_text(pre, &mut text);
    let code = match &class {
        Some(class) => element("code", &[("class", class)]),
        None => element("code", &[]),
    };
    append(&code, super::dom::text(&text.replace('\u{a0}', " ")));
    for old in std::mem::take(&mut *pre.children.borrow_mut()) {
        old.parent.set(None);
    }
    append(pre, code);
}

/// The text of preformatted content: its text as written, a `<br>` a line break.
fn preformatted_text(node: &Handle, out: &mut String) {
    for child in children(node) {
        if is(&child, &["br"]) {
            out.push('\n');
        } else if tag(&child).is_none() {
            out.push_str(&text_content(&child));
        } else {
            preformatted_text(&child, out);
        }
    }
}

/// The lines of a code block, as a browser lays them out: a block starts a line, `<br>` ends one, and a `<br>` at
/// the end of a line with text adds nothing.
#[derive(Default)]
struct Lines {
    done: Vec<String>,
    current: String,
    open: bool,
}

impl Lines {
    fn visit(&mut self, node: &Handle) {
        if tag(node).is_none() {
            let t = text_content(node);
            if !t.is_empty() {
                self.current.push_str(&t);
                self.open = true;
            }
            return;
        }
        if is(node, &["br"]) {
            self.done.push(std::mem::take(&mut self.current));
            self.open = false;
            return;
        }
        let block = is_block(node);
        if block {
            self.end_line();
        }
        for child in children(node) {
            self.visit(&child);
        }
        if block {
            self.end_line();
        }
    }

    fn end_line(&mut self) {
        if self.open {
            self.done.push(std::mem::take(&mut self.current));
            self.open = false;
        }
    }
}

/// A list item: Evernote wraps each item's text in a `<div>`, which would make every item a paragraph of its own;
/// the first is unwrapped, a later one starts a new line of the item. A checklist item gets its mark first.
fn list_item(item: &Handle) {
    unwrap_lines(item);
    // Only a checklist's items are tasks: an item of a plain list nested in one may carry a leftover mark.
    if !parent(item).is_some_and(|list| flag(&list, "--en-todo")) {
        return;
    }
    match style_value(item, "--en-checked").as_deref() {
        Some("true") => prepend(item, text(&CHECKED.to_string())),
        Some("false") => prepend(item, text(&UNCHECKED.to_string())),
        _ => {}
    }
}

/// The `<div>`s (or `<p>`s) of a list item or table cell, each a line of it: the first unwrapped, a later one after a
/// line break.
fn unwrap_lines(node: &Handle) {
    let mut divs = 0;
    for child in children(node) {
        if is(&child, &["div", "p"]) {
            if divs > 0 {
                insert_before(&child, element("br", &[]));
            }
            divs += 1;
            unwrap(&child);
        }
    }
}

/// A table cell: its lines joined by line breaks (a Markdown cell is one line), and the breaks that end it (an
/// empty line, as Evernote writes an empty cell) dropped.
fn table_cell(cell: &Handle) {
    unwrap_lines(cell);
    while let Some(last) = children(cell)
        .into_iter()
        .rev()
        .find(|c| tag(c).is_some() || !text_content(c).trim().is_empty())
        .filter(|c| is(c, &["br"]))
    {
        super::dom::detach(&last);
    }
}

/// The inline styles of an element (a `<span>`, `<font>`, or a block) as the elements Markdown has a syntax for:
/// bold, italic, struck through, underlined, highlighted. Fonts, colours and sizes are dropped.
fn inline_style(node: &Handle) {
    let declarations = style(node);
    if declarations.is_empty() || is(node, &["pre", "code", "table", "ul", "ol"]) {
        return;
    }
    let mut wrappers: Vec<&str> = Vec::new();
    let mut bold = false;
    let mut italic = false;
    let mut strike = false;
    let mut underline = false;
    let mut highlight = false;
    for (property, value) in &declarations {
        match property.as_str() {
            "font-weight" => {
                bold = value == "bold" || value == "bolder" || value.parse::<u32>().is_ok_and(|w| w >= 600)
            }
            // A bold face named as the font (what copying from a PDF writes: 'TimesNewRoman,Bold').
            "font-family" => bold |= is_bold_face(value),
            "font-style" => italic = value.starts_with("italic") || value.starts_with("oblique"),
            "text-decoration" | "text-decoration-line" => {
                strike |= value.contains("line-through");
                underline |= value.contains("underline");
            }
            "-evernote-highlight" => highlight = value == "true",
            "--en-highlight" => highlight = !value.is_empty() && value != "none",
            "background-color" | "background" => highlight = is_highlight_colour(value),
            _ => {}
        }
    }
    if is(node, &["b", "strong", "h1", "h2", "h3", "h4", "h5", "h6", "th"]) {
        bold = false;
    }
    if is(node, &["i", "em"]) {
        italic = false;
    }
    if bold {
        wrappers.push("strong");
    }
    if italic {
        wrappers.push("em");
    }
    if strike && !is(node, &["s", "strike", "del"]) {
        wrappers.push("del");
    }
    if underline && !is(node, &["u"]) {
        wrappers.push("u");
    }
    if highlight && !is(node, &["mark"]) {
        wrappers.push("mark");
    }
    if text_content(node).trim().is_empty() {
        return;
    }
    for wrapper in wrappers.into_iter().rev() {
        wrap_children(node, wrapper);
    }
}

/// Whether a background colour without Evernote's highlight flag is one of its highlighter's colours (Evernote 10's
/// six, and the older yellow): any other is a web page's or an app's layout (a clipped page's white, a grey panel),
/// not a highlight.
fn is_highlight_colour(value: &str) -> bool {
    const HIGHLIGHTER: &[(&str, [u8; 3])] = &[
        ("#ffef9e", [255, 239, 158]),
        ("#fec1d0", [254, 193, 208]),
        ("#b7f7d1", [183, 247, 209]),
        ("#adecf4", [173, 236, 244]),
        ("#cbcaff", [203, 202, 255]),
        ("#ffd1b0", [255, 209, 176]),
        ("#fffaa5", [255, 250, 165]),
    ];
    let v: String = value.split_whitespace().collect();
    HIGHLIGHTER.iter().any(|(hex, [r, g, b])| {
        v.starts_with(hex)
            || v.starts_with(&format!("rgb({r},{g},{b})"))
            || v.starts_with(&format!("rgba({r},{g},{b},"))
    })
}

/// Whether a link is to an Evernote note: the app's `evernote:///view/...`, and the web addresses "Copy link" and
/// "Share" give (`https://share.evernote.com/note/GUID`, `https://www.evernote.com/shard/s1/nl/1/GUID/`, and the
/// public `https://www.evernote.com/l/...`).
fn is_evernote_note_link(href: &str) -> bool {
    let href = href.trim().to_ascii_lowercase();
    if href.starts_with("evernote:///view/") {
        return true;
    }
    let Some(rest) = href.strip_prefix("https://").or_else(|| href.strip_prefix("http://")) else {
        return false;
    };
    let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
    match host {
        "share.evernote.com" => path.starts_with("note/"),
        "www.evernote.com" | "evernote.com" => {
            (path.starts_with("shard/") && path.contains("/nl/")) || path.starts_with("l/")
        }
        _ => false,
    }
}

/// Whether a font family names a bold face (`'TimesNewRoman,Bold'`, `Arial-BoldMT`, `Helvetica Bold`).
fn is_bold_face(value: &str) -> bool {
    value
        .split(|c: char| !c.is_ascii_alphanumeric())
        .any(|word| word.strip_suffix("mt").unwrap_or(word) == "bold" || word.ends_with("bold") && word.len() > 4)
}

/// The inline elements that Markdown writes around text (a link, emphasis): around a block (`<a><h1>Title</h1></a>`,
/// or `<b>` left open over a paragraph by broken markup) Markdown cannot write them.
const AROUND_TEXT: &[&str] = &[
    "a", "b", "strong", "i", "em", "s", "strike", "del", "u", "ins", "mark", "span", "font", "sup", "sub",
];

/// An inline element around blocks: it goes inside each block, and around each run of inline content between
/// them. After its children, so the blocks inside have had theirs.
fn around_blocks(node: &Handle) {
    for child in children(node) {
        around_blocks(&child);
    }
    if !is(node, AROUND_TEXT) || !children(node).iter().any(is_block) {
        return;
    }
    let mut run: Option<Handle> = None;
    for child in children(node) {
        if is_block(&child) {
            run = None;
            if has_content(&child) {
                let inner = shallow_copy(node);
                super::dom::move_children(&child, &inner);
                append(&child, inner);
                // The block's own blocks (a list's items) take it inside them in turn.
                around_blocks(&child);
            }
            insert_before(node, child);
        } else {
            let current = run.get_or_insert_with(|| {
                let copy = shallow_copy(node);
                insert_before(node, copy.clone());
                copy
            });
            append(current, child);
        }
    }
    super::dom::detach(node);
}

/// Whether a block shows anything: text, or an image.
fn has_content(node: &Handle) -> bool {
    !text_content(node).trim().is_empty() || find(node, "img").is_some()
}

/// An image's text and address as Markdown can hold them: `[`, `]` and `\` in the text escaped, a `data:` address
/// written on several lines made one.
fn image(img: &Handle) {
    if let Some(alt) = attr(img, "alt") {
        let escaped: String = alt
            .chars()
            .flat_map(|c| match c {
                '[' | ']' | '\\' => vec!['\\', c],
                c => vec![c],
            })
            .collect();
        set_attr(img, "alt", &escaped);
    }
    if let Some(src) = attr(img, "src")
        && src.trim_start().to_ascii_lowercase().starts_with("data:")
    {
        // Base64 has no spaces: every white space is where the file broke the line. Other data (an SVG written out,
        // percent-encoded) keeps its spaces, encoded so the address stays one Markdown destination.
        let base64 = src
            .split(',')
            .next()
            .is_some_and(|head| head.to_ascii_lowercase().contains(";base64"));
        let joined: String = if base64 {
            src.chars().filter(|c| !c.is_whitespace()).collect()
        } else {
            src.trim()
                .chars()
                .filter(|c| !matches!(c, '\n' | '\r'))
                .map(|c| {
                    if c.is_whitespace() {
                        "%20".to_owned()
                    } else {
                        c.to_string()
                    }
                })
                .collect()
        };
        set_attr(img, "src", &joined);
    }
}

/// A table's first row as its header, when it has none: Evernote's tables have no header cells, and a Markdown
/// table needs a header row.
fn header_row(table: &Handle) {
    if find(table, "th").is_some() {
        return;
    }
    let Some(row) = find(table, "tr") else {
        return;
    };
    for cell in children(&row) {
        if is(&cell, &["td"]) {
            let header = element("th", &[]);
            super::dom::move_children(&cell, &header);
            replace(&cell, header);
        }
    }
}

/// A note's `<en-note>`, as htmd knows no such element: a `<div>`.
pub(super) fn note_as_div(root: &Handle) {
    if let Some(note) = find(root, "en-note") {
        let div = element("div", &[]);
        super::dom::move_children(&note, &div);
        replace(&note, div);
    }
}
