//! Inline markup made plain for Markdown after the styles are read: `<span>` and `<font>` say nothing more (their
//! styles became `<strong>`, `<em>`... inside them) and go, and emphasis split across neighbours (Evernote starts a new
//! `<span>` where only the colour changes) becomes one, since `**Hello****World**` is not bold in Markdown.

use std::rc::Rc;

use markup5ever_rcdom::Handle;

use super::dom::{children, is, tag};

/// Flattens the inline markup below `node`, a level at a time in one pass each.
pub(super) fn flatten(node: &Handle) {
    for child in children(node) {
        if tag(&child).is_some() && !is(&child, &["pre", "code"]) {
            flatten(&child);
        }
    }
    rebuild(node);
}

/// The kind of emphasis an element writes, for elements Markdown writes alike.
fn group(node: &Handle) -> Option<&'static str> {
    match tag(node)? {
        "b" | "strong" => Some("strong"),
        "i" | "em" => Some("em"),
        "s" | "strike" | "del" => Some("del"),
        "u" | "ins" => Some("u"),
        "mark" => Some("mark"),
        _ => None,
    }
}

/// `node`'s children with spans and fonts replaced by what they hold, and neighbours of one kind of emphasis joined.
fn rebuild(node: &Handle) {
    let old = std::mem::take(&mut *node.children.borrow_mut());
    let mut spread: Vec<Handle> = Vec::with_capacity(old.len());
    for child in old {
        if is(&child, &["span", "font"]) {
            spread.extend(std::mem::take(&mut *child.children.borrow_mut()));
            child.parent.set(None);
        } else {
            spread.push(child);
        }
    }
    let mut new: Vec<Handle> = Vec::with_capacity(spread.len());
    let mut joined: Vec<Handle> = Vec::new();
    for child in spread {
        child.parent.set(Some(Rc::downgrade(node)));
        if let Some(kind) = group(&child)
            && let Some(last) = new.last()
            && group(last) == Some(kind)
        {
            let inner = std::mem::take(&mut *child.children.borrow_mut());
            for grandchild in &inner {
                grandchild.parent.set(Some(Rc::downgrade(last)));
            }
            last.children.borrow_mut().extend(inner);
            child.parent.set(None);
            if !joined.iter().any(|j| Rc::ptr_eq(j, last)) {
                joined.push(last.clone());
            }
            continue;
        }
        new.push(child);
    }
    *node.children.borrow_mut() = new;
    // Where two met, what each held meets too (`<b><i>a</i></b><b><i>b</i></b>`).
    for element in joined {
        rebuild(&element);
    }
}

/// Emphasis inside emphasis of the same kind, at any depth, is unwrapped: a highlight in a highlight (nested
/// backgrounds of a web clip) would write `====`, bold in bold `****`, which Markdown reads as text.
pub(super) fn unnest(node: &Handle, open: &mut Vec<&'static str>) {
    for child in children(node) {
        let kind = group(&child);
        if let Some(kind) = kind
            && open.contains(&kind)
        {
            super::dom::unwrap(&child);
            // Its children are now the node's: they are visited with the node's other children, below.
            unnest(node, open);
            return;
        }
        if let Some(kind) = kind {
            open.push(kind);
        }
        unnest(&child, open);
        if kind.is_some() {
            open.pop();
        }
    }
}
