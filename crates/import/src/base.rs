//! Obsidian Bases (`.base` files) as quire views: each of a base's table, cards and list views becomes a
//! ```` ```dataview ```` block (the view's name after it, as quire's preview reads it and Dataview ignores it) with
//! the base's filters, columns, sort, grouping and limit in Dataview's language, under the view's name; the file
//! itself follows in a ```` ```base ```` block, which Obsidian renders as the base, so an export to a vault keeps it.
//!
//! Filters are Bases' expressions rewritten word by word: `file.hasTag("a")`, `file.inFolder("X")`,
//! `file.hasLink("N")`, `file.hasProperty("p")`, `note.p`, `formula.f` (its expression), `==`, `&&`, `||`,
//! `x.contains(y)`, `x.isEmpty()`, `today()`, `now()`, `date("...")`. What quire cannot read back as a query is left
//! out of the view and said in the import report.

use quire_core::query::{parse_expr, parse_query};
use yaml_rust2::{Yaml, YamlLoader};

/// A base, converted: the note's body and what the report says of it.
#[derive(Debug)]
pub(crate) struct Converted {
    pub(crate) body: String,
    pub(crate) notices: Vec<String>,
}

/// Why a file is not a base (said in the import report).
#[derive(Debug)]
pub(crate) struct NotABase(pub(crate) String);

impl std::fmt::Display for NotABase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Converts a `.base` file's text; `Err` when it is not YAML or holds no view.
pub(crate) fn convert(text: &str) -> Result<Converted, NotABase> {
    let docs =
        YamlLoader::load_from_str(text).map_err(|e| NotABase(format!("not a base: its YAML does not read ({e})")))?;
    let doc = docs.into_iter().next().unwrap_or(Yaml::Null);
    let mut notices = Vec::new();
    let formulas: Vec<(String, String)> = match &doc["formulas"] {
        Yaml::Hash(h) => h
            .iter()
            .filter_map(|(k, v)| Some((k.as_str()?.to_owned(), scalar(v)?)))
            .collect(),
        _ => Vec::new(),
    };
    let display = |name: &str| -> Option<String> { doc["properties"][name]["displayName"].as_str().map(str::to_owned) };
    let global = filter(&doc["filters"], &formulas, &mut notices, "the base's filter");
    let views = match &doc["views"] {
        Yaml::Array(views) if !views.is_empty() => views,
        _ => return Err(NotABase("not a base: it has no views".into())),
    };
    let mut body = String::from(
        "Imported from an Obsidian base: each view is a query quire runs. The base itself follows at the end.\n",
    );
    for (i, view) in views.iter().enumerate() {
        let kind = view["type"].as_str().unwrap_or("table");
        let name = view["name"]
            .as_str()
            .map_or_else(|| format!("View {}", i + 1), str::to_owned);
        let group = view["groupBy"]["property"].as_str().map(|p| expression(p, &formulas));
        let (shape, block) = match (kind, &group) {
            ("table", _) => ("TABLE", "table"),
            ("cards", Some(_)) => ("TABLE", "board"),
            ("cards" | "list", _) => ("LIST", "list"),
            (other, _) => {
                notices.push(format!(
                    "view “{name}”: a {other} view has no counterpart in quire; left out"
                ));
                continue;
            }
        };
        let mut query = shape.to_owned();
        if shape == "TABLE" {
            let columns: Vec<String> = match &view["order"] {
                Yaml::Array(order) => order
                    .iter()
                    .filter_map(Yaml::as_str)
                    .filter(|p| *p != "file.name")
                    .map(|p| {
                        let e = expression(p, &formulas);
                        let bare = p.trim_start_matches("note.").trim_start_matches("formula.");
                        match display(p).or_else(|| (e != bare).then(|| bare.to_owned())) {
                            Some(label) => format!("{e} AS \"{}\"", label.replace('"', "'")),
                            None => e,
                        }
                    })
                    .collect(),
                _ => Vec::new(),
            };
            if !columns.is_empty() {
                query.push(' ');
                query.push_str(&columns.join(", "));
            }
        }
        let own = filter(
            &view["filters"],
            &formulas,
            &mut notices,
            &format!("view “{name}”'s filter"),
        );
        let conditions: Vec<&String> = [&global, &own].into_iter().flatten().collect();
        if !conditions.is_empty() {
            let all: Vec<String> = conditions.iter().map(|c| format!("({c})")).collect();
            query.push_str(&format!("\nWHERE {}", all.join(" AND ")));
        }
        if let Some(g) = &group {
            query.push_str(&format!("\nGROUP BY {g}"));
        }
        let sorts: Vec<String> = match &view["sort"] {
            Yaml::Array(sorts) => sorts
                .iter()
                .filter_map(|s| {
                    let p = s["property"].as_str()?;
                    let down = s["direction"].as_str().is_some_and(|d| d.eq_ignore_ascii_case("desc"));
                    let key = if group.is_some() {
                        format!("rows.{}", expression(p, &formulas))
                    } else {
                        expression(p, &formulas)
                    };
                    Some(format!("{key}{}", if down { " DESC" } else { "" }))
                })
                .collect(),
            _ => Vec::new(),
        };
        if group.is_some() {
            query.push_str("\nSORT key");
        } else if !sorts.is_empty() {
            query.push_str(&format!("\nSORT {}", sorts.join(", ")));
        }
        if let Some(limit) = view["limit"].as_i64().filter(|n| *n > 0) {
            query.push_str(&format!("\nLIMIT {limit}"));
        }
        if let Err(e) = parse_query(&query) {
            notices.push(format!(
                "view “{name}”: quire could not read it as a query ({e}); kept as written below"
            ));
            continue;
        }
        body.push_str(&format!("\n## {name}\n\n```dataview {block}\n{query}\n```\n"));
    }
    let fence = if text.contains("```") { "~~~~" } else { "```" };
    body.push_str(&format!("\n## The base\n\n{fence}base\n{}\n{fence}\n", text.trim_end()));
    Ok(Converted { body, notices })
}

fn scalar(v: &Yaml) -> Option<String> {
    match v {
        Yaml::String(s) | Yaml::Real(s) => Some(s.clone()),
        Yaml::Integer(n) => Some(n.to_string()),
        Yaml::Boolean(b) => Some(b.to_string()),
        _ => None,
    }
}

/// A filter (`and:`/`or:`/`not:` lists of expressions, or one expression) as one Dataview condition; a part that
/// does not convert is left out and said.
fn filter(f: &Yaml, formulas: &[(String, String)], notices: &mut Vec<String>, what: &str) -> Option<String> {
    let parts = |list: &Yaml, notices: &mut Vec<String>| -> Vec<String> {
        match list {
            Yaml::Array(items) => items
                .iter()
                .filter_map(|i| filter(i, formulas, notices, what))
                .collect(),
            other => filter(other, formulas, notices, what).into_iter().collect(),
        }
    };
    let joined = |items: Vec<String>, op: &str| -> Option<String> {
        match items.len() {
            0 => None,
            1 => items.into_iter().next(),
            _ => Some(items.iter().map(|i| format!("({i})")).collect::<Vec<_>>().join(op)),
        }
    };
    match f {
        Yaml::Hash(h) => {
            let mut all = Vec::new();
            for (key, value) in h {
                let items = parts(value, notices);
                match key.as_str() {
                    Some("and") => all.extend(joined(items, " AND ")),
                    Some("or") => all.extend(joined(items, " OR ")),
                    Some("not") => all.extend(joined(items, " OR ").map(|c| format!("!({c})"))),
                    _ => notices.push(format!("{what}: {key:?} is not and, or or not; left out")),
                }
            }
            joined(all, " AND ")
        }
        Yaml::Null | Yaml::BadValue => None,
        other => {
            let text = scalar(other)?;
            let converted = expression(&text, formulas);
            match parse_expr(&converted) {
                Ok(e) if calls_only_known(&e) => Some(converted),
                _ => {
                    notices.push(format!("{what}: `{text}` has no counterpart quire reads; left out"));
                    None
                }
            }
        }
    }
}

/// A Bases expression in Dataview's words.
fn expression(text: &str, formulas: &[(String, String)]) -> String {
    let mut out = String::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '"' || c == '\'' {
            let mut j = i + 1;
            let mut s = String::new();
            while j < chars.len() && chars[j] != c {
                if chars[j] == '\\' && j + 1 < chars.len() {
                    j += 1;
                }
                s.push(chars[j]);
                j += 1;
            }
            // Bases adds durations written as text to dates (`now() - "1 week"`): Dataview's `dur(1 week)`.
            let after_sign = out.trim_end().ends_with(['+', '-']);
            if after_sign && quire_core::query::duration(&s).is_some() {
                out.push_str(&format!("dur({})", s.replace(['(', ')'], "")));
            } else {
                out.push('"');
                out.push_str(&s.replace('\\', "\\\\").replace('"', "\\\""));
                out.push('"');
            }
            i = j + 1;
            continue;
        }
        if c.is_alphabetic() || c == '_' {
            let mut j = i;
            while j < chars.len() && (chars[j].is_alphanumeric() || matches!(chars[j], '_' | '.' | '-')) {
                j += 1;
            }
            let word: String = chars[i..j].iter().collect();
            // A method call on a value: `x.contains(` / `x.isEmpty()` / `file.hasTag(`.
            let call = chars.get(j) == Some(&'(');
            let (receiver, method) = match word.rsplit_once('.') {
                Some((r, m)) if call => (Some(r.to_owned()), m.to_owned()),
                _ => (None, word.clone()),
            };
            let args_end = call.then(|| matching(&chars, j)).flatten();
            if let (Some(end), true) = (args_end, call) {
                let inner: String = chars[j + 1..end].iter().collect();
                let args = split_args(&inner)
                    .into_iter()
                    .map(|a| expression(a.trim(), formulas))
                    .collect::<Vec<_>>();
                let recv = receiver.as_deref().map(|r| expression(r, formulas));
                let converted = match (recv.as_deref(), method.as_str()) {
                    (Some("file"), "hasTag") => any(args.iter().map(|a| format!("contains(file.tags, \"#\" + {a})"))),
                    (Some("file"), "inFolder") => any(args
                        .iter()
                        .map(|a| format!("(file.folder = {a} OR startswith(file.folder, {a} + \"/\"))"))),
                    (Some("file"), "hasLink") => {
                        any(args.iter().map(|a| format!("contains(file.outlinks, link({a}))")))
                    }
                    (Some("file"), "hasProperty") => {
                        any(args.iter().map(|a| format!("{} != null", a.trim_matches('"'))))
                    }
                    (Some(r), "contains") => format!("contains({r}, {})", args.join(", ")),
                    (Some(r), "containsAny") => any(args.iter().map(|a| format!("contains({r}, {a})"))),
                    (Some(r), "isEmpty") => format!("(length(default({r}, \"\")) = 0)"),
                    (Some(r), "startsWith") => format!("startswith({r}, {})", args.join(", ")),
                    (Some(r), "endsWith") => format!("endswith({r}, {})", args.join(", ")),
                    (Some(r), "lower") => format!("lower({r})"),
                    (Some(r), "upper") => format!("upper({r})"),
                    (None, "today") => "date(today)".to_owned(),
                    (None, "now") => "date(now)".to_owned(),
                    (None, "date") => format!("date({})", args.join(", ")),
                    (None, "if") => format!("choice({})", args.join(", ")),
                    (r, m) => format!(
                        "{}{m}({})",
                        r.map(|r| format!("{r}.")).unwrap_or_default(),
                        args.join(", ")
                    ),
                };
                out.push_str(&converted);
                i = end + 1;
                continue;
            }
            // `note["Publish Year"]`: the property by its name, as Dataview matches it (`publish-year`).
            if word == "note" && chars.get(j) == Some(&'[') {
                let close = chars[j..].iter().position(|c| *c == ']').map(|k| j + k);
                let inner: Option<String> = close.map(|k| chars[j + 1..k].iter().collect());
                if let (Some(k), Some(inner)) = (close, inner) {
                    let name = inner.trim().trim_matches(['"', '\'']);
                    out.push_str(&quire_core::structure::field_key(name));
                    i = k + 1;
                    continue;
                }
            }
            let mapped = if let Some(name) = word.strip_prefix("formula.") {
                formulas
                    .iter()
                    .find(|(k, _)| k == name)
                    .map_or_else(|| name.to_owned(), |(_, e)| format!("({})", expression(e, formulas)))
            } else if let Some(name) = word.strip_prefix("note.") {
                name.to_owned()
            } else {
                word
            };
            out.push_str(&mapped);
            i = j;
            continue;
        }
        let two: String = chars[i..(i + 2).min(chars.len())].iter().collect();
        match two.as_str() {
            "==" => {
                out.push('=');
                i += 2;
            }
            "&&" => {
                out.push_str(" AND ");
                i += 2;
            }
            "||" => {
                out.push_str(" OR ");
                i += 2;
            }
            "!=" | "<=" | ">=" => {
                out.push_str(&two);
                i += 2;
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

/// Whether every function an expression calls is one the query engine has (a Bases method with no counterpart
/// comes through as a call of its own name).
fn calls_only_known(e: &quire_core::query::Expr) -> bool {
    use quire_core::query::Expr;
    match e {
        Expr::Call(name, args) => quire_core::query::is_function(name) && args.iter().all(calls_only_known),
        Expr::Dot(inner, _) | Expr::Not(inner) | Expr::Neg(inner) => calls_only_known(inner),
        Expr::Index(a, b) | Expr::Bin(_, a, b) => calls_only_known(a) && calls_only_known(b),
        Expr::List(items) => items.iter().all(calls_only_known),
        Expr::Object(fields) => fields.iter().all(|(_, v)| calls_only_known(v)),
        Expr::Lit(_) | Expr::Field(_) | Expr::Lambda(_) => true,
    }
}

fn any(parts: impl Iterator<Item = String>) -> String {
    let parts: Vec<String> = parts.collect();
    if parts.len() == 1 {
        parts.into_iter().next().unwrap_or_default()
    } else {
        format!("({})", parts.join(" OR "))
    }
}

/// Where the parenthesis opened at `open` closes (outside strings).
fn matching(chars: &[char], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    for (i, &c) in chars.iter().enumerate().skip(open) {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '(') => depth += 1,
            (None, ')') => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// Arguments split at the commas outside strings and parentheses.
fn split_args(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut quote, mut start) = (0i32, None::<char>, 0);
    for (i, c) in text.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '(' | '[') => depth += 1,
            (None, ')' | ']') => depth -= 1,
            (None, ',') if depth == 0 => {
                out.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if !text[start..].trim().is_empty() {
        out.push(&text[start..]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const BOOKS: &str = r#"filters:
  and:
    - file.hasTag("book")
    - 'note.status != "abandoned"'
formulas:
  per_page: "price / pages"
properties:
  note.author:
    displayName: Author
views:
  - type: table
    name: Best first
    filters:
      or:
        - "rating >= 4"
        - file.inFolder("Favourites")
    order:
      - file.name
      - note.author
      - rating
      - formula.per_page
    sort:
      - property: rating
        direction: DESC
    limit: 20
  - type: cards
    name: By status
    groupBy:
      property: note.status
      direction: ASC
  - type: list
    name: Unread
    filters:
      and:
        - note.read.isEmpty()
        - '!file.hasLink("Reviews")'
  - type: map
    name: Where
  - type: table
    name: Odd
    filters:
      and:
        - "file.backlinks.filter(value.x)"
"#;

    #[test]
    fn a_bases_views_become_dataview_blocks_and_the_file_is_kept() {
        let c = convert(BOOKS).unwrap();
        let blocks: Vec<&str> = c
            .body
            .split("```dataview ")
            .skip(1)
            .map(|b| b.split("\n```").next().unwrap())
            .collect();
        assert_eq!(
            blocks,
            [
                "table\nTABLE author AS \"Author\", rating, (price / pages) AS \"per_page\"\nWHERE ((contains(file.tags, \"#\" + \"book\")) AND (status != \"abandoned\")) AND ((rating >= 4) OR ((file.folder = \"Favourites\" OR startswith(file.folder, \"Favourites\" + \"/\"))))\nSORT rating DESC\nLIMIT 20",
                "board\nTABLE\nWHERE ((contains(file.tags, \"#\" + \"book\")) AND (status != \"abandoned\"))\nGROUP BY status\nSORT key",
                "list\nLIST\nWHERE ((contains(file.tags, \"#\" + \"book\")) AND (status != \"abandoned\")) AND (((length(default(read, \"\")) = 0)) AND (!contains(file.outlinks, link(\"Reviews\"))))",
                "table\nTABLE\nWHERE ((contains(file.tags, \"#\" + \"book\")) AND (status != \"abandoned\"))",
            ]
        );
        for block in &blocks {
            let query = block.split_once('\n').unwrap().1;
            parse_query(query).unwrap_or_else(|e| panic!("{query}: {e}"));
        }
        assert!(c.body.ends_with(&format!("```base\n{}\n```\n", BOOKS.trim_end())));
        assert_eq!(c.notices.len(), 2, "{:?}", c.notices);
        assert!(c.notices[0].contains("map view"));
        assert!(
            c.notices[1].contains("file.backlinks.filter(value.x)"),
            "{:?}",
            c.notices
        );
    }

    #[test]
    fn found_in_use_property_names_with_spaces_text_durations_and_unknown_methods() {
        let base = "views:\n  - type: table\n    name: T\n    filters:\n      and:\n        - 'note[\"Publish Year\"] > 1980'\n        - 'file.mtime > now() - \"1 week\"'\n        - 'tags.frobnicate()'\n";
        let c = convert(base).unwrap();
        assert!(
            c.body
                .contains("WHERE ((publish-year > 1980) AND (file.mtime > date(now) - dur(1 week)))"),
            "{}",
            c.body
        );
        assert_eq!(c.notices.len(), 1, "{:?}", c.notices);
        assert!(c.notices[0].contains("tags.frobnicate()"), "{:?}", c.notices);
    }

    #[test]
    fn what_is_not_a_base_is_refused() {
        assert!(convert("views: [").unwrap_err().0.contains("does not read"));
        assert!(convert("filters: {}\n").unwrap_err().0.contains("no views"));
    }
}
