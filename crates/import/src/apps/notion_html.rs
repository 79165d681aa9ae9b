//! A page of Notion's HTML export: `<article class="page">` with a `<header>` (the title in `h1.page-title`, a
//! database row's properties in `table.properties`, a row per property classed by its type) and the text in
//! `div.page-body`. The properties become typed labels as the Markdown & CSV export's do (numbers, checkboxes,
//! dates; a multi-select named Tags the page's tags, another a list), the header leaves the text, and the rest
//! converts as any HTML does.

use html5ever::tendril::TendrilSink;
use html5ever::{ParseOpts, parse_document};
use markup5ever_rcdom::{Handle, NodeData, RcDom};

use crate::enex::dom::{attr, tag};
use crate::frontmatter::FrontMatter;

/// Whether `html` is a page of Notion's HTML export.
pub(crate) fn is_notion_page(html: &str) -> bool {
    html.contains("class=\"page sans\"")
        || html.contains("class=\"page-title\"")
        || html.contains("class=\"page serif\"")
}

/// A Notion page: its title, its text as Markdown (without the header), and its properties put in `meta`.
pub(crate) fn convert(html: &str, meta: &mut FrontMatter) -> (Option<String>, String) {
    let dom = parse_document(RcDom::default(), ParseOpts::default()).one(html.to_owned());
    let mut title = None;
    walk(&dom.document, &mut |node| {
        if title.is_none() && tag(node) == Some("h1") && has_class(node, "page-title") {
            title = Some(text(node).trim().to_owned()).filter(|t| !t.is_empty());
        }
        if tag(node) == Some("tr") && has_class(node, "property-row") {
            property(node, meta);
        }
    });
    // The header is said as title and labels: out of the text.
    let body = match (html.find("<header"), html.find("</header>")) {
        (Some(start), Some(end)) if start < end => format!("{}{}", &html[..start], &html[end + "</header>".len()..]),
        _ => html.to_owned(),
    };
    // A to-do's box, as Evernote's (which the reader turns into tasks).
    let body = body
        .replace(
            "<div class=\"checkbox checkbox-off\"></div>",
            "<en-todo checked=\"false\"></en-todo>",
        )
        .replace(
            "<div class=\"checkbox checkbox-on\"></div>",
            "<en-todo checked=\"true\"></en-todo>",
        );
    let (fallback, markdown) = super::html::convert(&body);
    (title.or(fallback), markdown)
}

fn property(row: &Handle, meta: &mut FrontMatter) {
    let cells: Vec<Handle> = children(row)
        .into_iter()
        .filter(|c| matches!(tag(c), Some("th" | "td")))
        .collect();
    let [th, td] = cells.as_slice() else { return };
    let name = text(th).split_whitespace().collect::<Vec<_>>().join(" ");
    let name: String = name
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | ':' | ' '))
        .collect();
    let name = name
        .trim_start_matches(|c: char| !c.is_alphabetic() && c != '_')
        .trim()
        .to_owned();
    if name.is_empty() {
        return;
    }
    let kind = attr(row, "class")
        .unwrap_or_default()
        .split_whitespace()
        .find_map(|c| c.strip_prefix("property-row-").map(str::to_owned))
        .unwrap_or_default();
    let value = text(td).trim().to_owned();
    match kind.as_str() {
        "checkbox" => {
            let on = find(td, &|n| has_class(n, "checkbox-on")).is_some();
            meta.json_labels.push((name, on.to_string()));
        }
        "multi_select" => {
            let mut items = Vec::new();
            walk(td, &mut |n| {
                if has_class(n, "selected-value") {
                    items.push(text(n).trim().to_owned());
                }
            });
            items.retain(|i| !i.is_empty());
            if name.eq_ignore_ascii_case("tags") {
                meta.tags.extend(items);
            } else if !items.is_empty() {
                meta.json_labels
                    .push((name, serde_json::to_string(&items).unwrap_or_default()));
            }
        }
        "url" | "email" | "phone_number" => {
            let href = find(td, &|n| tag(n) == Some("a")).and_then(|a| attr(&a, "href"));
            if let Some(v) = href.or(Some(value)).filter(|v| !v.is_empty()) {
                meta.labels.push((name, v));
            }
        }
        _ if value.is_empty() => {}
        "number" | "auto_increment_id" if value.parse::<f64>().is_ok_and(f64::is_finite) => {
            meta.json_labels.push((name, value));
        }
        "date" | "created_time" | "last_edited_time" => {
            let day = value.trim_start_matches('@');
            let day = day.split(" → ").next().unwrap_or(day);
            let value = super::notion::date(day).unwrap_or_else(|| day.to_owned());
            let time = crate::frontmatter::time_of(&value);
            match kind.as_str() {
                "created_time" if time.is_some() => meta.created = time,
                "last_edited_time" if time.is_some() => meta.updated = time,
                _ => {}
            }
            meta.labels.push((name, value));
        }
        _ => meta
            .labels
            .push((name, value.split_whitespace().collect::<Vec<_>>().join(" "))),
    }
}

fn has_class(node: &Handle, class: &str) -> bool {
    attr(node, "class").is_some_and(|c| c.split_whitespace().any(|c| c == class))
}

fn children(node: &Handle) -> Vec<Handle> {
    node.children.borrow().iter().cloned().collect()
}

/// Calls `f` on `node` and everything below it, depth first (a bounded depth: a hostile page cannot overflow).
fn walk(node: &Handle, f: &mut dyn FnMut(&Handle)) {
    let mut stack = vec![(node.clone(), 0usize)];
    while let Some((n, depth)) = stack.pop() {
        f(&n);
        if depth < 256 {
            for child in children(&n).into_iter().rev() {
                stack.push((child, depth + 1));
            }
        }
    }
}

fn find(node: &Handle, pred: &dyn Fn(&Handle) -> bool) -> Option<Handle> {
    let mut found = None;
    walk(node, &mut |n| {
        if found.is_none() && pred(n) {
            found = Some(n.clone());
        }
    });
    found
}

/// The text below a node, icons aside.
fn text(node: &Handle) -> String {
    let mut out = String::new();
    walk(node, &mut |n| {
        if let NodeData::Text { contents } = &n.data {
            out.push_str(&contents.borrow());
        }
    });
    out
}
