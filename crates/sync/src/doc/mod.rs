//! The merge model of sync: one loro document per note ([`NoteDoc`]) and one for the notebook tree ([`TreeDoc`]).
//! Pure data: no storage, no network, no quire-core. A device folds its local state into its documents as
//! operations, exports what another device has not seen ([`NoteDoc::updates_since`]), imports what others sent,
//! and reads the merged state back ([`NoteDoc::state`]); every replica that holds the same operations reads the
//! same state, whatever order they arrived in.
//!
//! # How concurrent changes merge
//!
//! - **Last writer wins, by Lamport clock.** Every field that is one value (a title, the notebook of a note, the
//!   to-do state, trash, protection, one tag's presence, one label, the sealed ciphertext, a notebook's title,
//!   protection and tombstone) is a loro map entry. Of two writes, the one with the higher Lamport timestamp wins,
//!   and a tie goes to the higher peer id. The Lamport timestamp is causal, not a wall clock: a write made after
//!   seeing another always beats it, whatever the devices' clocks say, and no time of day is recorded at all.
//! - **Concurrent rename + rename:** one title wins whole (no mixing of the two strings): the later in Lamport
//!   order, so for two renames made from the same state the one from the higher peer id. The other is lost from
//!   the state (the note's history on the device that made it still has it).
//! - **Bodies merge by whole lines.** A local change of a body is recorded as the lines a diff by lines finds
//!   changed, deleted whole, and their new versions inserted whole at the same place (`update_text`). Every line of
//!   the text a document holds ends with a line end (the body is stored with one more at its end, see
//!   [`NoteDoc`]), so a line is never glued to another. Lines changed on one device and other lines on another both
//!   survive; lines added at the same place on two devices are both kept, one after the other as loro orders them
//!   (its text type does not interleave two runs typed concurrently). **Two devices that change the same lines**
//!   both delete the old lines and insert their own versions at one place: the merged body holds both versions
//!   whole, one after the other, never a mix of their words, and never loses a line neither changed. The import
//!   that brings the second version reports the place as a [`Clash`] (base, ours, theirs), for the person to
//!   choose; [`merge_words`] is the merge by words offered then when the two changed different words.
//! - **Text positions are Unicode scalar values** (`char`s), never bytes or UTF-16 units.
//! - **Tags and labels merge per name:** adding tag `a` on one device while another removes tag `b` gives both;
//!   adding and removing the same tag concurrently is last writer wins.
//! - **The notebook tree never makes a cycle.** Two concurrent moves that together would put a notebook inside
//!   itself are resolved by loro, which skips the move that would close the cycle (the same one on every replica).
//!   Notebooks are never deleted from the tree: `gone` is a tombstone, so a notebook moved into one that was
//!   concurrently removed is not lost with it.
//!
//! # Bytes to import
//!
//! Give `import` and `load` only bytes that passed the sealed file's check (or came from this device's own
//! store). loro refuses garbage, cut-off and damaged bytes with an error (its checksum covers everything but 12
//! unused header bytes), but bytes crafted to pass its checksum reach its decoder, which can panic on them (a
//! debug assertion, or an `unreachable!` in its diff of rich text, with or without debug assertions) and then
//! abort the process from a destructor, so `catch_unwind` cannot contain it. Its decoder also prints
//! `Column Deserialize Error` to standard error on the way to some errors.
//!
//! # Peer ids
//!
//! The caller gives each document the peer id of the device writing it. Two writers must never share a peer id
//! at the same time, and a device must not go back to an older saved copy of a document after exporting from a
//! newer one (it would reuse operation ids): load, fold and save a document in one transaction of the store.

mod clash;
mod envelope;
mod note;
mod offline;
mod tree;

pub use clash::{Clash, Settled, clashes, merge_words, merged_lines};
pub use note::{Lineage, NoteDoc};
pub use offline::merge_body;
pub use tree::TreeDoc;

use std::collections::{BTreeMap, BTreeSet};

use loro::{LoroMap, LoroValue, ValueOrContainer};

/// A note as sync sees it: what the documents hold, independent of how the store keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NoteState {
    /// The note's id (also the document's: one document per note).
    pub id: String,
    /// The title, one last-writer-wins value.
    pub title: String,
    /// The Markdown body, merged as text. A sealed note's body is "" (its text is in `sealed`).
    pub body: String,
    /// The notebook the note is in.
    pub notebook_id: String,
    /// Whether it is a to-do.
    pub is_todo: bool,
    /// When the to-do was completed (milliseconds), if it was.
    pub todo_completed: Option<i64>,
    /// When it was put in the trash (milliseconds), if it is there.
    pub trashed: Option<i64>,
    /// Whether the note is protected.
    pub protected: bool,
    /// Tag names; each one's presence merges on its own.
    pub tags: BTreeSet<String>,
    /// Labels by name; each one merges on its own.
    pub labels: BTreeMap<String, Label>,
    /// The sealed body's ciphertext, if the note is sealed: one last-writer-wins value together with `version`
    /// (ciphertext cannot be merged as text, and it opens only with the version it was sealed at).
    pub sealed: Option<Vec<u8>>,
    /// The version the sealed body is bound to; travels with `sealed` as one value.
    pub version: i64,
    /// When the note was created (milliseconds).
    pub created: i64,
    /// When it last changed (milliseconds; last writer wins like the other values).
    pub updated: i64,
    /// Deleted for good on some device. The document stays (a tombstone): a note deleted on one device and edited
    /// on another at the same time is deleted or kept by last writer wins, like any other value.
    pub purged: bool,
}

/// The value of a label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Label {
    /// The text, or the JSON text when `json` is set.
    pub value: String,
    /// Whether `value` is JSON.
    pub json: bool,
}

/// A notebook as sync sees it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NotebookState {
    /// The notebook's id.
    pub id: String,
    /// The notebook it is in; `None` at the top level.
    pub parent_id: Option<String>,
    /// The title, one last-writer-wins value.
    pub title: String,
    /// Whether the notebook is protected.
    pub protected: bool,
    /// Removed: a tombstone, never taken out of the tree (see [`TreeDoc`]).
    pub gone: bool,
}

/// What [`NoteDoc::import`] and [`TreeDoc::import`] did.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Imported {
    /// Some operations wait for others that have not arrived yet; loro keeps them in memory (not in
    /// [`NoteDoc::save`]) and applies them when the missing ones come.
    pub pending: bool,
    /// The places in a note's body where the operations imported changed the same lines as operations this
    /// replica had and they lacked: both versions are in the body now. Always empty for the tree.
    pub clashes: Vec<Clash>,
    /// Whether this replica had operations the writer of the imported ones lacked (two changes made at the same
    /// time, not one after seeing the other). Always false for the tree.
    pub concurrent: bool,
    /// A sealed note's body written here that an edit made at the same time elsewhere replaced (a sealed body is
    /// one value: the last writer's wins). Always `None` for the tree.
    pub lost_sealed: Option<LostSealed>,
}

/// A sealed body written on this replica that lost to another made at the same time: each `(note version,
/// ciphertext)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LostSealed {
    /// The one written here.
    pub ours: (i64, Vec<u8>),
    /// The one both were made from, when the note was sealed then.
    pub base: Option<(i64, Vec<u8>)>,
}

/// Why a document refused something. Nothing in the document changed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DocError {
    /// loro reserves the largest peer id.
    #[error("peer id {0} cannot be used: it is reserved")]
    ReservedPeer(u64),
    /// The bytes do not start as a quire sync document does.
    #[error("these bytes are not a quire sync document")]
    NotADocument,
    /// A note's bytes given to the tree, or the other way round.
    #[error("these bytes are {found}, not {expected}")]
    WrongKind {
        /// What the document is.
        expected: &'static str,
        /// What the bytes are.
        found: &'static str,
    },
    /// Bytes of another note.
    #[error("these bytes belong to note {found}, not to note {expected}")]
    OtherNote {
        /// The document's note.
        expected: String,
        /// The note the bytes came from.
        found: String,
    },
    /// loro could not read the operations (cut off, damaged, or written by a newer loro).
    #[error("the document's data is damaged or cut off: {0}")]
    Damaged(String),
    /// The version given to `updates_since` is not one `version` gave.
    #[error("that version is damaged or is not a document version")]
    BadVersion,
    /// A state with another note's id was folded in.
    #[error("note {given} cannot be folded into the document of note {doc}")]
    NoteMismatch {
        /// The document's note.
        doc: String,
        /// The note folded in.
        given: String,
    },
    /// A note or notebook without an id.
    #[error("a {0} without an id cannot be synced")]
    MissingId(&'static str),
    /// An id longer than a document takes.
    #[error("an id of {0} bytes is longer than the {1} a sync document takes")]
    IdTooLong(usize, usize),
    /// The same notebook twice in one fold.
    #[error("notebook {0} is listed twice")]
    DuplicateNotebook(String),
    /// A notebook inside one that does not exist.
    #[error("notebook {child} is inside notebook {parent}, which does not exist")]
    MissingParent {
        /// The notebook.
        child: String,
        /// Its parent, missing.
        parent: String,
    },
    /// The notebooks would be inside themselves.
    #[error("notebook {0} would end up inside itself")]
    Cycle(String),
    /// loro refused an operation or an export it should not have; a bug, reported instead of a panic.
    #[error("the sync document refused a change: {0}")]
    Internal(String),
}

/// Makes `text` say `new` by whole lines: the lines a diff by lines (Myers, no time limit, so the operations depend
/// on the two texts alone) finds changed are deleted whole and their new versions inserted whole at the same place
/// (see the module's notes on merges). Positions are counted in `char`s, as loro's text counts them.
pub(crate) fn update_text(text: &loro::LoroText, new: &str) -> Result<(), DocError> {
    use similar::{Algorithm, DiffTag, capture_diff_slices};
    let old = text.to_string();
    if old == new {
        return Ok(());
    }
    let (old_lines, new_lines): (Vec<&str>, Vec<&str>) =
        (old.split_inclusive('\n').collect(), new.split_inclusive('\n').collect());
    let chars = |lines: &[&str]| lines.iter().map(|l| l.chars().count()).sum::<usize>();
    let mut at = 0;
    for op in capture_diff_slices(Algorithm::Myers, &old_lines, &new_lines) {
        let (tag, old_range, new_range) = op.as_tag_tuple();
        let (gone, added) = (&old_lines[old_range], &new_lines[new_range]);
        if tag == DiffTag::Equal {
            at += chars(gone);
            continue;
        }
        if !gone.is_empty() {
            text.delete(at, chars(gone)).map_err(internal)?;
        }
        if !added.is_empty() {
            text.insert(at, &added.concat()).map_err(internal)?;
            at += chars(added);
        }
    }
    Ok(())
}

fn map_value(map: &LoroMap, key: &str) -> Option<LoroValue> {
    match map.get(key)? {
        ValueOrContainer::Value(value) => Some(value),
        ValueOrContainer::Container(_) => None,
    }
}

fn map_string(map: &LoroMap, key: &str) -> Option<String> {
    match map_value(map, key)? {
        LoroValue::String(s) => Some(s.to_string()),
        _ => None,
    }
}

fn map_bool(map: &LoroMap, key: &str) -> bool {
    matches!(map_value(map, key), Some(LoroValue::Bool(true)))
}

/// Writes `key` only if the map does not already hold exactly `new`.
fn set(map: &LoroMap, key: &str, new: LoroValue) -> Result<(), DocError> {
    if map_value(map, key).as_ref() != Some(&new) {
        map.insert(key, new).map_err(internal)?;
    }
    Ok(())
}

/// A loro error that is a bug on our side, not bad input.
fn internal(error: impl std::fmt::Display) -> DocError {
    DocError::Internal(error.to_string())
}
