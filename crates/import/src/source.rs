//! A source as read, whatever its format: its notes (each with the links of its body), notebooks and files.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use crate::frontmatter::FrontMatter;
pub(crate) use crate::notes::{Head, Link, Notes, Parsed, links_of};
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
    /// The notes by their `rel`, by their file name (lower case, for a Markdown link by shortest path), and by
    /// what a wikilink may name them by (title, aliases and file name without `.md`, lower case): filled by
    /// [`Source::index_notes`], read through [`Source::is_note`], [`Source::notes_by_name`] and
    /// [`Source::notes_keyed`].
    note_rels: Index,
    note_names: Index,
    note_keys: Index,
}

/// Keys → notes (indexes into `notes`), holding no key: a key's hash, sorted, finds the notes that may have it,
/// and the caller keeps those that do (an import of 40,000 notes kept 20 MB of copied names in maps).
#[derive(Default)]
struct Index(Vec<(u64, u32)>);

impl Index {
    fn build(mut entries: Vec<(u64, u32)>) -> Index {
        entries.sort_unstable();
        entries.dedup();
        Index(entries)
    }

    fn hash(key: &str) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        key.hash(&mut hasher);
        hasher.finish()
    }

    /// The notes whose key may be `key`, in the order they were read.
    fn get(&self, key: &str) -> impl Iterator<Item = usize> + '_ {
        let hash = Index::hash(key);
        let start = self.0.partition_point(|(h, _)| *h < hash);
        self.0[start..]
            .iter()
            .take_while(move |(h, _)| *h == hash)
            .map(|(_, i)| *i as usize)
    }
}

/// A note's file name, lower case.
fn file_name(rel: &str) -> String {
    rel.rsplit('/').next().unwrap_or(rel).to_lowercase()
}

/// What a wikilink may name a note by: its title, aliases and file name without `.md`, lower case.
fn wiki_keys(head: &Head) -> Vec<String> {
    let name = file_name(&head.rel);
    let stem = name.strip_suffix(".md").unwrap_or(&name).trim().to_owned();
    let mut keys: Vec<String> = std::iter::once(head.title.trim().to_lowercase())
        .chain(head.aliases.iter().map(|a| a.trim().to_lowercase()))
        .chain(std::iter::once(stem))
        .filter(|k| !k.is_empty())
        .collect();
    keys.dedup();
    keys
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
            note_rels: Index::default(),
            note_names: Index::default(),
            note_keys: Index::default(),
        }
    }

    /// Indexes the notes read, to resolve links to them: by `rel`, by file name, by what a wikilink names them by.
    pub(crate) fn index_notes(&mut self) {
        let (mut rels, mut names, mut keys) = (Vec::new(), Vec::new(), Vec::new());
        for (i, note) in self.notes.iter().enumerate() {
            let i = u32::try_from(i).unwrap_or(u32::MAX);
            rels.push((Index::hash(&note.rel), i));
            names.push((Index::hash(&file_name(&note.rel)), i));
            keys.extend(wiki_keys(note).iter().map(|key| (Index::hash(key), i)));
        }
        self.note_rels = Index::build(rels);
        self.note_names = Index::build(names);
        self.note_keys = Index::build(keys);
    }

    /// Whether a note of the source is at `rel`.
    pub(crate) fn is_note(&self, rel: &str) -> bool {
        self.note_rels.get(rel).any(|i| self.notes[i].rel == rel)
    }

    /// The `rel`s of the notes whose file is called `name` (lower case).
    pub(crate) fn notes_by_name(&self, name: &str) -> Vec<String> {
        self.note_names
            .get(name)
            .filter(|i| file_name(&self.notes[*i].rel) == name)
            .map(|i| self.notes[i].rel.clone())
            .collect()
    }

    /// The notes (indexes into `notes`) a wikilink to `key` (lower case) may name, by title, alias or file name.
    pub(crate) fn notes_keyed(&self, key: &str) -> Vec<usize> {
        self.note_keys
            .get(key)
            .filter(|i| wiki_keys(&self.notes[*i]).iter().any(|k| k == key))
            .collect()
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
