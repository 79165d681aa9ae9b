//! One note's document: its body as loro text, its single values in a last-writer-wins map, its tags and labels in
//! maps of their own so that each merges by name.

use std::collections::{BTreeMap, BTreeSet};

use loro::{Frontiers, ID, LoroDoc, LoroMap, LoroValue, VersionRange, VersionVector};

use super::envelope::{Kind, Replica};
use super::{
    Clash, DocError, Imported, Label, LostSealed, NoteState, Settled, clashes, internal, map_bool, map_string,
    map_value, set, update_text,
};

/// The longest note id a document takes, in bytes (ids are short and random; this bounds the envelope).
const MAX_ID_BYTES: usize = 1024;

// Root containers and the keys of `meta`.
const BODY: &str = "body";
const META: &str = "meta";
const TAGS: &str = "tags";
const LABELS: &str = "labels";
/// Conflicts settled by keeping both versions (see [`NoteDoc::settle`]): a key per conflict, the lines each side
/// added (joined, the two sides apart by [`SIDES`]; `true` from an older quire).
const SETTLED: &str = "settled";
/// Between the two sides of a settled conflict's entry.
const SIDES: char = '\u{1e}';
/// Conflicts settled by choosing one version (or the merge by words): an entry per conflict and device
/// (`KEY/PEER`), the lines kept (see [`NoteDoc::choose`]).
const CHOSEN: &str = "chosen";
const ID: &str = "id";
const TITLE: &str = "title";
const NOTEBOOK: &str = "notebook";
const TODO: &str = "todo";
const COMPLETED: &str = "completed";
const TRASHED: &str = "trashed";
const PROTECTED: &str = "protected";
const CREATED: &str = "created";
const UPDATED: &str = "updated";
const PURGED: &str = "purged";
/// `true` once the body's text holds the body and one more line end (every document since issue 46; an older
/// one's text is the body itself, and gains the line end at its next fold).
const LINES: &str = "lines";
/// The version of the note's previous document its sealed text was made from (an encoded version vector), when the
/// device that sealed it knew (see [`NoteDoc::sealed_from`]).
const FROM: &str = "from";
/// The version of the note's previous document the sealing device had, whatever text it sealed (see
/// [`NoteDoc::sealed_seen`]).
const SEEN: &str = "seen";
/// `[version, ciphertext or null]`: one value, so a ciphertext never pairs with another write's version.
const SEALED: &str = "sealed";
/// The note's [`Lineage`], encoded: which version of each earlier document the sealings that started the next ones
/// had seen.
const BEFORE: &str = "before";

/// The loro document of one note.
///
/// Layout: text `body` (the body and one more line end, so that every line ends with one: see [the module](super));
/// map `meta` (`id`, `title`, `notebook`, `todo`, `completed`, `trashed`, `protected`, `created`, `updated`,
/// `purged`, `sealed` = `[version, ciphertext or null]`, `lines`), each entry last writer wins; map `tags` (a key per tag, `true`
/// while it is on: adding and removing different tags concurrently both apply); map `labels` (name ->
/// `[value, is JSON]`); map `settled` (a key per conflict kept whole, `true`). How each merges: [the module](super).
///
/// A sealed note's body is "" and its ciphertext one value: ciphertext cannot be merged as text. If one device
/// seals a note while another edits its plain body, the merged document holds both: the ciphertext, and the
/// other device's insertions in `body` (the deletions of the sealing removed only the text it saw). The state
/// shows exactly that; what to do with plain text beside a ciphertext is the caller's choice.
pub struct NoteDoc {
    replica: Replica,
}

impl NoteDoc {
    /// An empty document, written as `peer` (the device's loro peer id; `u64::MAX` is reserved).
    pub fn new(peer: u64) -> Result<Self, DocError> {
        Ok(Self {
            replica: Replica::new(Kind::Note, peer)?,
        })
    }

    /// A document from bytes [`save`](Self::save) gave, written as `peer` from now on.
    pub fn load(bytes: &[u8], peer: u64) -> Result<Self, DocError> {
        Ok(Self {
            replica: Replica::load(Kind::Note, bytes, peer)?,
        })
    }

    /// The whole document: its history and its state.
    pub fn save(&self) -> Result<Vec<u8>, DocError> {
        self.replica.save(&self.id().unwrap_or_default())
    }

    /// Records `state` as operations, changing only what differs from the document: the body as a text diff,
    /// each other field only if its value differs. A document with no state yet takes the note's id; one with an
    /// id takes only that note.
    pub fn fold(&mut self, state: &NoteState) -> Result<(), DocError> {
        if state.id.is_empty() {
            return Err(DocError::MissingId("note"));
        }
        if state.id.len() > MAX_ID_BYTES {
            return Err(DocError::IdTooLong(state.id.len(), MAX_ID_BYTES));
        }
        let doc = &self.replica.doc;
        let meta = doc.get_map(META);
        match map_string(&meta, ID) {
            Some(id) if id != state.id => {
                return Err(DocError::NoteMismatch {
                    doc: id,
                    given: state.id.clone(),
                });
            }
            Some(_) => {}
            None => set(&meta, ID, state.id.as_str().into())?,
        }
        set(&meta, TITLE, state.title.as_str().into())?;
        set(&meta, NOTEBOOK, state.notebook_id.as_str().into())?;
        set(&meta, TODO, state.is_todo.into())?;
        set(&meta, COMPLETED, optional(state.todo_completed))?;
        set(&meta, TRASHED, optional(state.trashed))?;
        set(&meta, PROTECTED, state.protected.into())?;
        set(&meta, CREATED, state.created.into())?;
        set(&meta, UPDATED, state.updated.into())?;
        set(&meta, PURGED, state.purged.into())?;
        let sealed = match &state.sealed {
            Some(bytes) => LoroValue::from(bytes.clone()),
            None => LoroValue::Null,
        };
        set(&meta, SEALED, vec![LoroValue::from(state.version), sealed].into())?;

        let text = doc.get_text(BODY);
        let len = text.len_unicode();
        if !map_bool(&meta, LINES) {
            set(&meta, LINES, true.into())?;
            if len > 0 {
                text.insert(len, "\n").map_err(internal)?;
            }
        } else if len > 0 && !text.to_string().ends_with('\n') {
            // Only a device of an older quire writes this: the last line gets its line end back.
            text.insert(len, "\n").map_err(internal)?;
        }
        update_text(&text, &format!("{}\n", state.body))?;

        let tags = doc.get_map(TAGS);
        for tag in &state.tags {
            set(&tags, tag, true.into())?;
        }
        for key in tags.keys().map(|k| k.to_string()).collect::<Vec<_>>() {
            if !state.tags.contains(&key) {
                tags.delete(&key).map_err(internal)?;
            }
        }

        let labels = doc.get_map(LABELS);
        for (name, label) in &state.labels {
            set(
                &labels,
                name,
                vec![LoroValue::from(label.value.as_str()), label.json.into()].into(),
            )?;
        }
        for key in labels.keys().map(|k| k.to_string()).collect::<Vec<_>>() {
            if !state.labels.contains_key(&key) {
                labels.delete(&key).map_err(internal)?;
            }
        }
        doc.commit();
        Ok(())
    }

    /// The merged note, a pure function of the document's operations: the same on every replica that has them.
    /// `None` while the document holds no note (new, or only foreign keys). A value of the wrong type reads as the
    /// field's default.
    pub fn state(&self) -> Option<NoteState> {
        let doc = &self.replica.doc;
        let meta = doc.get_map(META);
        let id = map_string(&meta, ID).filter(|id| !id.is_empty())?;
        let (version, sealed) = sealed_value(&meta);
        let tags = true_keys(&doc.get_map(TAGS));
        let labels: BTreeMap<String, Label> = doc
            .get_map(LABELS)
            .get_value()
            .into_map()
            .map(|map| {
                map.iter()
                    .filter_map(|(name, v)| match v {
                        LoroValue::List(pair) => match pair.as_slice() {
                            [LoroValue::String(value), LoroValue::Bool(json)] => Some((
                                name.clone(),
                                Label {
                                    value: value.to_string(),
                                    json: *json,
                                },
                            )),
                            _ => None,
                        },
                        _ => None,
                    })
                    .collect()
            })
            .unwrap_or_default();
        Some(NoteState {
            id,
            title: map_string(&meta, TITLE).unwrap_or_default(),
            body: body(doc),
            notebook_id: map_string(&meta, NOTEBOOK).unwrap_or_default(),
            is_todo: map_bool(&meta, TODO),
            todo_completed: integer(&meta, COMPLETED),
            trashed: integer(&meta, TRASHED),
            protected: map_bool(&meta, PROTECTED),
            tags,
            labels,
            sealed,
            version,
            created: integer(&meta, CREATED).unwrap_or_default(),
            updated: integer(&meta, UPDATED).unwrap_or_default(),
            purged: map_bool(&meta, PURGED),
        })
    }

    /// The version of the note's previous document (before it was sealed and started again) whose text the sealed
    /// body holds, as the sealing device recorded it; `None` when it did not know (it had changed the text since).
    pub fn sealed_from(&self) -> Option<Vec<u8>> {
        match map_value(&self.replica.doc.get_map(META), FROM)? {
            LoroValue::Binary(bytes) => Some(bytes.to_vec()),
            _ => None,
        }
    }

    /// Records [`sealed_from`](Self::sealed_from) (once, in a document just started for a sealed note).
    pub fn set_sealed_from(&mut self, version: &[u8]) -> Result<(), DocError> {
        set(&self.replica.doc.get_map(META), FROM, version.to_vec().into())?;
        self.replica.doc.commit();
        Ok(())
    }

    /// The version of the note's previous document the sealing device had when it sealed the note (an encoded
    /// version vector), whether or not its sealed text was that document's: a plain edit beyond it is one the
    /// sealing device never saw. `None` from a device of an older quire.
    pub fn sealed_seen(&self) -> Option<Vec<u8>> {
        match map_value(&self.replica.doc.get_map(META), SEEN)? {
            LoroValue::Binary(bytes) => Some(bytes.to_vec()),
            _ => None,
        }
    }

    /// Records [`sealed_seen`](Self::sealed_seen) (once, in a document just started for a sealed note).
    pub fn set_sealed_seen(&mut self, version: &[u8]) -> Result<(), DocError> {
        set(&self.replica.doc.get_map(META), SEEN, version.to_vec().into())?;
        self.replica.doc.commit();
        Ok(())
    }

    /// What the sealings that started this document and the ones before it had seen of their previous documents.
    pub fn lineage(&self) -> Lineage {
        match map_value(&self.replica.doc.get_map(META), BEFORE) {
            Some(LoroValue::Binary(bytes)) => Lineage::decode(&bytes),
            _ => Lineage::default(),
        }
    }

    /// Records the [`lineage`](Self::lineage) (once, in a document just started for a sealed note).
    pub fn set_lineage(&mut self, lineage: &Lineage) -> Result<(), DocError> {
        set(&self.replica.doc.get_map(META), BEFORE, lineage.encode().into())?;
        self.replica.doc.commit();
        Ok(())
    }

    /// The edits this document holds beyond `version` (an encoded version vector), as the body they made from
    /// the body both had: `(base, body)`, where base is the body at the operations this document and `version`
    /// share. `None` when it holds none beyond it that changed the body, or `version` is damaged.
    pub fn body_beyond(&self, version: &[u8]) -> Option<(String, String)> {
        let doc = &self.replica.doc;
        let theirs = VersionVector::decode(version).ok()?;
        let ours = doc.oplog_vv();
        if theirs.includes_vv(&ours) {
            return None;
        }
        let shared = doc.vv_to_frontiers(&ours.intersection(&theirs));
        let base = body(&doc.fork_at(&shared).ok()?);
        let now = body(doc);
        (base != now).then_some((base, now))
    }

    /// Records that the person kept both versions of a conflict: the text does not change, so this is how the other
    /// devices learn that the place is settled. Under its [`Clash::key`], the lines each side added, by which a device
    /// that recorded it with other texts tells it too ([`Settled::holds`]).
    pub fn settle(&mut self, clash: &Clash) -> Result<(), DocError> {
        let [ours, theirs] = super::clash::added_sides(&clash.base, &clash.ours, &clash.theirs);
        let sides = format!(
            "{}{SIDES}{}",
            ours.into_iter().collect::<String>(),
            theirs.into_iter().collect::<String>()
        );
        let key = Clash::key(&clash.base, &clash.ours, &clash.theirs);
        set(&self.replica.doc.get_map(SETTLED), &key, sides.into())?;
        self.replica.doc.commit();
        Ok(())
    }

    /// Records that the person chose `kept` of a conflict (its [`Clash::key`]), as this device's entry (`KEY/PEER`).
    /// A new choice here also removes the other devices' entries seen so far: they were made before it, so they
    /// are not choices made at the same time. Two entries of one conflict with different lines kept are choices
    /// made at once ([`NoteDoc::restorer`]).
    pub fn choose(&mut self, key: &str, kept: &str) -> Result<(), DocError> {
        let doc = &self.replica.doc;
        let chosen = doc.get_map(CHOSEN);
        let mine = format!("{key}/{}", doc.peer_id());
        if map_string(&chosen, &mine).as_deref() == Some(kept) {
            return Ok(());
        }
        let prefix = format!("{key}/");
        for other in chosen.keys().map(|k| k.to_string()).filter(|k| k.starts_with(&prefix)) {
            if other != mine {
                chosen.delete(&other).map_err(internal)?;
            }
        }
        set(&chosen, &mine, kept.into())?;
        doc.commit();
        Ok(())
    }

    /// When devices chose different versions of conflict `key` at the same time (their entries differ), the one
    /// that puts both versions back: the lowest peer among them, the same on every replica that has the entries.
    pub fn restorer(&self, key: &str) -> Option<u64> {
        let prefix = format!("{key}/");
        let chosen = self.replica.doc.get_map(CHOSEN);
        let entries: Vec<(u64, String)> = chosen
            .keys()
            .map(|k| k.to_string())
            .filter_map(|k| {
                let peer = k.strip_prefix(&prefix)?.parse().ok()?;
                Some((peer, map_string(&chosen, &k)?))
            })
            .collect();
        let first = entries.first()?;
        entries
            .iter()
            .any(|(_, kept)| *kept != first.1)
            .then(|| entries.iter().map(|(peer, _)| *peer).min())
            .flatten()
    }

    /// Whether this replica wrote operations `version` (an encoded version vector) lacks: edits made here, not only
    /// received here. A damaged `version` counts as lacking them.
    pub fn wrote_beyond(&self, version: &[u8]) -> bool {
        let doc = &self.replica.doc;
        let peer = doc.peer_id();
        let ours = doc.oplog_vv().get(&peer).copied().unwrap_or(0);
        VersionVector::decode(version).map_or(true, |v| ours > v.get(&peer).copied().unwrap_or(0))
    }

    /// This replica's peer id.
    pub fn peer(&self) -> u64 {
        self.replica.doc.peer_id()
    }

    /// The conflicts settled by keeping both versions, on any device (see [`NoteDoc::settle`]). An entry of an
    /// older quire is `true`: its key only.
    pub fn settled(&self) -> Settled {
        let entries = self.replica.doc.get_map(SETTLED).get_value().into_map().map(|map| {
            map.iter()
                .filter_map(|(key, value)| match value {
                    LoroValue::Bool(true) => Some((key.clone(), None)),
                    LoroValue::String(sides) => {
                        let (ours, theirs) = sides.split_once(SIDES)?;
                        let lines = |text: &str| text.split_inclusive('\n').map(str::to_owned).collect();
                        Some((key.clone(), Some([lines(ours), lines(theirs)])))
                    }
                    _ => None,
                })
                .collect()
        });
        Settled(entries.unwrap_or_default())
    }

    /// Whether this document holds every operation of `version` and more (an encoded version vector; a damaged one
    /// counts as not held).
    pub fn extends(&self, version: &[u8]) -> bool {
        VersionVector::decode(version).is_ok_and(|v| {
            let ours = self.replica.doc.oplog_vv();
            ours.includes_vv(&v) && ours != v
        })
    }

    /// Whether this document has operations a replica at `version` lacks (nothing new to send when it has not).
    pub fn changed_since(&self, version: &[u8]) -> bool {
        self.replica.has_ops_beyond(version)
    }

    /// The operations this document has (an encoded version vector), for another replica's
    /// [`updates_since`](Self::updates_since).
    pub fn version(&self) -> Vec<u8> {
        self.replica.version()
    }

    /// The operations a replica at `version` lacks (an empty `version`: all of them).
    pub fn updates_since(&self, version: &[u8]) -> Result<Vec<u8>, DocError> {
        self.replica.updates_since(&self.id().unwrap_or_default(), version)
    }

    /// Imports another replica's [`updates_since`](Self::updates_since) or [`save`](Self::save), in any order and
    /// any number of times. Bytes that are not this note's document are refused and change nothing. Only
    /// authenticated bytes: see [the module](super#bytes-to-import).
    pub fn import(&mut self, bytes: &[u8]) -> Result<Imported, DocError> {
        let doc = &self.replica.doc;
        let (before, ours) = (doc.oplog_vv(), body(doc));
        let meta = doc.get_map(META);
        // A sealed body this replica wrote (a sealed note's edit made here).
        let sealed_here = match sealed_value(&meta) {
            (version, Some(piece)) if meta.get_last_editor(SEALED) == Some(doc.peer_id()) => Some((version, piece)),
            _ => None,
        };
        let status = self.replica.import(&self.id().unwrap_or_default(), bytes)?;
        let (concurrent, clashes) = self.clashes(&before, &ours, &status.success);
        let lost_sealed = match sealed_here {
            Some(mine) if concurrent && sealed_value(&self.replica.doc.get_map(META)).1.as_ref() != Some(&mine.1) => {
                let base = self.sealed_shared(&before, &status.success);
                // The other device had this body already (the import was concurrent for another field): it was
                // not lost, only written over by a newer one (found in review).
                (base.as_ref().map(|b| &b.1) != Some(&mine.1)).then_some(LostSealed { base, ours: mine })
            }
            _ => None,
        };
        Ok(Imported {
            pending: status.pending.is_some(),
            clashes,
            concurrent,
            lost_sealed,
        })
    }

    /// The sealed body at the operations this replica had (`before`) and the writer of the `imported` ones had too.
    fn sealed_shared(&self, before: &VersionVector, imported: &VersionRange) -> Option<(i64, Vec<u8>)> {
        let doc = &self.replica.doc;
        let theirs = doc.frontiers_to_vv(&heads(imported))?;
        let fork = doc.fork_at(&doc.vv_to_frontiers(&before.intersection(&theirs))).ok()?;
        match sealed_value(&fork.get_map(META)) {
            (version, Some(piece)) => Some((version, piece)),
            _ => None,
        }
    }

    /// The places where the operations just imported (`imported`) changed the same lines of the body as operations
    /// this replica had before (`before`, when its body read `ours`) and the writer of the imported ones lacked.
    /// Nothing when the import only added to what was here (no operation here was unknown to its writer), or when
    /// the note is sealed (its body is one value then, not text).
    fn clashes(&self, before: &VersionVector, ours: &str, imported: &VersionRange) -> (bool, Vec<Clash>) {
        let doc = &self.replica.doc;
        let theirs_at = heads(imported);
        // Nothing here before (a note new here: every join), or nothing imported: nothing to compare.
        if theirs_at.is_empty() || before.is_empty() {
            return (false, Vec::new());
        }
        // What the writer of the imported operations had: they and everything they were made on.
        let Some(theirs_vv) = doc.frontiers_to_vv(&theirs_at) else {
            return (false, Vec::new());
        };
        if theirs_vv.includes_vv(before) {
            return (false, Vec::new());
        }
        if self.state().is_none_or(|s| s.sealed.is_some()) {
            return (true, Vec::new());
        }
        let base_at = doc.vv_to_frontiers(&before.intersection(&theirs_vv));
        // Compared with a line end at the end, as the text holds them: every place is whole lines.
        let at = |frontiers: &Frontiers| doc.fork_at(frontiers).map(|fork| format!("{}\n", body(&fork)));
        match (at(&base_at), at(&theirs_at)) {
            (Ok(base), Ok(theirs)) => (true, clashes(&base, &format!("{ours}\n"), &theirs)),
            // A version the document just reported is in its history; no fork of it cannot happen.
            _ => (true, Vec::new()),
        }
    }

    fn id(&self) -> Option<String> {
        map_string(&self.replica.doc.get_map(META), ID)
    }
}

/// The last operation of each peer in `imported`: the version their writer had.
fn heads(imported: &VersionRange) -> Frontiers {
    let heads: Vec<ID> = imported
        .iter()
        .filter(|(_, (start, end))| end > start)
        .map(|(peer, (_, end))| ID::new(*peer, end - 1))
        .collect();
    Frontiers::from(heads)
}

/// `meta`'s sealed body: the note's version, and its ciphertext when sealed.
fn sealed_value(meta: &LoroMap) -> (i64, Option<Vec<u8>>) {
    match map_value(meta, SEALED) {
        Some(LoroValue::List(pair)) => match pair.as_slice() {
            [LoroValue::I64(version), LoroValue::Binary(bytes)] => (*version, Some(bytes.to_vec())),
            [LoroValue::I64(version), _] => (*version, None),
            _ => (0, None),
        },
        _ => (0, None),
    }
}

/// The body a document's text holds: all of it but the line end added at its end (see `LINES`).
fn body(doc: &LoroDoc) -> String {
    let text = doc.get_text(BODY).to_string();
    if map_bool(&doc.get_map(META), LINES) {
        text.strip_suffix('\n').map(str::to_owned).unwrap_or(text)
    } else {
        text
    }
}

/// The keys of a map of flags (tags, settled conflicts) whose value is `true`.
fn true_keys(map: &LoroMap) -> BTreeSet<String> {
    map.get_value()
        .into_map()
        .map(|map| {
            map.iter()
                .filter(|(_, v)| matches!(v, LoroValue::Bool(true)))
                .map(|(k, _)| k.clone())
                .collect()
        })
        .unwrap_or_default()
}

fn integer(map: &LoroMap, key: &str) -> Option<i64> {
    match map_value(map, key)? {
        LoroValue::I64(n) => Some(n),
        _ => None,
    }
}

fn optional(value: Option<i64>) -> LoroValue {
    value.map_or(LoroValue::Null, LoroValue::from)
}

/// Which version of each earlier document of a note (by generation) the device that started the next one had seen:
/// what [`NoteDoc::sealed_seen`] says of the document just before, kept for every generation since. A device that
/// skips generations (it catches up from a snapshot that holds only the newest document) reads in it which of its
/// edits no sealing saw. Version vectors only, no text; the last [`Lineage::KEPT`] generations.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Lineage(std::collections::BTreeMap<u64, Vec<u8>>);

impl Lineage {
    /// Generations remembered: a device further behind than that keeps what its revisions hold.
    pub const KEPT: usize = 32;

    /// Reads [`Lineage::encode`]'s bytes; damaged ones give what could be read before the damage.
    pub fn decode(mut bytes: &[u8]) -> Self {
        let mut seen = std::collections::BTreeMap::new();
        while let Some((generation, rest)) = bytes.split_first_chunk::<8>()
            && let Some((len, rest)) = rest.split_first_chunk::<4>()
            && let Some((version, rest)) = rest.split_at_checked(u32::from_be_bytes(*len) as usize)
        {
            seen.insert(u64::from_be_bytes(*generation), version.to_vec());
            bytes = rest;
        }
        Self(seen)
    }

    /// Each generation as 8 bytes, the version's length as 4 and the version, in order.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for (generation, version) in &self.0 {
            out.extend_from_slice(&generation.to_be_bytes());
            out.extend_from_slice(&u32::try_from(version.len()).unwrap_or(u32::MAX).to_be_bytes());
            out.extend_from_slice(version);
        }
        out
    }

    /// This lineage and `version` of `generation`'s document, the oldest beyond [`Lineage::KEPT`] left out.
    #[must_use]
    pub fn with(mut self, generation: u64, version: Vec<u8>) -> Self {
        self.0.insert(generation, version);
        while self.0.len() > Self::KEPT {
            self.0.pop_first();
        }
        self
    }

    /// The version of `generation`'s document the sealing that started the next one had seen.
    pub fn seen(&self, generation: u64) -> Option<&[u8]> {
        self.0.get(&generation).map(Vec::as_slice)
    }
}
