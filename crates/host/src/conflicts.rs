//! Sync's conflicts as the person reads and chooses them with the unlocked key: quire-sync never holds the key, so
//! its [`Person`] seam is implemented here, where the key may be (the CLI's; the web has its own, below this crate).

use quire_core::seal::Unlocked;
use quire_core::{Actor, Reader, Workspace, Writer};
use quire_sync::conflicts::{self, Conflict, ConflictError, Keep, Person};

/// The person with the unlocked key: a sealed note's conflicts open, and texts kept beside sealed notes merge.
pub struct WithKey<'a> {
    /// The workspace.
    pub ws: &'a Workspace,
    /// Its unlocked key.
    pub key: &'a Unlocked,
}

impl Person for WithKey<'_> {
    fn read<T>(&self, f: &mut dyn FnMut(&Reader<'_>) -> quire_core::Result<T>) -> quire_core::Result<T> {
        self.ws.read_unlocked(self.key, |r| f(r))
    }

    fn write<T>(&self, f: &mut dyn FnMut(&mut Writer<'_>) -> Result<T, ConflictError>) -> Result<T, ConflictError> {
        self.ws.write_unlocked(self.key, |w| f(w))
    }
}

/// The open conflicts (of one note when given), through the key when there is one: [`conflicts::open_as`] with
/// [`WithKey`], else as the user (a sealed note's listed by title only).
pub fn open(ws: &Workspace, key: Option<&Unlocked>, note_id: Option<&str>) -> Result<Vec<Conflict>, ConflictError> {
    match key {
        Some(key) => conflicts::open_as(ws, &WithKey { ws, key }, note_id),
        None => conflicts::open(ws, &Actor::User, note_id),
    }
}

/// [`conflicts::resolve`] through the key when there is one (a sealed note's conflict needs it).
pub fn resolve(
    ws: &Workspace,
    key: Option<&Unlocked>,
    id: i64,
    keep: Keep,
) -> Result<(Conflict, Option<String>), ConflictError> {
    match key {
        Some(key) => conflicts::resolve_as(ws, &WithKey { ws, key }, id, keep),
        None => conflicts::resolve(ws, &Actor::User, id, keep),
    }
}
