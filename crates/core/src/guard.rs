//! The checks every write makes: input validation and the fixed list of dangerous attribute names.

use crate::error::{Error, Result};

/// The longest title a note or notebook may have, in characters.
pub const MAX_TITLE_CHARS: usize = 1_000;
/// The largest note body, in bytes.
pub const MAX_BODY_BYTES: usize = 16 * 1024 * 1024;
/// The largest attachment, in bytes.
pub const MAX_ATTACHMENT_BYTES: usize = 64 * 1024 * 1024;
/// The longest tag or attribute name, in characters.
pub const MAX_NAME_CHARS: usize = 100;

/// Label names that change how a note behaves (scripts, widgets, rendering, sharing); only the user may set them.
const DANGEROUS_LABELS: &[&str] = &[
    "run",
    "runAtHour",
    "customRequestHandler",
    "customResourceProvider",
    "widget",
    "shareRaw",
    "titleTemplate",
    "webViewSrc",
    "iconPack",
    "docName",
    "docUrl",
    "scriptInLauncherContent",
];

/// Relation names that change how a note behaves; `runOn*` relations are matched by prefix.
const DANGEROUS_RELATIONS: &[&str] = &[
    "widget",
    "renderNote",
    "searchScript",
    "script",
    "shareJs",
    "shareHtml",
    "shareTemplate",
    "template",
];

/// Whether an attribute name is on the dangerous list, for labels and relations alike (without regard to case).
pub fn is_dangerous_attribute(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.starts_with("runon")
        || DANGEROUS_LABELS
            .iter()
            .chain(DANGEROUS_RELATIONS)
            .any(|d| d.eq_ignore_ascii_case(name))
}

pub(crate) fn title(kind: &str, title: &str) -> Result<String> {
    // Bidirectional overrides, embeddings and isolates reorder what follows them: `invoice\u{202e}gpj.exe` shows as
    // `invoiceexe.jpg`. A title has no use for them (right-to-left text shows right without), so they are dropped.
    let cleaned: String;
    let title = if title.chars().any(is_bidi_control) {
        cleaned = title.chars().filter(|c| !is_bidi_control(*c)).collect();
        cleaned.as_str()
    } else {
        title
    };
    let trimmed = title.trim();
    if trimmed.is_empty() {
        return Err(Error::invalid(format!("{kind} title cannot be empty.")));
    }
    if trimmed.chars().count() > MAX_TITLE_CHARS {
        return Err(Error::invalid(format!(
            "{kind} title is longer than {MAX_TITLE_CHARS} characters."
        )));
    }
    if trimmed.chars().any(|c| c.is_control()) {
        return Err(Error::invalid(format!(
            "{kind} title must be one line of text without control characters; put longer text in the body."
        )));
    }
    Ok(trimmed.to_owned())
}

pub(crate) fn body(body: &str) -> Result<()> {
    if body.len() > MAX_BODY_BYTES {
        return Err(Error::invalid(format!(
            "Note body is {} bytes; the limit is {MAX_BODY_BYTES} bytes. Split it into several notes.",
            body.len()
        )));
    }
    if body.contains('\0') {
        return Err(Error::invalid("Note body cannot contain NUL characters."));
    }
    Ok(())
}

pub(crate) fn tag_name(name: &str) -> Result<String> {
    let trimmed = name.trim();
    if trimmed.is_empty() {
        return Err(Error::invalid("Tag name cannot be empty."));
    }
    if trimmed.chars().count() > MAX_NAME_CHARS {
        return Err(Error::invalid(format!(
            "Tag name is longer than {MAX_NAME_CHARS} characters."
        )));
    }
    if trimmed.chars().any(|c| c.is_control()) {
        return Err(Error::invalid("Tag name cannot contain control characters."));
    }
    Ok(trimmed.to_owned())
}

pub(crate) fn attribute_name(name: &str) -> Result<()> {
    let valid_start = name.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_');
    let valid_rest = name
        .chars()
        .all(|c| c.is_alphanumeric() || matches!(c, '_' | ':' | '-' | '.' | ' '));
    // Single spaces between words, as Obsidian's properties have them (`due date`); none at the end, none doubled.
    let spaces_fine = !name.ends_with(' ') && !name.contains("  ");
    if !valid_start || !valid_rest || !spaces_fine || name.chars().count() > MAX_NAME_CHARS {
        return Err(Error::invalid(format!(
            "Attribute name '{name}' is not valid: use letters, digits, '_', ':', '-', '.' or single spaces between \
             words, starting with a letter or '_', at most {MAX_NAME_CHARS} characters."
        )));
    }
    Ok(())
}

pub(crate) fn icon(icon: Option<&str>) -> Result<Option<String>> {
    match icon.map(str::trim) {
        None | Some("") => Ok(None),
        Some(icon) if icon.chars().count() > 64 || icon.chars().any(|c| c.is_control()) => Err(Error::invalid(
            "Icon must be an emoji or a short icon name (at most 64 characters).",
        )),
        Some(icon) => Ok(Some(icon.to_owned())),
    }
}

/// A notebook's title: a title that holds no `/`, which separates the notebooks of a path (`Work/Projects`). A
/// notebook titled `Work/Projects` would have the same path as Projects inside Work, and could not be named by it.
pub(crate) fn notebook_title(title: &str) -> Result<String> {
    let title = self::title("Notebook", title)?;
    if let Some((before, last)) = title.rsplit_once('/') {
        let (before, last) = (before.trim(), last.trim());
        let example = if before.is_empty() || last.is_empty() {
            String::new()
        } else {
            format!(" To put {last} inside {before}, create {last} in the notebook {before}.")
        };
        return Err(Error::invalid(format!(
            "Notebook title cannot contain '/': it separates the notebooks of a path.{example}"
        )));
    }
    Ok(title)
}

/// The characters that override or embed a text direction (U+202A to U+202E, U+2066 to U+2069).
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_notebook_title_with_a_slash_is_refused_with_an_example_of_its_own() {
        let refused = |title: &str| super::notebook_title(title).unwrap_err().to_string();
        assert!(refused("Work/Plans").ends_with("To put Plans inside Work, create Plans in the notebook Work."));
        // Nothing on one side of the slash: no example to give.
        assert!(refused("Work/").ends_with("separates the notebooks of a path."));
        assert_eq!(super::notebook_title(" Plans ").unwrap(), "Plans");
    }

    #[test]
    fn titles_lose_direction_overrides() {
        assert_eq!(
            super::title("Note", "invoice\u{202e}gpj.exe").unwrap(),
            "invoicegpj.exe"
        );
        assert_eq!(
            super::title("Note", "\u{2067}שלום\u{2069} notes").unwrap(),
            "שלום notes"
        );
        assert!(
            super::title("Note", "\u{202d}\u{202c}").is_err(),
            "nothing left is an empty title"
        );
    }

    #[test]
    fn dangerous_names() {
        for name in [
            "run",
            "RUN",
            "widget",
            "renderNote",
            "runOnNoteChange",
            "runonattributecreation",
            "shareJs",
        ] {
            assert!(is_dangerous_attribute(name), "{name} should be dangerous");
        }
        for name in [
            "status",
            "priority",
            "author",
            "runner_up_not_prefix_of_runon",
            "rendered",
        ] {
            assert!(!is_dangerous_attribute(name), "{name} should be allowed");
        }
    }
}
