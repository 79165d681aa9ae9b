//! Reading a note's ENML the tolerant way a browser reads HTML (html5ever), after a strict XML reading has said
//! whether anything had to be repaired. Before the HTML parser sees it, the text is made to mean in HTML what it
//! means in XML: a self-closed element (`<en-media ... />`, `<div/>`) is closed at once (HTML would leave it open
//! around what follows), and a CDATA section becomes the escaped text it holds (HTML would drop it as a comment).

use html5ever::tendril::TendrilSink;
use html5ever::{ParseOpts, parse_document};
use markup5ever_rcdom::{Handle, RcDom};
use quick_xml::events::Event;

/// The document tree of `enml`, and what was wrong with it as XML (`None` when it was well-formed).
pub(super) fn parse(enml: &str) -> (Handle, Option<String>) {
    let repaired = check(enml);
    let html = prepare(enml);
    let dom = parse_document(RcDom::default(), ParseOpts::default()).one(html);
    (dom.document, repaired)
}

/// What a strict XML reader finds wrong with `enml` (the first problem, and where), or `None`.
fn check(enml: &str) -> Option<String> {
    let mut reader = quick_xml::Reader::from_str(enml);
    let mut depth = 0usize;
    loop {
        let at = reader.buffer_position();
        let problem = match reader.read_event() {
            Ok(Event::Start(e)) => {
                depth += 1;
                e.attributes().find_map(|a| a.err()).map(|e| e.to_string())
            }
            Ok(Event::Empty(e)) => e.attributes().find_map(|a| a.err()).map(|e| e.to_string()),
            Ok(Event::End(_)) => {
                depth = depth.saturating_sub(1);
                None
            }
            Ok(Event::Eof) if depth > 0 => Some(format!("{depth} element(s) never closed")),
            Ok(Event::Eof) => return None,
            Ok(_) => None,
            Err(e) => Some(e.to_string()),
        };
        if let Some(problem) = problem {
            return Some(format!(
                "its content was not well-formed ENML ({problem}, near byte {at}): it was read the way a browser \
                 reads HTML, which repairs it"
            ));
        }
    }
}

/// The elements HTML never lets hold anything: self-closed is their normal form.
fn is_void(tag: &str) -> bool {
    matches!(
        tag,
        "area"
            | "base"
            | "br"
            | "col"
            | "embed"
            | "hr"
            | "img"
            | "input"
            | "link"
            | "meta"
            | "source"
            | "track"
            | "wbr"
    )
}

/// `enml` from its `<en-note>` on, with self-closed elements closed and CDATA sections escaped (see the module).
fn prepare(enml: &str) -> String {
    let start = find_ignoring_case(enml, "<en-note").unwrap_or(0);
    let text = &enml[start..];
    let mut out = String::with_capacity(text.len() + 64);
    let mut rest = text;
    while let Some(at) = rest.find('<') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        if let Some(after) = rest.strip_prefix("<!--") {
            let end = after.find("-->").map_or(rest.len(), |e| 4 + e + 3);
            out.push_str(&rest[..end]);
            rest = &rest[end..];
        } else if let Some(after) = rest.strip_prefix("<![CDATA[") {
            let (inner, end) = match after.find("]]>") {
                Some(e) => (&after[..e], 9 + e + 3),
                None => (after, rest.len()),
            };
            out.push_str(&quick_xml::escape::escape(inner));
            rest = &rest[end..];
        } else if rest
            .as_bytes()
            .get(..5)
            .is_some_and(|b| b.eq_ignore_ascii_case(b"</br>"))
        {
            // `<br></br>` is one break in XML; HTML would read the end tag as a second one.
            rest = &rest[5..];
        } else if let Some(tag_end) = start_tag_end(rest) {
            let tag = &rest[..tag_end];
            let name: String = tag[1..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | ':' | '_'))
                .collect::<String>()
                .to_ascii_lowercase();
            let body = tag[..tag.len() - 1].trim_end();
            match body.strip_suffix('/') {
                Some(open) if !is_void(&name) => {
                    out.push_str(open.trim_end());
                    out.push_str("></");
                    out.push_str(&name);
                    out.push('>');
                }
                _ => out.push_str(tag),
            }
            rest = &rest[tag_end..];
        } else {
            out.push('<');
            rest = &rest[1..];
        }
    }
    out.push_str(rest);
    out
}

/// Where the start tag at the beginning of `text` ends (just after its `>`), quoted attribute values skipped;
/// `None` when `text` does not start with one, or it never ends.
fn start_tag_end(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    if bytes.len() < 2 || !bytes[1].is_ascii_alphabetic() {
        return None;
    }
    let mut quote: Option<u8> = None;
    for (i, &b) in bytes.iter().enumerate().skip(1) {
        match quote {
            Some(q) if b == q => quote = None,
            Some(_) => {}
            None if b == b'"' || b == b'\'' => quote = Some(b),
            None if b == b'>' => return Some(i + 1),
            // A new tag starts before this one ended: leave this one to the HTML parser as it is.
            None if b == b'<' => return None,
            None => {}
        }
    }
    None
}

fn find_ignoring_case(haystack: &str, needle: &str) -> Option<usize> {
    haystack
        .as_bytes()
        .windows(needle.len())
        .position(|w| w.eq_ignore_ascii_case(needle.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::{check, prepare};

    #[test]
    fn self_closed_elements_are_closed_and_cdata_is_text() {
        assert_eq!(
            prepare(
                "<?xml version=\"1.0\"?><!DOCTYPE en-note SYSTEM \"x\"><en-note><en-media hash=\"a/b\" />x<br/>\
                     <![CDATA[<b>&]]><div/></en-note>"
            ),
            "<en-note><en-media hash=\"a/b\"></en-media>x<br/>&lt;b&gt;&amp;<div></div></en-note>"
        );
        assert_eq!(
            prepare("<en-note>a<br></br>b<BR></BR></en-note>"),
            "<en-note>a<br>b<BR></en-note>"
        );
    }

    #[test]
    fn the_strict_reading_names_what_was_wrong() {
        assert_eq!(check("<en-note><div>a</div></en-note>"), None);
        for broken in [
            "<en-note><div>a</en-note>",
            "<en-note><div class=x>a</div></en-note>",
            "<en-note><div>a & b</div></en-note>",
            "<en-note><div>a</div></div></en-note>",
            "<en-note><div>a",
        ] {
            assert!(check(broken).is_some_and(|m| m.contains("not well-formed")), "{broken}");
        }
    }
}
