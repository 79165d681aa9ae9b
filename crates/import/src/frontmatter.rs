//! YAML front matter: split from a Markdown file, read into the fields quire knows (title, tags, aliases, times,
//! to-do state, protection) and the rest as label attributes; and written back for export.

use quire_core::Timestamp;
use yaml_rust2::{Yaml, YamlEmitter, YamlLoader};

/// What a file's front matter says.
/// (Kept with each note in an import's temporary file, as JSON: see `crate::notes`; times as milliseconds.)
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct FrontMatter {
    pub(crate) title: Option<String>,
    pub(crate) tags: Vec<String>,
    pub(crate) aliases: Vec<String>,
    #[serde(with = "millis")]
    pub(crate) created: Option<Timestamp>,
    #[serde(with = "millis")]
    pub(crate) updated: Option<Timestamp>,
    pub(crate) todo: bool,
    /// `Some(Some(t))`: completed at t; `Some(None)`: open.
    #[serde(with = "completion")]
    pub(crate) completed: Option<Option<Timestamp>>,
    pub(crate) protected: bool,
    /// In the source app's trash: imported into quire's trash.
    pub(crate) trashed: bool,
    /// A day's journal: it fills the day's daily note when that is there and empty (see `apps/outline.rs`).
    pub(crate) daily: bool,
    /// Other keys whose values are text, as text labels.
    pub(crate) labels: Vec<(String, String)>,
    /// Other keys whose values are booleans, numbers, lists, maps or null: name → the value as JSON text (maps in
    /// their order), as structured labels.
    pub(crate) json_labels: Vec<(String, String)>,
    /// A notebook's description file (`_notebook.md`) rather than a note.
    pub(crate) notebook: bool,
    pub(crate) icon: Option<String>,
    /// `attachment_titles`: file name → the attachment's title, where an export had to rename the file.
    pub(crate) attachment_titles: Vec<(String, String)>,
    /// `attachments`: files beside the note that are its attachments, linked from its text or not.
    pub(crate) attachments: Vec<String>,
    /// `relations`: relation name → the note it points at (`[[Title]]` or a relative path to its file).
    pub(crate) relations: Vec<(String, String)>,
    /// What the import report says of the front matter (a date that is not one, kept as a label).
    pub(crate) notices: Vec<String>,
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
            "created" | "date" | "created_at" | "updated" | "modified" | "updated_at" => {
                let text = scalar(&value).unwrap_or_default();
                let time = time_of(&text);
                let slot = if key.to_lowercase().starts_with("creat") || key.eq_ignore_ascii_case("date") {
                    &mut out.created
                } else {
                    &mut out.updated
                };
                if time.is_some() {
                    *slot = time;
                }
                // Not a time (a template's `{{date}}`): kept as written, as a label, and said; the file's time
                // stands in for it.
                if time.is_none() && !text.trim().is_empty() {
                    out.notices.push(format!(
                        "{key}: “{text}” is not a date: kept as the label {key}, the file's time used instead"
                    ));
                    out.labels.push((key.clone(), text));
                }
            }
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
                    for (k, v) in map {
                        if let Some(k) = scalar(k) {
                            out.label(k, v);
                        }
                    }
                }
            }
            "attachment_titles" => {
                if let Yaml::Hash(map) = &value {
                    out.attachment_titles = map.iter().filter_map(|(k, v)| Some((scalar(k)?, scalar(v)?))).collect();
                }
            }
            _ => out.label(key, &value),
        }
    }
    out.tags.retain(|t| !t.trim().is_empty());
    out.tags.dedup();
    Ok(out)
}

impl FrontMatter {
    /// Keeps `value` as the label `name`: a string as text (a date YAML reads as a string stays text), anything
    /// else as JSON; what JSON cannot hold (`.inf`, `.nan`) as the text YAML wrote.
    fn label(&mut self, name: String, value: &Yaml) {
        if let Yaml::String(text) = value {
            self.labels.push((name, text.clone()));
        } else if let Some(json) = yaml_to_json(value) {
            self.json_labels.push((name, json));
        } else {
            let text = match value {
                Yaml::Real(text) => text.clone(),
                other => {
                    let mut s = String::new();
                    let _ = YamlEmitter::new(&mut s).dump(other);
                    s.trim_start_matches("---").trim().to_owned()
                }
            };
            self.labels.push((name, text));
        }
    }
}

/// A YAML value as JSON text, maps in their order; `None` for what JSON cannot hold (an infinite or NaN number,
/// a map whose key is not a scalar, an alias).
pub(crate) fn yaml_to_json(value: &Yaml) -> Option<String> {
    let mut out = String::new();
    write_json(value, &mut out)?;
    Some(out)
}

fn write_json(value: &Yaml, out: &mut String) -> Option<()> {
    match value {
        Yaml::Null => out.push_str("null"),
        Yaml::Boolean(b) => out.push_str(if *b { "true" } else { "false" }),
        Yaml::Integer(i) => out.push_str(&i.to_string()),
        Yaml::Real(text) => {
            if serde_json::from_str::<serde_json::Number>(text).is_ok() {
                out.push_str(text);
            } else {
                // `.5`, `+1.5`, `1.` are YAML's; JSON writes them its own way.
                let number = text.parse::<f64>().ok().filter(|n| n.is_finite())?;
                out.push_str(&format!("{number:?}"));
            }
        }
        Yaml::String(text) => out.push_str(&serde_json::to_string(text).ok()?),
        Yaml::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json(item, out)?;
            }
            out.push(']');
        }
        Yaml::Hash(map) => {
            out.push('{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&serde_json::to_string(&scalar(key)?).ok()?);
                out.push(':');
                write_json(item, out)?;
            }
            out.push('}');
        }
        Yaml::Alias(_) | Yaml::BadValue => return None,
    }
    Some(())
}

/// `value` with every string inside it replaced by what `f` makes of it (map keys left as they are).
pub(crate) fn map_strings(value: &Yaml, f: &mut dyn FnMut(&str) -> String) -> Yaml {
    match value {
        Yaml::String(text) => Yaml::String(f(text)),
        Yaml::Array(items) => Yaml::Array(items.iter().map(|item| map_strings(item, f)).collect()),
        Yaml::Hash(map) => Yaml::Hash(map.iter().map(|(k, v)| (k.clone(), map_strings(v, f))).collect()),
        other => other.clone(),
    }
}

/// JSON text as a YAML value (a structured label written back as front matter): maps in their order, numbers as
/// written. Read through serde, `1.10` would come back `1.1`, `1e3` `1000.0` and a 24-digit integer in exponent form.
pub(crate) fn json_to_yaml(json: &str) -> Option<Yaml> {
    let mut reader = JsonReader { text: json, at: 0 };
    let value = reader.value(0)?;
    reader.space();
    (reader.at == json.len()).then_some(value)
}

/// A reader of JSON text into YAML values.
struct JsonReader<'a> {
    text: &'a str,
    at: usize,
}

impl JsonReader<'_> {
    fn space(&mut self) {
        while self
            .text
            .as_bytes()
            .get(self.at)
            .is_some_and(|b| b" \t\r\n".contains(b))
        {
            self.at += 1;
        }
    }

    fn eat(&mut self, byte: u8) -> bool {
        self.space();
        let found = self.text.as_bytes().get(self.at) == Some(&byte);
        if found {
            self.at += 1;
        }
        found
    }

    fn value(&mut self, depth: usize) -> Option<Yaml> {
        if depth > 128 {
            return None;
        }
        self.space();
        let rest = &self.text[self.at..];
        let word = |w: &str, v: Yaml| rest.starts_with(w).then_some((w.len(), v));
        match *rest.as_bytes().first()? {
            b'{' => {
                self.at += 1;
                let mut map = yaml_rust2::yaml::Hash::new();
                if self.eat(b'}') {
                    return Some(Yaml::Hash(map));
                }
                loop {
                    self.space();
                    let key = self.string()?;
                    if !self.eat(b':') {
                        return None;
                    }
                    let value = self.value(depth + 1)?;
                    map.insert(Yaml::String(key), value);
                    if self.eat(b'}') {
                        return Some(Yaml::Hash(map));
                    }
                    if !self.eat(b',') {
                        return None;
                    }
                }
            }
            b'[' => {
                self.at += 1;
                let mut items = Vec::new();
                if self.eat(b']') {
                    return Some(Yaml::Array(items));
                }
                loop {
                    items.push(self.value(depth + 1)?);
                    if self.eat(b']') {
                        return Some(Yaml::Array(items));
                    }
                    if !self.eat(b',') {
                        return None;
                    }
                }
            }
            b'"' => self.string().map(Yaml::String),
            _ => {
                if let Some((len, value)) = word("true", Yaml::Boolean(true))
                    .or_else(|| word("false", Yaml::Boolean(false)))
                    .or_else(|| word("null", Yaml::Null))
                {
                    self.at += len;
                    return Some(value);
                }
                let len = rest
                    .bytes()
                    .take_while(|b| b.is_ascii_digit() || b"+-.eE".contains(b))
                    .count();
                let number = &rest[..len];
                serde_json::from_str::<serde_json::Number>(number).ok()?;
                self.at += len;
                Some(match number.parse::<i64>() {
                    Ok(n) if !number.starts_with('+') => Yaml::Integer(n),
                    _ => Yaml::Real(number.to_owned()),
                })
            }
        }
    }

    /// The string whose `"` is at the reader's place, unescaped.
    fn string(&mut self) -> Option<String> {
        let bytes = self.text.as_bytes();
        if bytes.get(self.at) != Some(&b'"') {
            return None;
        }
        let mut k = self.at + 1;
        loop {
            match *bytes.get(k)? {
                b'\\' => k += 2,
                b'"' => break,
                _ => k += 1,
            }
        }
        let text = serde_json::from_str::<String>(self.text.get(self.at..=k)?).ok()?;
        self.at = k + 1;
        Some(text)
    }
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

/// A time as front matter gives it: a date alone (`2023-09-12`) for midnight UTC, which is what a date alone reads
/// as on import, so a note whose front matter said a date says it again; the whole time otherwise.
pub(crate) fn date_or_time(time: quire_core::Timestamp) -> String {
    let text = time.to_rfc3339();
    if time.as_millis().rem_euclid(86_400_000) == 0 {
        text.get(..10).unwrap_or(&text).to_owned()
    } else {
        text
    }
}

/// A note's time as milliseconds (a time far outside RFC 3339's years comes back as it went).
mod millis {
    use quire_core::Timestamp;
    use serde::{Deserialize, Deserializer, Serializer};

    pub(crate) fn serialize<S: Serializer>(time: &Option<Timestamp>, to: S) -> Result<S::Ok, S::Error> {
        match time {
            Some(time) => to.serialize_some(&time.0),
            None => to.serialize_none(),
        }
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(from: D) -> Result<Option<Timestamp>, D::Error> {
        Ok(Option::<i64>::deserialize(from)?.map(Timestamp))
    }
}

/// A task's completion (`Some(Some(t))` done at t, `Some(None)` open, `None` no task) as a list of at most one
/// item that may be null: JSON's null alone cannot tell the last two apart.
mod completion {
    use quire_core::Timestamp;
    use serde::{Deserialize, Deserializer, Serializer};

    pub(crate) fn serialize<S: Serializer>(done: &Option<Option<Timestamp>>, to: S) -> Result<S::Ok, S::Error> {
        let list: Vec<Option<i64>> = done.iter().map(|at| at.map(|t| t.0)).collect();
        serde::Serialize::serialize(&list, to)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(from: D) -> Result<Option<Option<Timestamp>>, D::Error> {
        let list = Vec::<Option<i64>>::deserialize(from)?;
        Ok(list.first().map(|at| at.map(Timestamp)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_templates_date_placeholder_is_kept_as_a_label_and_said() {
        let fm =
            parse("created: \"{{date}}\"\nupdated: <% tp.file.last_modified_date() %>\ndate: 2024-03-01\n").unwrap();
        assert_eq!(
            fm.created.map(|t| t.to_rfc3339()).as_deref(),
            Some("2024-03-01T00:00:00.000Z")
        );
        assert_eq!(fm.updated, None);
        assert_eq!(
            fm.labels,
            [
                ("created".to_owned(), "{{date}}".to_owned()),
                ("updated".to_owned(), "<% tp.file.last_modified_date() %>".to_owned())
            ]
        );
        assert_eq!(fm.notices.len(), 2);
        assert!(fm.notices[0].contains("“{{date}}” is not a date"), "{:?}", fm.notices);
    }

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
        assert_eq!(fm.labels, [("status".to_owned(), "draft".to_owned())]);
        assert_eq!(fm.json_labels, [("rating".to_owned(), "5".to_owned())]);
    }

    #[test]
    fn values_keep_their_types_through_json_and_back() {
        let yaml = "text: plain\nquoted: \"true\"\nday: 2024-03-01\nyes: true\nint: 42\nneg: -7\nreal: 1.50\n\
                    short: .5\nbig: 1e300\nnothing:\nlist: [b, 2, false]\nmap: {z: 1, a: [x]}\nempty: []\n\
                    inf: .inf\nlinks: [\"[[A]]\", \"[[B]]\"]\n";
        let fm = parse(yaml).unwrap();
        let shown = |pairs: &[(String, String)]| pairs.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>();
        assert_eq!(
            shown(&fm.labels),
            ["text=plain", "quoted=true", "day=2024-03-01", "inf=.inf"],
            "strings (and dates, which YAML reads as strings) stay text; what JSON cannot hold too"
        );
        assert_eq!(
            shown(&fm.json_labels),
            [
                "yes=true",
                "int=42",
                "neg=-7",
                "real=1.50",
                "short=0.5",
                "big=1e300",
                "nothing=null",
                "list=[\"b\",2,false]",
                "map={\"z\":1,\"a\":[\"x\"]}",
                "empty=[]",
                "links=[\"[[A]]\",\"[[B]]\"]",
            ]
        );
        // Back as YAML: the same types and values, maps in their order.
        for (key, json) in &fm.json_labels {
            let back = json_to_yaml(json).unwrap();
            let again = parse(&render(&[(key.as_str(), back)])[4..]).unwrap_or_else(|e| panic!("{key}: {e}"));
            assert_eq!(again.json_labels.len(), 1, "{key}");
            let expected: serde_json::Value = serde_json::from_str(json).unwrap();
            let found: serde_json::Value = serde_json::from_str(&again.json_labels[0].1).unwrap();
            assert_eq!(found, expected, "{key}");
        }
        assert_eq!(
            json_to_yaml("{\"z\":1,\"a\":2}").map(|y| render(&[("m", y)])).unwrap(),
            "---\nm:\n  z: 1\n  a: 2\n---\n"
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
