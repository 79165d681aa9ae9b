//! Evernote's lines: a note is a run of `<div>`s, one a line, shown without space between them, and an empty
//! `<div><br/></div>` is the blank line a person typed. As paragraphs, every line would stand apart; so a run of
//! line `<div>`s becomes one paragraph with line breaks, and the empty ones end paragraphs.

use std::rc::Rc;

use markup5ever_rcdom::Handle;

use super::dom::{append, children, element, find, is, is_block, tag, text_content};

/// Joins the runs of line `<div>`s below `node` (after the rest of the rewrite, so styles and blocks are settled).
/// Each level is rebuilt in one pass: a note of many thousand lines would take quadratic time moved a node at a time.
pub(super) fn join_lines(node: &Handle) {
    for child in children(node) {
        if tag(&child).is_some() && !is(&child, &["pre", "code", "table", "ul", "ol"]) {
            join_lines(&child);
        }
    }
    trim_after_breaks(node);
    if !children(node).iter().any(is_block) {
        return;
    }
    let old = std::mem::take(&mut *node.children.borrow_mut());
    let mut new: Vec<Handle> = Vec::with_capacity(old.len());
    let mut run: Vec<Handle> = Vec::new();
    // Text and inline elements between the blocks (`<div>a</div> <en-media/>`): a line of their own, as a browser
    // shows them.
    let mut loose: Vec<Handle> = Vec::new();
    for child in old {
        if !is_block(&child) {
            loose.push(child);
            continue;
        }
        take_loose(node, &mut loose, &mut run, &mut new);
        if is_line(&child) {
            if shows_nothing(&child) {
                join(node, &mut run, &mut new);
                child.parent.set(None);
            } else {
                run.push(child);
            }
        } else {
            join(node, &mut run, &mut new);
            new.push(child);
        }
    }
    take_loose(node, &mut loose, &mut run, &mut new);
    join(node, &mut run, &mut new);
    *node.children.borrow_mut() = new;
}

/// The white space starting a line after a `<br>` (the file's own line break after the tag) is not shown.
fn trim_after_breaks(node: &Handle) {
    let list = children(node);
    for pair in list.windows(2) {
        if is(&pair[0], &["br"])
            && let markup5ever_rcdom::NodeData::Text { contents } = &pair[1].data
        {
            let trimmed = contents.borrow().trim_start().to_owned();
            *contents.borrow_mut() = trimmed.as_str().into();
        }
    }
}

/// Inline content met between blocks as a line of the run (in a `<div>` of its own); white space alone is how the
/// file was laid out, kept only outside a run.
fn take_loose(parent: &Handle, loose: &mut Vec<Handle>, run: &mut Vec<Handle>, new: &mut Vec<Handle>) {
    if loose.is_empty() {
        return;
    }
    let shows = loose
        .iter()
        .any(|c| tag(c).is_some() || !text_content(c).trim().is_empty());
    if !shows {
        if run.is_empty() {
            new.append(loose);
        } else {
            loose.clear();
        }
        return;
    }
    let line = element("div", &[]);
    line.parent.set(Some(Rc::downgrade(parent)));
    for child in loose.iter() {
        child.parent.set(Some(Rc::downgrade(&line)));
    }
    line.children.borrow_mut().append(loose);
    if shows_nothing(&line) {
        join(parent, run, new);
    } else {
        run.push(line);
    }
}

/// A `<div>` holding no block: one line of text.
fn is_line(node: &Handle) -> bool {
    is(node, &["div"]) && !has_block(node)
}

fn has_block(node: &Handle) -> bool {
    children(node)
        .iter()
        .any(|c| is_block(c) || (tag(c).is_some() && has_block(c)))
}

/// A line with no text and no picture: a blank line.
fn shows_nothing(node: &Handle) -> bool {
    text_content(node).trim().is_empty() && find(node, "img").is_none()
}

/// The lines of `run` as one `<div>` of `parent`, a line break between each two, put at the end of `new`; `run` is
/// emptied.
fn join(parent: &Handle, run: &mut Vec<Handle>, new: &mut Vec<Handle>) {
    match run.len() {
        0 => {}
        1 => new.append(run),
        _ => {
            let paragraph = element("div", &[]);
            paragraph.parent.set(Some(Rc::downgrade(parent)));
            for (i, line) in run.drain(..).enumerate() {
                if i > 0 {
                    append(&paragraph, element("br", &[]));
                }
                let mut inner = std::mem::take(&mut *line.children.borrow_mut());
                // A break ending a line is how a browser gives an empty line its height: not a line of its own.
                while inner
                    .last()
                    .is_some_and(|c| is(c, &["br"]) || (tag(c).is_none() && text_content(c).trim().is_empty()))
                {
                    inner.pop();
                }
                // White space starting a line after a break is not shown (a no-break space was one before).
                if i > 0
                    && let Some(first) = inner.first()
                    && let markup5ever_rcdom::NodeData::Text { contents } = &first.data
                {
                    let trimmed = contents.borrow().trim_start().to_owned();
                    *contents.borrow_mut() = trimmed.as_str().into();
                }
                for child in &inner {
                    child.parent.set(Some(Rc::downgrade(&paragraph)));
                }
                paragraph.children.borrow_mut().extend(inner);
                line.parent.set(None);
            }
            new.push(paragraph);
        }
    }
}
