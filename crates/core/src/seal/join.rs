//! What another device of the same person needs to open this workspace's sealed notes (issue 33, sync): the lock's
//! wrapped key, to carry to it (a sync target stores it), and on that device joining it, which asks the passphrase.
//! The material holds nothing a passphrase does not already protect in the workspace file itself.

use serde::{Deserialize, Serialize};
use zeroize::Zeroizing;

use super::lock::{LockRow, PASSPHRASE_AAD, derive, insert_lock, lock_row, open_secret};
use super::{KdfParams, Unlocked, crypto};
use crate::entity::Actor;
use crate::error::{Error, Result};
use crate::workspace::Workspace;

const FORMAT: u32 = 1;

/// The lock of a workspace as it travels to another device: its public key, and the workspace key wrapped by the
/// passphrase (with the Argon2id parameters and salt) and by the recovery key.
#[derive(Serialize, Deserialize)]
struct Material {
    format: u32,
    public_key: String,
    kdf: KdfParams,
    salt: String,
    by_passphrase: String,
    by_recovery: String,
}

impl Unlocked {
    /// The key sync encrypts what it stores on a target with, derived from the workspace key (HKDF-SHA256, its own
    /// label): it opens no sealed note, so a device may keep it to sync while locked.
    pub fn sync_key(&self) -> Result<Zeroizing<[u8; 32]>> {
        crypto::derive_key(&self.secret, b"quire sync v1")
    }
}

impl Workspace {
    /// The lock's wrapped key as bytes for another device (see the module docs); [`Error::NoLock`] without one.
    pub fn lock_material(&self) -> Result<Vec<u8>> {
        let row = self.read(&Actor::User, |r| lock_row(r.conn))?.ok_or(Error::NoLock)?;
        let material = Material {
            format: FORMAT,
            public_key: crate::hex(&row.public_key),
            kdf: row.kdf,
            salt: crate::hex(&row.salt),
            by_passphrase: crate::hex(&row.by_passphrase),
            by_recovery: crate::hex(&row.by_recovery),
        };
        serde_json::to_vec(&material).map_err(|e| Error::invalid(e.to_string()))
    }

    /// Sets this workspace's lock from another device's [`Workspace::lock_material`], opened with the passphrase:
    /// the two then share the workspace key. Refused, changing nothing, with a wrong passphrase, damaged material,
    /// or when this workspace has a lock of its own already.
    pub fn join_lock(&self, material: &[u8], passphrase: &str) -> Result<Unlocked> {
        let bad = || Error::invalid("This is not a quire workspace's lock (damaged, or from another program).");
        let material: Material = serde_json::from_slice(material).map_err(|_| bad())?;
        if material.format != FORMAT {
            return Err(bad());
        }
        let row = LockRow {
            public_key: unhex(&material.public_key).ok_or_else(bad)?,
            kdf: material.kdf,
            salt: unhex(&material.salt).ok_or_else(bad)?,
            by_passphrase: unhex(&material.by_passphrase).ok_or_else(bad)?,
            by_recovery: unhex(&material.by_recovery).ok_or_else(bad)?,
        };
        let kek = derive(passphrase.as_bytes(), &row.salt, &row.kdf)?;
        let key =
            open_secret(&kek, &row.by_passphrase, PASSPHRASE_AAD, &row.public_key).ok_or(Error::WrongPassphrase)?;
        self.write_unlocked(&key, |w| {
            if lock_row(w.conn)?.is_some() {
                return Err(Error::invalid(
                    "This workspace has a passphrase of its own already; a device joins with a new workspace.",
                ));
            }
            insert_lock(w, &row)?;
            // Anything protected here is sealed with the shared key from now on.
            w.seal_all_protected().map(drop)
        })?;
        Ok(key)
    }
}

impl Workspace {
    /// [`Workspace::join_lock`] with the first of `locks` the passphrase opens (each device of a synced workspace
    /// keeps a key file of its own, and a passphrase changed on one device changes its file only); that lock with the
    /// key. Refused with the last refusal: [`Error::WrongPassphrase`] when the last lock does not open with it.
    pub fn join_any_lock(&self, locks: &[Vec<u8>], passphrase: &str) -> Result<(Unlocked, Vec<u8>)> {
        let mut last = Error::WrongPassphrase;
        for lock in locks {
            match self.join_lock(lock, passphrase) {
                Ok(key) => return Ok((key, lock.clone())),
                Err(e) => last = e,
            }
        }
        Err(last)
    }
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_device_joins_with_the_passphrase_and_shares_the_keys() {
        let a = Workspace::open_in_memory().unwrap();
        let (key_a, _, _) = a
            .init_lock("correct horse battery", &KdfParams::cheapest_for_tests())
            .unwrap();
        let material = a.lock_material().unwrap();
        assert!(!String::from_utf8_lossy(&material).contains("correct horse"));

        let b = Workspace::open_in_memory().unwrap();
        assert!(matches!(
            b.join_lock(&material, "wrong passphrase"),
            Err(Error::WrongPassphrase)
        ));
        assert!(!b.lock_is_set().unwrap(), "a wrong passphrase joins nothing");
        assert!(b.join_lock(b"{not json", "correct horse battery").is_err());
        let key_b = b.join_lock(&material, "correct horse battery").unwrap();
        assert_eq!(*key_a.sync_key().unwrap(), *key_b.sync_key().unwrap());
        assert_eq!(key_a.public_bytes(), key_b.public_bytes());
        // The passphrase opens the joined device's copy too; a second join is refused.
        assert!(b.unlock("correct horse battery").is_ok());
        assert!(b.join_lock(&material, "correct horse battery").is_err());
        // The sync key is not the key that opens notes, nor the one that wraps note keys.
        let sync = key_a.sync_key().unwrap();
        assert_ne!(*sync, *crypto::wrapping_key(&key_a.secret).unwrap());
        assert_ne!(*sync, *key_a.secret);
    }

    /// Security finding 2-#4: a key file on a target asking 2^31 Argon2id passes hung `sync join` at full CPU. It is
    /// refused at once as damaged, and the join goes on with the next key file.
    #[test]
    fn a_lock_with_costs_no_quire_sets_is_refused_and_the_next_one_opens() {
        let a = Workspace::open_in_memory().unwrap();
        a.init_lock("correct horse battery", &KdfParams::cheapest_for_tests())
            .unwrap();
        let good = a.lock_material().unwrap();
        let mut material: serde_json::Value = serde_json::from_slice(&good).unwrap();
        for (field, value) in [("passes", 2_147_483_647u32), ("memory_kib", 4 << 20), ("lanes", 64)] {
            let mut hostile = material.clone();
            hostile["kdf"][field] = value.into();
            let hostile = serde_json::to_vec(&hostile).unwrap();
            let b = Workspace::open_in_memory().unwrap();
            let refused = b.join_lock(&hostile, "correct horse battery").unwrap_err();
            assert!(refused.to_string().contains("refused as damaged"), "{field}: {refused}");
            let (_, joined) = b
                .join_any_lock(&[hostile, good.clone()], "correct horse battery")
                .unwrap();
            assert_eq!(joined, good);
        }
        // The most quire sets on a slow machine (64 MiB, 16 passes) is within the bounds.
        material["kdf"] = serde_json::json!({ "memory_kib": 65536, "passes": 16, "lanes": 1 });
        let kdf: KdfParams = serde_json::from_value(material["kdf"].clone()).unwrap();
        assert!(kdf.check().is_ok());
    }
}
