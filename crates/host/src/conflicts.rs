//! Sync's conflicts as the person reads and chooses them with the unlocked key: quire-sync never holds the key, so
//! its [`Person`] seam is implemented here, where the key may be (the CLI's; the web has its own, below this crate).

use quire_core::seal::Unlocked;
use quire_core::{Reader, Workspace, Writer};
use quire_sync::conflicts::{ConflictError, Person};

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
