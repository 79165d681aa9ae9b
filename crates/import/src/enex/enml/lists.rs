//! Lists as Evernote writes them, made into lists Markdown can say: a nested list written beside the items
//! (`<ul><li>a</li><ul>...</ul></ul>`) and an item that holds only a list (`<li>a</li><li><ul>...</ul></li>`, Evernote's
//! indentation) both go into the item before them; a list with no item before it gets an item of its own.

use std::rc::Rc;

use markup5ever_rcdom::Handle;

use super::dom::{children, element, is, tag, text_content};

/// Nests the lists among `list`'s children into the items before them, in one pass (a list of many thousand items
/// with a sublist beside each would take quadratic time moved a node at a time).
pub(super) fn nest_lists(list: &Handle) {
    let old = std::mem::take(&mut *list.children.borrow_mut());
    let mut new: Vec<Handle> = Vec::with_capacity(old.len());
    // The last item kept, where a list written after it goes.
    let mut item: Option<Handle> = None;
    for child in old {
        if is(&child, &["ul", "ol"]) {
            let holder = match &item {
                Some(item) => item.clone(),
                None => {
                    let fresh = element("li", &[]);
                    adopt(list, &fresh);
                    new.push(fresh.clone());
                    item = Some(fresh.clone());
                    fresh
                }
            };
            adopt(&holder, &child);
            holder.children.borrow_mut().push(child);
            continue;
        }
        if is(&child, &["li"])
            && let Some(before) = &item
            && only_lists(&child)
        {
            for inner in std::mem::take(&mut *child.children.borrow_mut()) {
                if is(&inner, &["ul", "ol"]) {
                    adopt(before, &inner);
                    before.children.borrow_mut().push(inner);
                }
            }
            child.parent.set(None);
            continue;
        }
        if is(&child, &["li"]) {
            item = Some(child.clone());
        } else if tag(&child).is_some() || !text_content(&child).trim().is_empty() {
            item = None;
        }
        new.push(child);
    }
    *list.children.borrow_mut() = new;
}

/// Whether an item holds lists and nothing else that shows.
fn only_lists(item: &Handle) -> bool {
    let inner = children(item);
    inner.iter().any(|c| is(c, &["ul", "ol"]))
        && inner
            .iter()
            .filter(|c| !is(c, &["ul", "ol"]))
            .all(|c| text_content(c).trim().is_empty() && !is(c, &["img"]))
}

/// Makes `parent` the parent of `child` (the caller puts it in the list of children).
fn adopt(parent: &Handle, child: &Handle) {
    child.parent.set(Some(Rc::downgrade(parent)));
}
