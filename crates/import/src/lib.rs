//! quire-import: notes in and out of a workspace as files.
//!
//! [`import`] reads a Markdown folder or an Obsidian vault (Joplin and Evernote exports come next) and writes it
//! into a workspace as one change set of the [`Actor::Import`] actor, so core's guards apply and `quire undo` takes
//! the whole import back: folders become notebooks, `.md` files notes (YAML front matter for the title, tags,
//! aliases, times, to-do state and protection; other keys become labels, text for strings and JSON for booleans,
//! numbers, lists and maps), the files they link to (from the body or a property) attachments, and relative links
//! between files `quire://` links. Each file is written in a savepoint, so a broken
//! file is reported with its reason and takes nothing else with it. The source of every note is recorded, so
//! importing again updates what changed at the source and adds what is new, and a note changed in quire since is
//! reported as a conflict and left alone (unless forced). [`export`] writes notebooks back as Markdown files with
//! front matter, attachments beside them, and links as relative paths or wikilinks.
//!
//! It depends on `quire-core` only, and reads nothing outside the source and writes nothing outside the export
//! folder: symbolic links are not followed, and a link that leads out of the source is left as written.

mod apps;
mod base;
mod enex;
mod export;
mod folder;
mod frontmatter;
mod joplin;
mod names;
mod note_file;
mod notes;
mod relink;
mod source;
mod unzip;
mod write;
mod write_note;

use std::path::{Path, PathBuf};

use quire_core::Actor;
use serde::Serialize;

pub use export::{ExportFormat, ExportOptions, ExportPlan, ExportReport, export, plan_export, write_export};

/// Which kind of source an import reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ImportFormat {
    /// Detected from the source: a folder with `.obsidian/` is a vault, another folder Markdown.
    #[default]
    Auto,
    /// A folder of Markdown files.
    Markdown,
    /// An Obsidian vault: Markdown plus wikilink resolution, inline `#tags` and the attachment folder.
    Obsidian,
    /// A Joplin export (JEX archive or RAW folder).
    Joplin,
    /// An Evernote export (ENEX).
    Enex,
    /// A Google Keep export (Google Takeout's `Keep` folder).
    Keep,
    /// Simplenote's export (`notes.json`).
    Simplenote,
    /// A Standard Notes backup (decrypted).
    StandardNotes,
    /// A folder of HTML files.
    Html,
    /// A Notion export ("Markdown & CSV").
    Notion,
    /// A Logseq graph (Markdown).
    Logseq,
    /// A Roam Research JSON export.
    Roam,
    /// Bear's backup (`.bear2bk`) or TextBundles.
    Bear,
}

impl ImportFormat {
    /// Every format, `auto` first, in the order `quire import --format` lists them.
    pub const ALL: [ImportFormat; 13] = [
        ImportFormat::Auto,
        ImportFormat::Markdown,
        ImportFormat::Obsidian,
        ImportFormat::Joplin,
        ImportFormat::Enex,
        ImportFormat::Keep,
        ImportFormat::Simplenote,
        ImportFormat::StandardNotes,
        ImportFormat::Html,
        ImportFormat::Notion,
        ImportFormat::Logseq,
        ImportFormat::Roam,
        ImportFormat::Bear,
    ];

    /// Its name, as `--format` takes it.
    pub fn name(self) -> &'static str {
        match self {
            ImportFormat::Auto => "auto",
            ImportFormat::Markdown => "markdown",
            ImportFormat::Obsidian => "obsidian",
            ImportFormat::Joplin => "joplin",
            ImportFormat::Enex => "enex",
            ImportFormat::Keep => "keep",
            ImportFormat::Simplenote => "simplenote",
            ImportFormat::StandardNotes => "standard-notes",
            ImportFormat::Html => "html",
            ImportFormat::Notion => "notion",
            ImportFormat::Logseq => "logseq",
            ImportFormat::Roam => "roam",
            ImportFormat::Bear => "bear",
        }
    }

    /// The format of a name `--format` takes.
    pub fn from_name(name: &str) -> Option<ImportFormat> {
        ImportFormat::ALL
            .into_iter()
            .find(|f| f.name().eq_ignore_ascii_case(name.trim()))
    }

    /// What it reads and what is kept, in a line.
    pub fn keeps(self) -> &'static str {
        match self {
            ImportFormat::Auto => "tell the format from the source (the default)",
            ImportFormat::Markdown => {
                "a folder of .md files: folders as notebooks, front matter as title, tags, times and labels, linked files"
            }
            ImportFormat::Obsidian => {
                "a vault: Markdown plus [[wikilinks]], #tags, the attachment folder, .base files as views"
            }
            ImportFormat::Joplin => {
                "a .jex file or RAW folder: notebooks, tags, to-dos, resources, links between notes"
            }
            ImportFormat::Enex => "Evernote .enex files: a notebook each, tags, checklists as tasks, media, note links",
            ImportFormat::Keep => {
                "Google Takeout's Keep folder: text, checklists as tasks, labels as tags, attachments, pins, colours, trash"
            }
            ImportFormat::Simplenote => "notes.json: first line as title, tags, pins, links between notes, trash",
            ImportFormat::StandardNotes => {
                "a decrypted backup: notes, nested tags, pinned and archived, trash, links between notes"
            }
            ImportFormat::Html => "a folder of .html files: Markdown, titles, links between the files, images",
            ImportFormat::Notion => {
                "Markdown & CSV (or HTML) export: pages and sub-pages as notes and notebooks, databases as typed labels and a view"
            }
            ImportFormat::Logseq => {
                "a graph: pages, journals as daily notes, properties as labels, tasks, block references, namespaces"
            }
            ImportFormat::Roam => "JSON export: pages as outlines, daily pages as daily notes, tasks, block references",
            ImportFormat::Bear => {
                "a .bear2bk backup or TextBundles: text, #tags and #multi word tags#, assets, pins, trash"
            }
        }
    }
}

/// A `--format` that names no format quire imports.
#[derive(Debug, thiserror::Error)]
#[error("not a format quire imports; the formats: {names} (`--format` alone says what each keeps)")]
pub struct UnknownFormat {
    names: String,
}

impl std::str::FromStr for ImportFormat {
    type Err = UnknownFormat;

    fn from_str(name: &str) -> Result<ImportFormat, UnknownFormat> {
        ImportFormat::from_name(name).ok_or_else(|| UnknownFormat {
            names: ImportFormat::ALL.map(ImportFormat::name).join(", "),
        })
    }
}

/// How to import.
#[derive(Debug, Clone, Default)]
pub struct ImportOptions {
    /// The source's format.
    pub format: ImportFormat,
    /// The notebook (id) to import into; the top level when `None`.
    pub into: Option<String>,
    /// Read and check everything, report what would happen, write nothing.
    pub dry_run: bool,
    /// Overwrite notes changed in quire since their last import (a revision keeps their text).
    pub force: bool,
    /// Where daily notes are (the person's `[daily]` settings): journals of Logseq and Roam become them. Core's
    /// defaults when `None`.
    pub daily: Option<quire_core::PeriodicSettings>,
}

/// What happened to one source file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// A new note.
    Imported,
    /// A note imported before, updated from its changed source.
    Updated,
    /// Imported before and unchanged at the source.
    Unchanged,
    /// Changed at the source and in quire since the last import: left alone.
    Conflict,
    /// Not imported: see the reason.
    Failed,
    /// Left out on purpose (a symbolic link, a file no note links to).
    Skipped,
}

/// One source file's outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ItemReport {
    /// The file, relative to the source.
    pub path: String,
    /// What happened.
    pub outcome: Outcome,
    /// The note made from it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note_id: Option<String>,
    /// Why it failed or was skipped, or what was left out of it (a refused attribute, a link out of the source).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// What an import did (or, with `dry_run`, would do).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ImportReport {
    /// The source, as given.
    pub source: String,
    /// The format read.
    pub format: String,
    /// Whether nothing was written.
    pub dry_run: bool,
    /// New notes.
    pub imported: u64,
    /// Notes updated from their source.
    pub updated: u64,
    /// Notes unchanged.
    pub unchanged: u64,
    /// Notes left alone because they changed on both sides.
    pub conflicts: u64,
    /// Files that could not be imported.
    pub failed: u64,
    /// Attachments added.
    pub attachments: u64,
    /// The change set that holds the import (for `quire undo`), when something was written.
    pub change_set_id: Option<String>,
    /// Every file, in order.
    pub items: Vec<ItemReport>,
}

/// Why an import or export could not run at all (a broken file is not one of these: it is reported and skipped).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The source cannot be read.
    #[error("cannot read {path}: {reason}")]
    Source {
        /// The source.
        path: String,
        /// Why.
        reason: String,
    },
    /// The format is not (yet) supported, or could not be detected.
    #[error("{0}")]
    Format(String),
    /// The workspace refused (the target notebook is protected, say) or failed.
    #[error(transparent)]
    Core(#[from] quire_core::Error),
    /// Writing the export failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    /// The error with `from` (a temporary folder) named as `to` (the file the person gave).
    fn renamed(self, from: &Path, to: &Path) -> Error {
        let (from, to) = (from.display().to_string(), to.display().to_string());
        match self {
            Error::Source { path, reason } => Error::Source {
                path: if path.starts_with(&from) { to.clone() } else { path },
                reason: reason.replace(&from, &to),
            },
            Error::Format(message) => Error::Format(message.replace(&from, &to)),
            other => other,
        }
    }
}

/// Progress of an import: files read so far, and in all.
pub type Progress<'a> = &'a (dyn Fn(u64, u64) + Sync);

/// Imports `source` into `ws` as one change set (see the crate's documentation).
pub fn import(
    ws: &quire_core::Workspace,
    source: &Path,
    options: &ImportOptions,
    progress: Progress<'_>,
) -> Result<ImportReport, Error> {
    // A zip (Notion's export, Google Takeout, Simplenote's) is unpacked and read as the folder it holds; its notes
    // are recorded as the zip's, so importing the same zip again updates them.
    if unzip::is_zip(source) {
        let unpacked = unzip::unpack(source)?;
        let top = unzip::content(unpacked.dir.path());
        // Errors name the file given, not the temporary folder.
        let named = |e: Error| e.renamed(unpacked.dir.path(), source);
        let bear = source
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("bear2bk") || e.eq_ignore_ascii_case("textpack"));
        let format = match options.format {
            ImportFormat::Auto if bear => ImportFormat::Bear,
            ImportFormat::Auto => detect(&top).map_err(named)?,
            other => other,
        };
        let mut read = read(&top, format, options).map_err(named)?;
        // Recorded as the zip's (not the temporary folder's), unless the format has a key of its own.
        let temporary = unpacked
            .dir
            .path()
            .canonicalize()
            .unwrap_or_else(|_| unpacked.dir.path().to_path_buf());
        if read.key.starts_with(&temporary.display().to_string())
            || read.key.starts_with(&unpacked.dir.path().display().to_string())
        {
            read.key = source
                .canonicalize()
                .map_or_else(|_| source.display().to_string(), |p| p.display().to_string());
        }
        for (entry, why) in unpacked.left_out {
            read.fail(entry, Outcome::Failed, why);
        }
        read._unpacked = Some(unpacked.dir);
        return write::write(ws, source, read, format, options, progress);
    }
    let format = match options.format {
        ImportFormat::Auto => detect(source)?,
        other => other,
    };
    let read = read(source, format, options)?;
    write::write(ws, source, read, format, options, progress)
}

/// Reads a source in its format.
fn read(source: &Path, format: ImportFormat, options: &ImportOptions) -> Result<source::Source, Error> {
    let daily = || {
        options
            .daily
            .clone()
            .unwrap_or_else(|| quire_core::PeriodicSettings::default_for(quire_core::Period::Day))
    };
    match format {
        ImportFormat::Markdown | ImportFormat::Obsidian | ImportFormat::Html => folder::read(source, format),
        ImportFormat::Joplin => joplin::read(source),
        ImportFormat::Enex => enex::read(source),
        ImportFormat::Notion => apps::notion::read(source),
        ImportFormat::Logseq => apps::logseq::read(source, &daily()),
        ImportFormat::Roam => apps::roam::read(source, &daily()),
        ImportFormat::Bear => apps::bear::read(source),
        ImportFormat::Keep => apps::keep::read(source),
        ImportFormat::Simplenote => apps::simplenote::read(source),
        ImportFormat::StandardNotes => apps::standard_notes::read(source),
        ImportFormat::Auto => Err(Error::Format(
            "could not tell the source's format; pass --format".into(),
        )),
    }
}

fn detect(source: &Path) -> Result<ImportFormat, Error> {
    let meta = std::fs::metadata(source).map_err(|e| Error::Source {
        path: source.display().to_string(),
        reason: e.to_string(),
    })?;
    if meta.is_dir() {
        if source.join(".obsidian").is_dir() {
            return Ok(ImportFormat::Obsidian);
        }
        if joplin::is_raw_export(source) {
            return Ok(ImportFormat::Joplin);
        }
        // TextBundles and no Markdown beside them (a vault may hold a bundle among its notes).
        let top_markdown = std::fs::read_dir(source).is_ok_and(|entries| {
            entries
                .flatten()
                .any(|e| e.path().extension().is_some_and(|x| x.eq_ignore_ascii_case("md")))
        });
        if !top_markdown && apps::bear::is_bear(source) {
            return Ok(ImportFormat::Bear);
        }
        if apps::logseq::is_logseq(source) {
            return Ok(ImportFormat::Logseq);
        }
        if apps::notion::is_notion(source) {
            return Ok(ImportFormat::Notion);
        }
        if apps::keep::is_keep(source) {
            return Ok(ImportFormat::Keep);
        }
        if apps::simplenote::is_simplenote(source) {
            return Ok(ImportFormat::Simplenote);
        }
        // Evernote exports a notebook a file: a folder of .enex files is an Evernote account, with a README.md or
        // two beside them (found in use: one README made it a Markdown folder whose .enex files were "skipped").
        let files: Vec<PathBuf> = std::fs::read_dir(source)
            .map(|entries| entries.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default();
        let is_markdown = |p: &&PathBuf| p.extension().is_some_and(|e| e.eq_ignore_ascii_case("md"));
        let markdown = files.iter().filter(is_markdown).count();
        let enexes = files.iter().filter(|p| enex::is_enex(p)).count();
        if enexes > markdown {
            return Ok(ImportFormat::Enex);
        }
        let markdown = markdown > 0;
        // A folder of HTML files, in sub-folders too (a saved site), and no Markdown (`--format html` for a mix).
        let (md, html) = apps::html::count_below(source);
        if md == 0 && html > 0 {
            return Ok(ImportFormat::Html);
        }
        if !markdown && apps::standard_notes::is_standard_notes(source) {
            return Ok(ImportFormat::StandardNotes);
        }
        if !markdown && apps::roam::is_roam(source) {
            return Ok(ImportFormat::Roam);
        }
        return Ok(ImportFormat::Markdown);
    }
    let name = source.to_string_lossy().to_lowercase();
    if name.ends_with(".jex") {
        return Ok(ImportFormat::Joplin);
    }
    if name.ends_with(".enex") {
        return Ok(ImportFormat::Enex);
    }
    if apps::simplenote::is_simplenote(source) {
        return Ok(ImportFormat::Simplenote);
    }
    if apps::standard_notes::is_standard_notes(source) {
        return Ok(ImportFormat::StandardNotes);
    }
    if apps::roam::is_roam(source) {
        return Ok(ImportFormat::Roam);
    }
    Err(Error::Format(format!(
        "{} is a file quire cannot import: see `quire import --format` for what it reads",
        source.display()
    )))
}

/// The actor of an import of `source`.
pub fn import_actor(source: &Path) -> Actor {
    Actor::Import {
        source: source.display().to_string(),
    }
}
