//! A source as read, whatever its format: its notes (each with the links of its body), notebooks and files.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use quire_core::links::{self, LinkKind};

use crate::frontmatter::FrontMatter;
use crate::{Error, ItemReport, Outcome};

/// One note of the source, read and checked (a `.md` file; a Joplin item; an Evernote note).
pub(crate) struct Parsed {
    /// Where it comes from, unique in the source and the same on every import of it (relative path with `/`, or a
    /// Joplin item's file, or an Evernote note's title and time): the key of its import record.
    pub(crate) rel: String,
    /// How the report names it (the relative path; for an Evernote note its title and time).
    pub(crate) shown: String,
    /// Its notebook: a relative folder with `/` (empty at the top), a key of [`Source::notebooks`] when that names
    /// the notebook's title.
    pub(crate) folder: String,
    pub(crate) title: String,
    pub(crate) body: String,
    pub(crate) meta: FrontMatter,
    /// A hash of everything the source says about it, to see later whether it changed there.
    pub(crate) hash: String,
    /// The links of its body, found once (see [`Parsed::links`]).
    pub(crate) links: std::sync::OnceLock<Vec<Link>>,
    /// What the import report says of it besides its outcome (what was repaired in it, a link left as written).
    pub(crate) notices: Vec<String>,
}

impl Parsed {
    /// The relative links and wikilinks of its body, outside code (an import looks at them four times per note).
    pub(crate) fn links(&self) -> &[Link] {
        self.links.get_or_init(|| links_of(&self.body))
    }
}

/// A source, read: the notes, notebooks and files to import, whatever the format.
pub(crate) struct Source {
    /// The source as recorded with each imported note (its canonical path).
    pub(crate) key: String,
    /// Where the files are read from (the source folder, or the folder an archive was unpacked into).
    pub(crate) root: PathBuf,
    pub(crate) notes: Vec<Parsed>,
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
            notes: Vec::new(),
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
    let meta = std::fs::symlink_metadata(path)?;
    if !meta.file_type().is_file() {
        return Err(std::io::Error::other("not a plain file (a symbolic link?): not read"));
    }
    std::fs::read(path)
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

/// A link of a note's body (or of a label's value) that may name a note or file of the source.
pub(crate) enum Link {
    /// `[text](path)` or `![alt](path)`: where the URL is in the text.
    Path { target: String, start: usize, end: usize },
    /// `[[target]]` or `![[target]]`: the target without its `#heading` and `|alias`, the alias, and where the
    /// whole link is in the text.
    Wiki {
        target: String,
        embed: bool,
        label: Option<String>,
        start: usize,
        end: usize,
    },
}

/// The Markdown links and images with relative targets (no scheme, or Joplin's `:/ID`) and the wikilinks and
/// embeds of a body, outside code, as core's link extractor finds them.
pub(crate) fn links_of(body: &str) -> Vec<Link> {
    let (found, addresses) = links::extract_with_addresses(body);
    let mut out: Vec<Link> = found
        .into_iter()
        .filter(|link| matches!(link.kind, LinkKind::Wikilink | LinkKind::Embed))
        .map(|link| Link::Wiki {
            embed: link.kind == LinkKind::Embed,
            target: link.target,
            label: link.label,
            start: link.byte,
            end: link.byte + link.len,
        })
        .collect();
    for address in addresses {
        let url = address.url.as_str();
        let relative = !url.is_empty() && !url.contains(':') && !url.starts_with('#') && !url.starts_with("//")
            || url.starts_with(":/");
        if relative {
            out.push(Link::Path {
                target: address.url,
                start: address.byte,
                end: address.byte + address.len,
            });
        }
    }
    out
}
