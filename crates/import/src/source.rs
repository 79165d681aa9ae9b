//! A source as read, whatever its format: its notes (each with the links of its body), notebooks and files.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use crate::frontmatter::FrontMatter;
pub(crate) use crate::notes::{Link, Notes, Parsed, links_of};
use crate::{Error, ItemReport, Outcome};

/// A source, read: the notes, notebooks and files to import, whatever the format.
pub(crate) struct Source {
    /// The source as recorded with each imported note (its canonical path).
    pub(crate) key: String,
    /// Where the files are read from (the source folder, or the folder an archive was unpacked into).
    pub(crate) root: PathBuf,
    pub(crate) notes: Notes,
    /// Every folder (relative, `/`), empty ones included: each becomes a notebook.
    pub(crate) folders: Vec<String>,
    /// `_notebook.md` files (or a format's notebooks): folder → what they say.
    pub(crate) notebooks: BTreeMap<String, FrontMatter>,
    /// Every other file: relative path → size.
    pub(crate) files: BTreeMap<String, u64>,
    /// File names (lower case) → relative paths, for Obsidian's by-name resolution.
    pub(crate) by_name: HashMap<String, Vec<String>>,
    /// Links by id (`[text](:/ID)`, as Joplin writes them and Evernote's media are turned into): ID → the relative
    /// path of the note or file it names.
    pub(crate) targets: HashMap<String, String>,
    /// Media types the source states for its files (an Evernote resource's `<mime>`): relative path → type. A file
    /// not named here is typed by its extension.
    pub(crate) mimes: HashMap<String, String>,
    pub(crate) failures: Vec<ItemReport>,
    pub(crate) attachment_folder: Option<String>,
    /// Labels the format writes from flags of its own (Keep's pin, Bear's archive): a note the source no longer
    /// flags loses the label on a re-import (found in use: unpinned at the source, still `pinned` in quire).
    pub(crate) flag_labels: &'static [&'static str],
    /// The folder an archive was unpacked into, removed when the import is done.
    pub(crate) _unpacked: Option<tempfile::TempDir>,
    /// Every note's `rel`, to resolve a link in constant time (filled by [`Source::index_notes`]).
    pub(crate) note_rels: HashSet<String>,
    /// Notes' file names (lower case) → their `rel`s, for a Markdown link by shortest path (filled by
    /// [`Source::index_notes`]).
    pub(crate) note_names: HashMap<String, Vec<String>>,
    /// What a wikilink may name a note by (its title, aliases and file name, lower case) → the notes (indexes into
    /// `notes`), to tell which wikilinks name nothing (filled by [`Source::index_notes`]).
    pub(crate) note_keys: HashMap<String, Vec<usize>>,
}

impl Source {
    /// An empty source whose files are read from `root`, recorded as `key`.
    pub(crate) fn new(key: String, root: PathBuf) -> Source {
        Source {
            key,
            root,
            notes: Notes::default(),
            folders: Vec::new(),
            notebooks: BTreeMap::new(),
            files: BTreeMap::new(),
            by_name: HashMap::new(),
            targets: HashMap::new(),
            mimes: HashMap::new(),
            failures: Vec::new(),
            attachment_folder: None,
            flag_labels: &[],
            _unpacked: None,
            note_rels: HashSet::new(),
            note_names: HashMap::new(),
            note_keys: HashMap::new(),
        }
    }

    /// Indexes the notes read, to resolve links to them: by `rel`, by file name, by what a wikilink names them by.
    pub(crate) fn index_notes(&mut self) {
        self.note_rels = self.notes.iter().map(|n| n.rel.clone()).collect();
        for (i, note) in self.notes.iter().enumerate() {
            let name = note.rel.rsplit('/').next().unwrap_or(&note.rel).to_lowercase();
            let stem = name.strip_suffix(".md").unwrap_or(&name).trim().to_owned();
            self.note_names.entry(name.clone()).or_default().push(note.rel.clone());
            let keys = std::iter::once(note.title.trim().to_lowercase())
                .chain(note.meta.aliases.iter().map(|a| a.trim().to_lowercase()))
                .chain(std::iter::once(stem));
            let mut seen = HashSet::new();
            for key in keys.filter(|k| !k.is_empty()) {
                if seen.insert(key.clone()) {
                    self.note_keys.entry(key).or_default().push(i);
                }
            }
        }
    }

    /// An empty source recorded as `key` whose files are read from a new temporary folder (an archive unpacked,
    /// resources decoded), removed with the source.
    pub(crate) fn unpacked(key: String, prefix: &str) -> Result<Source, Error> {
        let dir = tempfile::Builder::new()
            .prefix(prefix)
            .tempdir()
            .map_err(|e| Error::Io {
                context: "cannot make a temporary folder for the source's files".into(),
                source: e,
            })?;
        let mut out = Source::new(key, dir.path().to_path_buf());
        out._unpacked = Some(dir);
        Ok(out)
    }

    /// Reports `path` as not imported, for `reason`.
    pub(crate) fn fail(&mut self, path: impl Into<String>, outcome: Outcome, reason: impl Into<String>) {
        self.failures.push(ItemReport {
            path: path.into(),
            outcome,
            note_id: None,
            notes: vec![reason.into()],
        });
    }
}

/// Reads a file of the source, refusing one that has become a symbolic link since the walk.
pub(crate) fn read_plain_file(path: &Path) -> std::io::Result<Vec<u8>> {
    let mut file = open_plain_file(path)?;
    let mut bytes = Vec::with_capacity(file.metadata().map_or(0, |m| m.len() as usize));
    std::io::Read::read_to_end(&mut file, &mut bytes)?;
    Ok(bytes)
}

/// Opens a file of the source to read, refusing one that has become a symbolic link since the walk.
pub(crate) fn open_plain_file(path: &Path) -> std::io::Result<std::fs::File> {
    let meta = std::fs::symlink_metadata(path)?;
    if !meta.file_type().is_file() {
        return Err(std::io::Error::other("not a plain file (a symbolic link?): not read"));
    }
    std::fs::File::open(path)
}

/// Why a file of an export is not read, as the import's report says it.
#[derive(Debug)]
pub(crate) struct Unread(pub(crate) String);

impl From<Unread> for String {
    fn from(unread: Unread) -> String {
        unread.0
    }
}

/// Reads a note's file, refusing one larger than a note may hold before reading it (a 2 GiB file costs nothing).
pub(crate) fn read_note_bytes(path: &Path) -> Result<Vec<u8>, Unread> {
    let size = std::fs::symlink_metadata(path)
        .map_err(|e| Unread(format!("cannot read it: {e}")))?
        .len();
    if size > quire_core::MAX_BODY_BYTES as u64 {
        return Err(Unread(format!(
            "{size} bytes: more than a note may hold ({} bytes)",
            quire_core::MAX_BODY_BYTES
        )));
    }
    read_plain_file(path).map_err(|e| Unread(format!("cannot read it: {e}")))
}
