//! A few operations on html5ever's DOM (markup5ever_rcdom), keeping every node's parent pointer right as nodes
//! move: htmd walks the tree by children and looks up through parents.

use std::cell::RefCell;
use std::rc::Rc;

use html5ever::tendril::StrTendril;
use html5ever::{Attribute, LocalName, QualName, ns};
use markup5ever_rcdom::{Handle, Node, NodeData};

/// An element's name (lower case, as the HTML parser gives it), or `None` for text and other nodes.
pub(crate) fn tag(node: &Handle) -> Option<&str> {
    match &node.data {
        NodeData::Element { name, .. } => Some(&name.local),
        _ => None,
    }
}

/// Whether `node` is an element named one of `names`.
pub(super) fn is(node: &Handle, names: &[&str]) -> bool {
    tag(node).is_some_and(|t| names.contains(&t))
}

/// An attribute's value.
pub(crate) fn attr(node: &Handle, name: &str) -> Option<String> {
    match &node.data {
        NodeData::Element { attrs, .. } => attrs
            .borrow()
            .iter()
            .find(|a| &*a.name.local == name)
            .map(|a| a.value.to_string()),
        _ => None,
    }
}

/// Sets an attribute, adding it when missing.
pub(super) fn set_attr(node: &Handle, name: &str, value: &str) {
    if let NodeData::Element { attrs, .. } = &node.data {
        let mut attrs = attrs.borrow_mut();
        match attrs.iter_mut().find(|a| &*a.name.local == name) {
            Some(a) => a.value = StrTendril::from_slice(value),
            None => attrs.push(Attribute {
                name: QualName::new(None, ns!(), LocalName::from(name)),
                value: StrTendril::from_slice(value),
            }),
        }
    }
}

/// The declarations of an element's `style` attribute: property (lower case) and value (lower case, trimmed).
pub(super) fn style(node: &Handle) -> Vec<(String, String)> {
    let Some(style) = attr(node, "style") else {
        return Vec::new();
    };
    style
        .split(';')
        .filter_map(|declaration| {
            let (property, value) = declaration.split_once(':')?;
            let property = property.trim().to_ascii_lowercase();
            (!property.is_empty()).then(|| (property, value.trim().to_ascii_lowercase()))
        })
        .collect()
}

/// The value of one property of an element's style.
pub(super) fn style_value(node: &Handle, property: &str) -> Option<String> {
    style(node)
        .into_iter()
        .rev()
        .find(|(p, _)| p == property)
        .map(|(_, v)| v)
}

/// A new element in the HTML namespace, with these attributes.
pub(super) fn element(name: &str, attrs: &[(&str, &str)]) -> Handle {
    Node::new(NodeData::Element {
        name: QualName::new(None, ns!(html), LocalName::from(name)),
        attrs: RefCell::new(
            attrs
                .iter()
                .map(|(name, value)| Attribute {
                    name: QualName::new(None, ns!(), LocalName::from(*name)),
                    value: StrTendril::from_slice(value),
                })
                .collect(),
        ),
        template_contents: RefCell::new(None),
        mathml_annotation_xml_integration_point: false,
    })
}

/// A copy of an element without its children (its name and attributes).
pub(super) fn shallow_copy(node: &Handle) -> Handle {
    match &node.data {
        NodeData::Element { name, attrs, .. } => Node::new(NodeData::Element {
            name: name.clone(),
            attrs: RefCell::new(attrs.borrow().clone()),
            template_contents: RefCell::new(None),
            mathml_annotation_xml_integration_point: false,
        }),
        other => Node::new(other.clone()),
    }
}

/// A new text node.
pub(super) fn text(contents: &str) -> Handle {
    Node::new(NodeData::Text {
        contents: RefCell::new(StrTendril::from_slice(contents)),
    })
}

/// A text node's text.
pub(super) fn text_of(node: &Handle) -> Option<String> {
    match &node.data {
        NodeData::Text { contents } => Some(contents.borrow().to_string()),
        _ => None,
    }
}

/// Every text below `node`, in order.
pub(super) fn text_content(node: &Handle) -> String {
    let mut out = String::new();
    collect_text(node, &mut out);
    out
}

fn collect_text(node: &Handle, out: &mut String) {
    if let Some(t) = text_of(node) {
        out.push_str(&t);
    }
    for child in node.children.borrow().iter() {
        collect_text(child, out);
    }
}

/// The node's parent.
pub(super) fn parent(node: &Handle) -> Option<Handle> {
    let weak = node.parent.take();
    let parent = weak.as_ref().and_then(std::rc::Weak::upgrade);
    node.parent.set(weak);
    parent
}

/// The children, as they are now (a copy of the list, so the tree can change while they are visited).
pub(super) fn children(node: &Handle) -> Vec<Handle> {
    node.children.borrow().clone()
}

/// Takes `node` out of its parent.
pub(super) fn detach(node: &Handle) {
    if let Some(parent) = parent(node) {
        parent.children.borrow_mut().retain(|c| !Rc::ptr_eq(c, node));
    }
    node.parent.set(None);
}

/// Appends `child` (taken from where it was) as the last child of `parent`.
pub(super) fn append(parent: &Handle, child: Handle) {
    detach(&child);
    child.parent.set(Some(Rc::downgrade(parent)));
    parent.children.borrow_mut().push(child);
}

/// Puts `child` (taken from where it was) as the first child of `parent`.
pub(super) fn prepend(parent: &Handle, child: Handle) {
    detach(&child);
    child.parent.set(Some(Rc::downgrade(parent)));
    parent.children.borrow_mut().insert(0, child);
}

/// Puts `node` (taken from where it was) just before `sibling`.
pub(super) fn insert_before(sibling: &Handle, node: Handle) {
    let Some(parent) = parent(sibling) else {
        return;
    };
    detach(&node);
    node.parent.set(Some(Rc::downgrade(&parent)));
    let mut children = parent.children.borrow_mut();
    let at = children
        .iter()
        .position(|c| Rc::ptr_eq(c, sibling))
        .unwrap_or(children.len());
    children.insert(at, node);
}

/// Moves every child of `from` to the end of `to`, all at once.
pub(super) fn move_children(from: &Handle, to: &Handle) {
    let moved = std::mem::take(&mut *from.children.borrow_mut());
    for child in &moved {
        child.parent.set(Some(Rc::downgrade(to)));
    }
    to.children.borrow_mut().extend(moved);
}

/// Puts `replacement` where `node` is, and takes `node` out.
pub(super) fn replace(node: &Handle, replacement: Handle) {
    insert_before(node, replacement);
    detach(node);
}

/// Replaces `node` with its children, all at once.
pub(super) fn unwrap(node: &Handle) {
    let Some(parent) = parent(node) else {
        return;
    };
    let inner = std::mem::take(&mut *node.children.borrow_mut());
    for child in &inner {
        child.parent.set(Some(Rc::downgrade(&parent)));
    }
    let mut siblings = parent.children.borrow_mut();
    if let Some(at) = siblings.iter().position(|c| Rc::ptr_eq(c, node)) {
        siblings.splice(at..=at, inner);
    }
    node.parent.set(None);
}

/// Wraps the children of `node` in a new element `name`, which becomes its only child.
pub(super) fn wrap_children(node: &Handle, name: &str) {
    let wrapper = element(name, &[]);
    move_children(node, &wrapper);
    append(node, wrapper);
}

/// The sibling just before `node`, skipping text that is only whitespace.
pub(super) fn previous_element(node: &Handle) -> Option<Handle> {
    let parent = parent(node)?;
    let children = parent.children.borrow();
    let at = children.iter().position(|c| Rc::ptr_eq(c, node))?;
    children[..at]
        .iter()
        .rev()
        .find(|c| text_of(c).is_none_or(|t| !t.trim().is_empty()))
        .cloned()
}

/// Whether an element is a block (it starts a line of its own when rendered).
pub(super) fn is_block(node: &Handle) -> bool {
    is(
        node,
        &[
            "address",
            "article",
            "aside",
            "blockquote",
            "dd",
            "details",
            "div",
            "dl",
            "dt",
            "en-note",
            "fieldset",
            "figcaption",
            "figure",
            "footer",
            "form",
            "h1",
            "h2",
            "h3",
            "h4",
            "h5",
            "h6",
            "header",
            "hr",
            "li",
            "main",
            "nav",
            "ol",
            "p",
            "pre",
            "section",
            "summary",
            "table",
            "tbody",
            "td",
            "tfoot",
            "th",
            "thead",
            "tr",
            "ul",
        ],
    )
}

/// The first element named `name` below `node`.
pub(super) fn find(node: &Handle, name: &str) -> Option<Handle> {
    for child in children(node) {
        if is(&child, &[name]) {
            return Some(child);
        }
        if let Some(found) = find(&child, name) {
            return Some(found);
        }
    }
    None
}

/// Puts `node` just after `sibling`.
pub(super) fn insert_after(sibling: &Handle, node: Handle) {
    let Some(parent) = parent(sibling) else {
        return;
    };
    let siblings = children(&parent);
    let at = siblings.iter().position(|c| Rc::ptr_eq(c, sibling));
    match at.and_then(|at| siblings.get(at + 1)) {
        Some(next) => insert_before(next, node),
        None => append(&parent, node),
    }
}
