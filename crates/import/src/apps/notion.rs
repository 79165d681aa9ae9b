//! A Notion export, "Markdown & CSV": pages as `.md` files named `Title <32 hex>`, a page's sub-pages in a folder
//! of the same name, a database as `Name <32 hex>.csv` (and `_all.csv`, every column) beside a folder of its rows'
//! pages. Read as a Markdown folder (see `folder.rs`), then made what Notion showed:
//!
//! - the ids leave the names: notebooks and titles are the pages' names (the title from the page's `# Title`);
//! - a database is a notebook of its rows, each row's properties typed labels (numbers, checkboxes, dates; text
//!   otherwise) and out of the row's text, and a note named after the database with a saved view of the table;
//! - links between pages (relative paths, and `notion.so` addresses with a page's id) point at the notes; images
//!   and files beside the pages are attachments.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use quire_core::structure::field_key;

use crate::folder;
use crate::frontmatter::FrontMatter;
use crate::source::{Parsed, Source};
use crate::{Error, ImportFormat};

/// Whether `text` ends with a Notion id: a space and 32 hex digits (a page's file or folder name, its stem).
fn id_of(name: &str) -> Option<&str> {
    let (_, id) = name.rsplit_once(' ')?;
    (id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit())).then_some(id)
}

/// A name without its Notion id.
fn clean(name: &str) -> &str {
    match id_of(name) {
        Some(id) => name[..name.len() - id.len() - 1].trim_end(),
        None => name,
    }
}

/// Whether `name` is the folder Notion puts an export in (`Export-<uuid>`).
fn is_export_folder(name: &str) -> bool {
    name.strip_prefix("Export-")
        .is_some_and(|rest| rest.len() == 36 && rest.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-'))
}

/// A page's file name without its extension (`.md`, or `.html` in the HTML export).
fn page_stem(name: &str) -> &str {
    name.strip_suffix(".md")
        .or_else(|| name.strip_suffix(".html"))
        .unwrap_or(name)
}

/// Whether `dir` is a Notion export: a page or database file named with an id, at the top or in `Export-<uuid>`.
pub(crate) fn is_notion(dir: &Path) -> bool {
    let named = |d: &Path| {
        std::fs::read_dir(d).is_ok_and(|entries| {
            entries.flatten().take(200).any(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                // A page's sub-pages' folder (`Title <id>`) says it too: a page left out of a damaged zip leaves
                // only its folder (found in use: the whole export was then read as plain Markdown).
                let folder = e.file_type().is_ok_and(|t| t.is_dir()).then_some(name.as_str());
                name.strip_suffix(".md")
                    .or_else(|| name.strip_suffix(".csv"))
                    .or_else(|| name.strip_suffix(".html"))
                    .or(folder)
                    .is_some_and(|stem| id_of(stem).is_some())
            })
        })
    };
    named(dir)
        || std::fs::read_dir(dir).is_ok_and(|entries| {
            entries
                .flatten()
                .any(|e| is_export_folder(&e.file_name().to_string_lossy()) && named(&e.path()))
        })
}

/// A database: its columns and rows (by the row's name), read from its CSV.
struct Database {
    /// The CSV the view note is made from (`Name <id>.csv`), relative.
    rel: String,
    columns: Vec<String>,
    rows: HashMap<String, Vec<String>>,
    /// Per column: every value a number, or every value Yes/No.
    kinds: Vec<Kind>,
    /// What the report says of the CSV (rows it could not read as rows).
    notices: Vec<String>,
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Number,
    Checkbox,
    /// A `Tags` column of short names (Notion's multi-select, comma-separated): the page's tags.
    Tags,
    Other,
}

pub(crate) fn read(source: &Path) -> Result<Source, Error> {
    // The pages are in the export's own folder: read from there, so it is no notebook.
    let inner = std::fs::read_dir(source).ok().and_then(|entries| {
        let found: Vec<_> = entries
            .flatten()
            .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
            .collect();
        match found.as_slice() {
            [only] if is_export_folder(&only.file_name().to_string_lossy()) && super::real_dir(&only.path()) => {
                Some(only.path())
            }
            _ => None,
        }
    });
    // The HTML export's pages are `.html` files (read by `notion_html.rs`), the other's `.md` files.
    let dir = inner.as_deref().unwrap_or(source);
    let (md, html) = super::html::count_below(dir);
    let flavour = if html > md {
        ImportFormat::Notion
    } else {
        ImportFormat::Markdown
    };
    let mut out = folder::read(dir, flavour)?;
    // Pages are known by their paths inside the export, which hold their ids: a newer download of the same
    // workspace (another `Export-<uuid>` name) updates what an older one brought.
    out.key = "notion".to_owned();
    // The databases, by the folder of their rows (the CSV's path without `.csv`).
    let mut databases: BTreeMap<String, Database> = BTreeMap::new();
    let csvs: Vec<String> = out
        .files
        .keys()
        .filter(|f| f.to_lowercase().ends_with(".csv"))
        .cloned()
        .collect();
    for rel in &csvs {
        let stem = &rel[..rel.len() - 4];
        let (base, all) = match stem.strip_suffix("_all") {
            Some(base) if id_of(base.rsplit('/').next().unwrap_or(base)).is_some() => (base, true),
            _ => (stem, false),
        };
        if id_of(base.rsplit('/').next().unwrap_or(base)).is_none() {
            continue;
        }
        // `_all.csv` has every column; the other one only the view's. The one with every column wins.
        if !all && databases.contains_key(base) {
            continue;
        }
        match read_csv(&out.root.join(rel)) {
            Ok((columns, rows, kinds, notices)) => {
                let shown = format!("{base}.csv");
                databases.insert(
                    base.to_owned(),
                    Database {
                        rel: shown,
                        columns,
                        rows,
                        kinds,
                        notices,
                    },
                );
            }
            Err(reason) => out.fail(rel.clone(), crate::Outcome::Failed, reason),
        }
    }
    // A database's CSVs are its note, not files to attach (nor to say were left out).
    for rel in &csvs {
        out.files.remove(rel);
    }
    out.failures
        .retain(|f| !(f.outcome == crate::Outcome::Skipped && csvs.contains(&f.path)));
    // Every page by its id, for `notion.so` links.
    for note in out.notes.iter() {
        let stem = note.rel.rsplit('/').next().unwrap_or(&note.rel);
        if let Some(id) = id_of(page_stem(stem)) {
            out.targets.insert(id.to_owned(), note.rel.clone());
            out.targets.insert(dashed(id), note.rel.clone());
        }
    }
    for i in 0..out.notes.len() {
        let targets = &out.targets;
        let edited = out.notes.edit(i, |note| {
            let body = std::mem::take(&mut note.body);
            let body = page(note, &body, databases.get(&note.folder));
            note.body = notion_links(&body, targets);
        });
        edited.map_err(|e| Error::Io {
            context: "cannot read back a page of the export".into(),
            source: e,
        })?;
    }
    for (folder, db) in databases {
        if let Some(id) = id_of(&folder) {
            out.targets.insert(id.to_owned(), db.rel.clone());
        }
        out.folders.push(folder.clone());
        out.notes.push(view(&folder, &db));
    }
    // Folders keep their names (links between pages are relative to them); the notebooks they become are named
    // without the ids.
    for folder in &out.folders {
        let name = folder.rsplit('/').next().unwrap_or(folder);
        if id_of(name).is_some() {
            let meta = out.notebooks.entry(folder.clone()).or_default();
            meta.title.get_or_insert_with(|| clean(name).to_owned());
        }
    }
    out.folders.sort();
    out.folders.dedup();
    Ok(out)
}

/// A Notion id as its addresses write it: 8-4-4-4-12.
fn dashed(id: &str) -> String {
    format!(
        "{}-{}-{}-{}-{}",
        &id[..8],
        &id[8..12],
        &id[12..16],
        &id[16..20],
        &id[20..]
    )
}

type Table = (Vec<String>, HashMap<String, Vec<String>>, Vec<Kind>, Vec<String>);

fn read_csv(path: &Path) -> Result<Table, super::Unread> {
    let bytes = crate::source::read_plain_file(path).map_err(|e| super::Unread(format!("cannot read it: {e}")))?;
    let text = String::from_utf8_lossy(&bytes);
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let mut reader = csv::ReaderBuilder::new().flexible(true).from_reader(text.as_bytes());
    let columns: Vec<String> = reader
        .headers()
        .map_err(|e| super::Unread(format!("not a CSV table: {e}")))?
        .iter()
        .map(|h| h.trim().to_owned())
        .collect();
    let mut rows = HashMap::new();
    let mut kinds = vec![None::<Kind>; columns.len()];
    let mut notices = Vec::new();
    let mut shared = std::collections::HashSet::new();
    // Quotes come in pairs (`""` inside a quoted field too): an odd count is a quote that never closes, which takes
    // the rows after it into one field.
    if text.matches('"').count() % 2 == 1 {
        notices.push(
            "the database's CSV has a quote that never closes: the rows after it are read from their pages".to_owned(),
        );
    }
    for record in reader.records() {
        let record = record.map_err(|e| super::Unread(format!("not a CSV table: {e}")))?;
        let values: Vec<String> = record.iter().map(str::to_owned).collect();
        // A row of another length is a damaged one (an unbalanced quote swallows the rows after it): its pages keep
        // their own property lines, read from them instead.
        if values.len() != columns.len() {
            let line = record.position().map_or(0, |p| p.line());
            notices.push(format!(
                "the database's CSV is damaged at line {line} ({} fields where the header has {}): the rows from \
                 there are read from their pages",
                values.len(),
                columns.len()
            ));
            break;
        }
        for (k, value) in kinds.iter_mut().zip(&values) {
            let v = value.trim();
            if v.is_empty() {
                continue;
            }
            let this = if v == "Yes" || v == "No" {
                Kind::Checkbox
            } else if v.parse::<f64>().is_ok_and(f64::is_finite) {
                Kind::Number
            } else {
                Kind::Other
            };
            *k = Some(match *k {
                None => this,
                Some(was) if was == this => was,
                Some(_) => Kind::Other,
            });
        }
        if let Some(name) = values.first().map(|n| n.trim().to_owned()) {
            // Rows of one name (`Untitled`): none of them is known by it; each page reads its own lines.
            if rows.contains_key(&name) || shared.contains(&name) {
                rows.remove(&name);
                shared.insert(name);
            } else {
                rows.insert(name, values);
            }
        }
    }
    let mut kinds: Vec<Kind> = kinds.into_iter().map(|k| k.unwrap_or(Kind::Other)).collect();
    for (i, column) in columns.iter().enumerate() {
        let names = |v: &Vec<String>| {
            v.get(i)
                .is_none_or(|value| !value.contains('\n') && value.split(", ").all(|t| t.trim().chars().count() <= 50))
        };
        if column.eq_ignore_ascii_case("tags") && kinds[i] == Kind::Other && rows.values().all(names) {
            kinds[i] = Kind::Tags;
        }
    }
    Ok((columns, rows, kinds, notices))
}

/// A page: its title from its `# Title` line (out of the text), ids out of its name; a database row's properties
/// as labels, out of its text.
fn page(note: &mut Parsed, body: &str, db: Option<&Database>) -> String {
    let stem = note.rel.rsplit('/').next().unwrap_or(&note.rel);
    let stem = clean(page_stem(stem)).to_owned();
    let mut body = body.trim_start_matches('\u{feff}');
    if let Some(rest) = body.strip_prefix("# ") {
        let (line, after) = rest.split_once('\n').unwrap_or((rest, ""));
        if note.meta.title.is_none() {
            note.title = line.trim().to_owned();
        }
        body = after.trim_start_matches(['\n', '\r']);
    } else if note.meta.title.is_none() {
        note.title = stem.clone();
    }
    let mut body = body.to_owned();
    if let Some(db) = db {
        // The property lines, `Column: value` up to the first blank line, are the row's: out of its text.
        let first_is_property = body
            .lines()
            .next()
            .and_then(|l| l.split_once(": "))
            .is_some_and(|(k, _)| db.columns.iter().skip(1).any(|c| c == k.trim()));
        let block = if first_is_property {
            let (block, rest) = body.split_once("\n\n").unwrap_or((body.as_str(), ""));
            let block = block.to_owned();
            body = rest.to_owned();
            block
        } else {
            String::new()
        };
        match db.rows.get(note.title.trim()).or_else(|| db.rows.get(stem.trim())) {
            Some(values) => properties(&mut note.meta, &mut note.notices, db, values),
            // Not in the CSV (a damaged one): the page's own lines, each column's value up to the next column.
            None => {
                note.notices.push(
                    "its database's CSV has no row of its own for it (damaged there, or several rows of its name): \
                     its properties are read from its page's lines"
                        .to_owned(),
                );
                let mut values = vec![String::new(); db.columns.len()];
                let mut at = None;
                for line in block.lines() {
                    match line
                        .split_once(": ")
                        .and_then(|(k, v)| Some((db.columns.iter().position(|c| c == k.trim())?, v)))
                    {
                        Some((i, v)) if i > 0 => {
                            values[i] = v.to_owned();
                            at = Some(i);
                        }
                        _ => {
                            if let Some(i) = at {
                                values[i] = format!("{}\n{line}", values[i]);
                            }
                        }
                    }
                }
                properties(&mut note.meta, &mut note.notices, db, &values);
            }
        }
    }
    note.aliases_from_notion(&stem);
    body
}

impl Parsed {
    /// A title that is not the file's name (ids aside) keeps that name as an alias.
    fn aliases_from_notion(&mut self, stem: &str) {
        self.meta.aliases.retain(|a| id_of(a).is_none());
        if !stem.is_empty() && !stem.eq_ignore_ascii_case(self.title.trim()) && !stem.contains(',') {
            self.meta.aliases.push(stem.to_owned());
        }
    }
}

fn properties(meta: &mut FrontMatter, notices: &mut Vec<String>, db: &Database, values: &[String]) {
    for ((column, value), kind) in db.columns.iter().zip(values).zip(&db.kinds).skip(1) {
        let value = value.trim();
        if value.is_empty() {
            continue;
        }
        let Some(name) = label_name(column) else {
            notices.push(format!("property '{column}' not kept: its name cannot be a label's"));
            continue;
        };
        // Notion's own times of a row are the note's times.
        let time = date(value).and_then(|d| crate::frontmatter::time_of(&d));
        match column.to_lowercase().as_str() {
            "created" | "created time" if time.is_some() => meta.created = time,
            "last edited time" | "last edited" | "updated" if time.is_some() => meta.updated = time,
            _ => {}
        }
        match kind {
            Kind::Tags => meta
                .tags
                .extend(value.split(", ").map(|t| t.trim().to_owned()).filter(|t| !t.is_empty())),
            Kind::Number => meta.json_labels.push((name, value.to_owned())),
            Kind::Checkbox => meta.json_labels.push((name, (value == "Yes").to_string())),
            Kind::Other => meta.labels.push((name, date(value).unwrap_or_else(|| unlinked(value)))),
        }
    }
}

/// A column's name as a label's: letters, digits, `_`, `-`, `.`, `:` and single spaces.
fn label_name(column: &str) -> Option<String> {
    let kept: String = column
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | ':' | ' '))
        .collect();
    let name = kept.split_whitespace().collect::<Vec<_>>().join(" ");
    let name = name
        .trim_start_matches(|c: char| !c.is_alphabetic() && c != '_')
        .to_owned();
    (!name.is_empty()).then_some(name)
}

/// A relation's value names pages by their files (`Page%20<id>.md`, or `Page (../Db/Page <id>.md)`): their names.
fn unlinked(value: &str) -> String {
    if !value.contains(".md") {
        return value.to_owned();
    }
    value
        .split(", ")
        .map(|part| {
            let part = part.split(" (").next().unwrap_or(part);
            let decoded = part.replace("%20", " ");
            let name = decoded.rsplit('/').next().unwrap_or(&decoded);
            clean(name.strip_suffix(".md").unwrap_or(name)).to_owned()
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Notion's dates (`July 13, 2020`, `July 13, 2020 10:01 PM`) as ISO dates and times, which queries compare.
pub(crate) fn date(value: &str) -> Option<String> {
    let (month, rest) = value.split_once(' ')?;
    let m = quire_core::template::moment::MONTHS.iter().position(|n| *n == month)? + 1;
    let (day, rest) = rest.split_once(", ")?;
    let day: u32 = day.parse().ok()?;
    let year: u32 = rest.get(..4)?.parse().ok()?;
    let time = rest[4..].trim();
    if !(1..=31).contains(&day) {
        return None;
    }
    if time.is_empty() {
        return Some(format!("{year:04}-{m:02}-{day:02}"));
    }
    let (clock, half) = time.split_once(' ')?;
    let (h, min) = clock.split_once(':')?;
    let (h, min): (u32, u32) = (h.parse().ok()?, min.parse().ok()?);
    let h = match half {
        "AM" if h == 12 => 0,
        "AM" => h,
        "PM" if h == 12 => 12,
        "PM" => h + 12,
        _ => return None,
    };
    (h < 24 && min < 60).then(|| format!("{year:04}-{m:02}-{day:02}T{h:02}:{min:02}"))
}

/// `notion.so` addresses of pages of the export as links to them (`:/id`, which the import points at the notes).
fn notion_links(body: &str, targets: &HashMap<String, String>) -> String {
    let mut out = String::with_capacity(body.len());
    let mut rest = body;
    while let Some(at) = rest.find("](https://www.notion.so/") {
        let start = at + 2;
        out.push_str(&rest[..start]);
        let address = &rest[start..];
        let end = address.find([')', ' ']).unwrap_or(address.len());
        let url = &address[..end];
        let last = url
            .split(['?', '#'])
            .next()
            .unwrap_or(url)
            .rsplit('/')
            .next()
            .unwrap_or("");
        let id = last.get(last.len().saturating_sub(32)..).unwrap_or("");
        if id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit()) && targets.contains_key(id) {
            out.push_str(&format!(":/{id}"));
        } else {
            out.push_str(url);
        }
        rest = &address[end..];
    }
    out.push_str(rest);
    out
}

/// A database as a note in the notebook of its rows: a saved view of the table, its columns the properties.
fn view(folder: &str, db: &Database) -> Parsed {
    let columns: Vec<String> = db
        .columns
        .iter()
        .skip(1)
        .filter_map(|c| {
            let key = field_key(&label_name(c)?);
            key.chars()
                .all(|ch| ch.is_alphanumeric() || ch == '-' || ch == '_')
                .then(|| {
                    let tags = db
                        .columns
                        .iter()
                        .position(|x| x == c)
                        .is_some_and(|i| db.kinds[i] == Kind::Tags);
                    let field = if tags { "file.tags".to_owned() } else { key };
                    format!("{field} AS \"{}\"", c.replace('"', "'"))
                })
        })
        .collect();
    let table = if columns.is_empty() {
        "TABLE".to_owned()
    } else {
        format!("TABLE {}", columns.join(", "))
    };
    let body = format!(
        "The rows of this database, as Notion showed them:\n\n```dataview\n{table}\nWHERE file.folder = this.file.folder AND \
         file.path != this.file.path\nSORT file.name\n```\n"
    );
    let name = clean(folder.rsplit('/').next().unwrap_or(folder)).to_owned();
    let note = super::AppNote {
        rel: db.rel.clone(),
        shown: None,
        folder: folder.to_owned(),
        title: if name.is_empty() { "Database".into() } else { name },
        body,
        meta: FrontMatter::default(),
        notices: db.notices.clone(),
    };
    let said = format!("{}\n{}", db.columns.join(","), db.rows.len());
    note.parsed(said.as_bytes())
}
