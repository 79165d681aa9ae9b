//! YAML front matter: split from a Markdown file, read into the fields quire knows (title, tags, aliases, times,
//! to-do state, protection) and the rest as label attributes; and written back for export.

use quire_core::Timestamp;
use yaml_rust2::{Yaml, YamlEmitter, YamlLoader};

/// What a file's front matter says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct FrontMatter {
    pub(crate) title: Option<String>,
    pub(crate) tags: Vec<String>,
    pub(crate) aliases: Vec<String>,
    pub(crate) created: Option<Timestamp>,
    pub(crate) updated: Option<Timestamp>,
    pub(crate) todo: bool,
    /// `Some(Some(t))`: completed at t; `Some(None)`: open.
    pub(crate) completed: Option<Option<Timestamp>>,
    pub(crate) protected: bool,
    /// Other keys, as label attributes (lists joined with ", ").
    pub(crate) labels: Vec<(String, String)>,
    /// A notebook's description file (`_notebook.md`) rather than a note.
    pub(crate) notebook: bool,
    pub(crate) icon: Option<String>,
    /// `attachment_titles`: file name → the attachment's title, where an export had to rename the file.
    pub(crate) attachment_titles: Vec<(String, String)>,
    /// `attachments`: files beside the note that are its attachments, linked from its text or not.
    pub(crate) attachments: Vec<String>,
    /// `relations`: relation name → the note it points at (`[[Title]]` or a relative path to its file).
    pub(crate) relations: Vec<(String, String)>,
}

/// Splits `text` into its front matter (without the `---` lines) and the body. A file without front matter has
/// `None`; so has one whose first `---` is never closed (a horizontal rule, as Obsidian reads it): all of it is
/// the body.
pub(crate) fn split(text: &str) -> (Option<&str>, &str) {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some(rest) = text.strip_prefix("---\n").or_else(|| text.strip_prefix("---\r\n")) else {
        return (None, text);
    };
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        let bare = line.trim_end_matches(['\n', '\r']);
        if bare == "---" || bare == "..." {
            let yaml = &rest[..offset];
            let body = &rest[offset + line.len()..];
            return (Some(yaml), body);
        }
        offset += line.len();
    }
    (None, text)
}

/// The most bytes of front matter read.
const MAX_FRONT_MATTER: usize = 64 * 1024;

/// Reads front matter YAML.
pub(crate) fn parse(yaml: &str) -> Result<FrontMatter, String> {
    if yaml.len() > MAX_FRONT_MATTER {
        return Err(format!(
            "the front matter is longer than {} KiB",
            MAX_FRONT_MATTER / 1024
        ));
    }
    if has_alias(yaml) {
        // The parser copies an aliased value at every use: a few lines of aliases can make gigabytes.
        return Err("the front matter uses YAML aliases (`*name`), which quire does not read".to_owned());
    }
    let docs = YamlLoader::load_from_str(yaml).map_err(|e| format!("the front matter is not valid YAML: {e}"))?;
    let mut out = FrontMatter::default();
    let Some(doc) = docs.into_iter().next() else {
        return Ok(out);
    };
    let map = match doc {
        Yaml::Hash(map) => map,
        Yaml::Null => return Ok(out),
        _ => return Err("the front matter is not a mapping of keys to values".to_owned()),
    };
    for (key, value) in map {
        let Some(key) = scalar(&key) else {
            continue;
        };
        match key.to_lowercase().as_str() {
            "title" => out.title = scalar(&value).filter(|t| !t.trim().is_empty()),
            "tags" | "tag" => out.tags.extend(
                list(&value, true)
                    .into_iter()
                    .map(|t| t.trim_start_matches('#').to_owned()),
            ),
            "aliases" | "alias" => out.aliases.extend(list(&value, false)),
            "created" | "date" | "created_at" => out.created = scalar(&value).and_then(|t| time_of(&t)),
            "updated" | "modified" | "updated_at" => out.updated = scalar(&value).and_then(|t| time_of(&t)),
            "todo" | "is_todo" => out.todo = truthy(&value),
            "completed" | "done" => {
                out.completed = Some(match &value {
                    Yaml::Boolean(true) => Some(Timestamp::now()),
                    Yaml::Boolean(false) | Yaml::Null => None,
                    other => scalar(other).and_then(|t| time_of(&t)),
                });
            }
            "protected" => out.protected = truthy(&value),
            "quire_notebook" => out.notebook = truthy(&value),
            "icon" => out.icon = scalar(&value),
            "attachments" => out.attachments = list(&value, false),
            "relations" if matches!(value, Yaml::Hash(_)) => {
                if let Yaml::Hash(map) = &value {
                    out.relations = map.iter().filter_map(|(k, v)| Some((scalar(k)?, scalar(v)?))).collect();
                }
            }
            // Labels an export could not write under their own names (`title`, `tags`...).
            "quire_labels" if matches!(value, Yaml::Hash(_)) => {
                if let Yaml::Hash(map) = &value {
                    out.labels
                        .extend(map.iter().filter_map(|(k, v)| Some((scalar(k)?, scalar(v)?))));
                }
            }
            "attachment_titles" => {
                if let Yaml::Hash(map) = &value {
                    out.attachment_titles = map.iter().filter_map(|(k, v)| Some((scalar(k)?, scalar(v)?))).collect();
                }
            }
            _ => {
                let text = match &value {
                    Yaml::Array(_) => list(&value, false).join(", "),
                    Yaml::Hash(_) => {
                        let mut s = String::new();
                        let mut emitter = YamlEmitter::new(&mut s);
                        let _ = emitter.dump(&value);
                        s.trim_start_matches("---").trim().to_owned()
                    }
                    other => scalar(other).unwrap_or_default(),
                };
                out.labels.push((key, text));
            }
        }
    }
    out.tags.retain(|t| !t.trim().is_empty());
    out.tags.dedup();
    Ok(out)
}

/// Whether YAML text uses an alias (`*name` where a value starts). Quoted text and comments are skipped.
fn has_alias(yaml: &str) -> bool {
    for line in yaml.lines() {
        let mut quote: Option<char> = None;
        let mut previous = ' ';
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            match quote {
                Some(q) if c == q => quote = None,
                Some(_) => {}
                None if c == '"' || c == '\'' => quote = Some(c),
                None if c == '#' && previous.is_whitespace() => break,
                None if c == '*'
                    && matches!(previous, ' ' | '\t' | '[' | ',' | ':' | '-' | '{')
                    && chars
                        .peek()
                        .is_some_and(|n| n.is_alphanumeric() || *n == '_' || *n == '-') =>
                {
                    return true;
                }
                None => {}
            }
            previous = c;
        }
    }
    false
}

fn scalar(value: &Yaml) -> Option<String> {
    match value {
        Yaml::String(s) | Yaml::Real(s) => Some(s.clone()),
        Yaml::Integer(i) => Some(i.to_string()),
        Yaml::Boolean(b) => Some(b.to_string()),
        _ => None,
    }
}

/// A list, or one value; a text is split at commas (and, for tags, at spaces: `tags: a b` is seen in the wild).
fn list(value: &Yaml, spaces: bool) -> Vec<String> {
    match value {
        Yaml::Array(items) => items.iter().filter_map(scalar).collect(),
        Yaml::String(s) => s
            .split(|c| c == ',' || (spaces && c == ' '))
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(str::to_owned)
            .collect(),
        other => scalar(other).into_iter().collect(),
    }
}

fn truthy(value: &Yaml) -> bool {
    match value {
        Yaml::Boolean(b) => *b,
        Yaml::String(s) => matches!(s.to_lowercase().as_str(), "true" | "yes" | "1"),
        Yaml::Integer(i) => *i != 0,
        _ => false,
    }
}

/// RFC 3339, or a date (`2024-03-01`), or a date and time without offset (`2024-03-01 14:30`, UTC).
pub(crate) fn time_of(text: &str) -> Option<Timestamp> {
    let text = text.trim();
    if let Some(t) = Timestamp::parse_rfc3339(text) {
        return Some(t);
    }
    let (date, clock) = match text.split_once([' ', 'T']) {
        Some((date, clock)) => (date, clock),
        None => (text, "00:00:00"),
    };
    let clock = if clock.len() == 5 {
        format!("{clock}:00")
    } else {
        clock.to_owned()
    };
    Timestamp::parse_rfc3339(&format!("{date}T{clock}Z"))
}

/// Front matter for an exported note or notebook: `---`, the YAML, `---`.
pub(crate) fn render(fields: &[(&str, Yaml)]) -> String {
    if fields.is_empty() {
        return String::new();
    }
    let mut map = yaml_rust2::yaml::Hash::new();
    for (key, value) in fields {
        map.insert(Yaml::String((*key).to_owned()), value.clone());
    }
    let mut out = String::new();
    let mut emitter = YamlEmitter::new(&mut out);
    if emitter.dump(&Yaml::Hash(map)).is_err() {
        return String::new();
    }
    format!("{out}\n---\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_keys_quire_knows_and_keeps_the_rest() {
        let (yaml, body) = split(
            "---\ntitle: Trip\ntags: [travel, \"#2024\"]\naliases: Lisbon trip\n\
                                   created: 2024-03-01\nupdated: 2024-03-02T10:00:00+01:00\ntodo: true\n\
                                   completed: false\nstatus: draft\nrating: 5\n---\n# Body\n",
        );
        assert_eq!(body, "# Body\n");
        let fm = parse(yaml.unwrap()).unwrap();
        assert_eq!(fm.title.as_deref(), Some("Trip"));
        assert_eq!(fm.tags, ["travel", "2024"]);
        assert_eq!(fm.aliases, ["Lisbon trip"]);
        assert_eq!(
            fm.created.map(|t| t.to_rfc3339()).as_deref(),
            Some("2024-03-01T00:00:00.000Z")
        );
        assert_eq!(
            fm.updated.map(|t| t.to_rfc3339()).as_deref(),
            Some("2024-03-02T09:00:00.000Z")
        );
        assert!(fm.todo);
        assert_eq!(fm.completed, Some(None));
        assert_eq!(
            fm.labels,
            [
                ("status".to_owned(), "draft".to_owned()),
                ("rating".to_owned(), "5".to_owned())
            ]
        );
    }

    #[test]
    fn broken_front_matter_is_an_error_and_none_is_fine() {
        assert_eq!(
            split("---\nA rule, not front matter"),
            (None, "---\nA rule, not front matter")
        );
        assert!(parse("a: &a [x, x]\nb: [*a, *a]").unwrap_err().contains("aliases"));
        assert!(parse("a: \"*not an alias\"\nb: 2 * 3\nc: R&D").is_ok());
        assert!(parse("title: [unclosed").is_err());
        assert!(parse("- a list").is_err());
        assert_eq!(split("no front matter"), (None, "no front matter"));
        assert_eq!(split("---\n---\nbody"), (Some(""), "body"));
    }

    #[test]
    fn rendered_front_matter_reads_back() {
        let text = render(&[
            ("title", Yaml::String("A: tricky \"title\"".into())),
            ("tags", Yaml::Array(vec![Yaml::String("x".into())])),
            ("protected", Yaml::Boolean(true)),
        ]);
        let full = format!("{text}body");
        let (yaml, body) = split(&full);
        assert_eq!(body, "body");
        let fm = parse(yaml.unwrap()).unwrap();
        assert_eq!(fm.title.as_deref(), Some("A: tricky \"title\""));
        assert_eq!(fm.tags, ["x"]);
        assert!(fm.protected);
    }
}
