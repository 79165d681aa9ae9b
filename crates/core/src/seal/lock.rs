//! The workspace's lock: setting the passphrase, unlocking, changing it, the recovery key.

use std::time::{Duration, Instant};

use rusqlite::{OptionalExtension, params};
use serde::{Deserialize, Serialize};
use zeroize::Zeroizing;

use super::{Sealer, Unlocked, crypto};
use crate::entity::Actor;
use crate::error::{Error, Result};
use crate::workspace::Workspace;

pub(super) const PASSPHRASE_AAD: &[u8] = b"quire lock: workspace key by passphrase";
pub(super) const RECOVERY_AAD: &[u8] = b"quire lock: workspace key by recovery key";
/// The shortest passphrase `quire lock` accepts.
pub const MIN_PASSPHRASE_CHARS: usize = 8;

/// Argon2id's cost: memory, passes and lanes. Stored with the wrapped key, so a change of defaults never locks out
/// an existing workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct KdfParams {
    /// Memory in KiB.
    pub memory_kib: u32,
    /// Passes over it.
    pub passes: u32,
    /// Parallel lanes.
    pub lanes: u32,
}

impl KdfParams {
    /// 64 MiB and as many passes as take about `target` on this machine (at least 2; fewer MiB when one pass of 64
    /// takes longer than the target).
    pub fn tuned(target: Duration) -> KdfParams {
        let mut params = KdfParams {
            memory_kib: 64 * 1024,
            passes: 1,
            lanes: 1,
        };
        // Measuring the real function on a throwaway passphrase, after a first run that pays for the memory.
        let _ = derive(b"warm up", &[0u8; 16], &params);
        params.passes = 2;
        let started = Instant::now();
        let _ = derive(b"measure", &[0u8; 16], &params);
        let one = (started.elapsed() / 2).max(Duration::from_millis(1));
        if one > target {
            params.memory_kib = (u64::from(params.memory_kib) * target.as_millis() as u64 / one.as_millis() as u64)
                .clamp(19 * 1024, 64 * 1024) as u32;
            params.passes = 2;
        } else {
            params.passes = ((target.as_secs_f64() / one.as_secs_f64()).round() as u32).clamp(2, 16);
        }
        params
    }

    /// The cheapest parameters Argon2id allows: for tests only, where a workspace is locked and unlocked many times.
    pub fn cheapest_for_tests() -> KdfParams {
        KdfParams {
            memory_kib: 8,
            passes: 1,
            lanes: 1,
        }
    }

    /// Refuses costs beyond any quire sets, with room for a future default: at most 1 GiB of memory, 16 lanes, 64
    /// passes, and 2 GiB of memory over all passes (what [`KdfParams::tuned`] sets is at most 64 MiB × 16). A key file
    /// on a sync target carries its own costs, and anyone who can write to the target could otherwise make a device
    /// that joins work for hours.
    pub fn check(&self) -> Result<()> {
        const GIB_IN_KIB: u64 = 1 << 20;
        let work = u64::from(self.memory_kib) * u64::from(self.passes);
        if u64::from(self.memory_kib) > GIB_IN_KIB || self.lanes > 16 || self.passes > 64 || work > 2 * GIB_IN_KIB {
            return Err(Error::invalid(format!(
                "This lock asks for Argon2id costs no quire sets ({} KiB, {} passes, {} lanes): refused as damaged.",
                self.memory_kib, self.passes, self.lanes
            )));
        }
        Ok(())
    }
}

pub(super) fn derive(passphrase: &[u8], salt: &[u8], params: &KdfParams) -> Result<crypto::Secret> {
    params.check()?;
    let argon_params = argon2::Params::new(params.memory_kib, params.passes, params.lanes, Some(32))
        .map_err(|e| Error::invalid(format!("Argon2id parameters refused: {e}")))?;
    let argon = argon2::Argon2::new(argon2::Algorithm::Argon2id, argon2::Version::V0x13, argon_params);
    let mut out = Zeroizing::new([0u8; 32]);
    argon
        .hash_password_into(passphrase, salt, out.as_mut())
        .map_err(|e| Error::invalid(format!("Argon2id failed: {e}")))?;
    Ok(out)
}

/// The recovery key: 32 random bytes, written as 8 groups of 8 hex digits. Shown once by `quire lock init`.
pub struct RecoveryKey(Zeroizing<String>);

impl RecoveryKey {
    fn from_bytes(bytes: &[u8; 32]) -> RecoveryKey {
        let hex = Zeroizing::new(crate::hex(bytes));
        let groups: Vec<&str> = (0..8).map(|i| &hex[i * 8..i * 8 + 8]).collect();
        RecoveryKey(Zeroizing::new(groups.join("-")))
    }

    /// The key as the user writes it down.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    fn parse(text: &str) -> Result<crypto::Secret> {
        let digits: Zeroizing<String> =
            Zeroizing::new(text.chars().filter(|c| !c.is_whitespace() && *c != '-').collect());
        let bad =
            || Error::invalid("A recovery key is 64 hex digits (in groups of 8, as `quire lock init` printed it).");
        if digits.len() != 64 {
            return Err(bad());
        }
        let mut out = Zeroizing::new([0u8; 32]);
        for (i, byte) in out.iter_mut().enumerate() {
            *byte = u8::from_str_radix(digits.get(i * 2..i * 2 + 2).ok_or_else(bad)?, 16).map_err(|_| bad())?;
        }
        Ok(out)
    }
}

impl std::fmt::Debug for RecoveryKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RecoveryKey(..)")
    }
}

/// Whether a passphrase is set, and how much is sealed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LockStatus {
    /// A passphrase is set: protected notes are sealed.
    pub initialized: bool,
    /// The Argon2id parameters, when set.
    pub kdf: Option<KdfParams>,
    /// Notes whose content is sealed.
    pub sealed_notes: u64,
    /// Protected notes whose content is not sealed (all of them until a passphrase is set).
    pub protected_unsealed: u64,
}

/// What one sealing pass did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SealReport {
    /// Notes sealed.
    pub notes: u64,
    /// Their revisions sealed.
    pub revisions: u64,
    /// Their attachments sealed.
    pub attachments: u64,
    /// Snapshots in the change log sealed.
    pub snapshots: u64,
    /// Chats about them removed (a chat about a note quotes it).
    pub chats_removed: u64,
    /// `lock init` only: whether the whole file was rewritten (`VACUUM`) after sealing, so that text an older quire
    /// deleted (before `secure_delete` was on) is gone from its free space too; false when another process was using
    /// the file at that moment.
    pub file_rewritten: bool,
}

impl SealReport {
    pub(crate) fn add(&mut self, other: &SealReport) {
        self.notes += other.notes;
        self.revisions += other.revisions;
        self.attachments += other.attachments;
        self.snapshots += other.snapshots;
        self.chats_removed += other.chats_removed;
        self.file_rewritten |= other.file_rewritten;
    }
}

pub(super) struct LockRow {
    pub(super) public_key: Vec<u8>,
    pub(super) kdf: KdfParams,
    pub(super) salt: Vec<u8>,
    pub(super) by_passphrase: Vec<u8>,
    pub(super) by_recovery: Vec<u8>,
}

pub(super) fn lock_row(conn: &rusqlite::Connection) -> Result<Option<LockRow>> {
    let row = conn
        .query_row(
            "SELECT public_key, kdf, salt, by_passphrase, by_recovery FROM lock WHERE id = 1",
            [],
            |r| {
                Ok((
                    r.get::<_, Vec<u8>>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, Vec<u8>>(2)?,
                    r.get::<_, Vec<u8>>(3)?,
                    r.get::<_, Vec<u8>>(4)?,
                ))
            },
        )
        .optional()?;
    row.map(|(public_key, kdf, salt, by_passphrase, by_recovery)| {
        Ok(LockRow {
            public_key,
            kdf: serde_json::from_str(&kdf).map_err(|e| Error::invalid(format!("the lock's parameters: {e}")))?,
            salt,
            by_passphrase,
            by_recovery,
        })
    })
    .transpose()
}

/// Writes the lock row (refused by the table when there is one).
pub(super) fn insert_lock(w: &crate::Writer<'_>, row: &LockRow) -> Result<()> {
    let kdf = serde_json::to_string(&row.kdf).map_err(|e| Error::invalid(e.to_string()))?;
    w.conn.execute(
        "INSERT INTO lock (id, public_key, kdf, salt, by_passphrase, by_recovery, created, updated) \
         VALUES (1, ?1, ?2, ?3, ?4, ?5, ?6, ?6)",
        params![
            row.public_key,
            kdf,
            row.salt,
            row.by_passphrase,
            row.by_recovery,
            w.now().as_millis()
        ],
    )?;
    Ok(())
}

/// The sealer of this workspace, if a passphrase is set.
pub(crate) fn sealer(conn: &rusqlite::Connection) -> Result<Option<Sealer>> {
    let key: Option<Vec<u8>> = conn
        .query_row("SELECT public_key FROM lock WHERE id = 1", [], |r| r.get(0))
        .optional()?;
    key.map(|bytes| {
        crypto::public_key_from(&bytes)
            .map(|public| Sealer { public })
            .ok_or_else(|| Error::invalid("The workspace's lock holds a damaged public key."))
    })
    .transpose()
}

/// Refuses a key made for another workspace. Without a lock there is nothing a key could open (and
/// [`Workspace::init_lock`] writes the lock with its key).
pub(crate) fn check_key(conn: &rusqlite::Connection, key: &Unlocked) -> Result<()> {
    let stored: Option<Vec<u8>> = conn
        .query_row("SELECT public_key FROM lock WHERE id = 1", [], |r| r.get(0))
        .optional()?;
    match stored {
        Some(bytes) if bytes.as_slice() == key.public_bytes() => Ok(()),
        Some(_) => Err(Error::invalid("This key unlocks another workspace, not this one.")),
        None => Ok(()),
    }
}

fn check_passphrase(passphrase: &str) -> Result<()> {
    if passphrase.chars().count() < MIN_PASSPHRASE_CHARS {
        return Err(Error::invalid(format!(
            "A passphrase needs at least {MIN_PASSPHRASE_CHARS} characters."
        )));
    }
    Ok(())
}

fn random_salt() -> Result<[u8; 16]> {
    let mut salt = [0u8; 16];
    crypto::fill_random(&mut salt)?;
    Ok(salt)
}

fn aad(what: &[u8], public: &[u8]) -> Vec<u8> {
    [what, public].concat()
}

impl Workspace {
    /// Whether a passphrase is set (protected notes are sealed); one row read, unlike [`Workspace::lock_status`].
    pub fn lock_is_set(&self) -> Result<bool> {
        self.read(&Actor::User, |r| Ok(sealer(r.conn)?.is_some()))
    }

    /// Whether a passphrase is set, and what is sealed.
    pub fn lock_status(&self) -> Result<LockStatus> {
        self.read(&Actor::User, |r| {
            let row = lock_row(r.conn)?;
            let sealed_notes: i64 =
                r.conn
                    .query_row("SELECT count(*) FROM notes WHERE sealed IS NOT NULL", [], |row| {
                        row.get(0)
                    })?;
            let sealed_notes = sealed_notes as u64;
            let protected = r.protected_notebooks()?;
            let mut protected_unsealed = 0u64;
            let mut stmt = r
                .conn
                .prepare("SELECT is_protected, notebook_id FROM notes WHERE sealed IS NULL")?;
            let rows = stmt.query_map([], |row| Ok((row.get::<_, bool>(0)?, row.get::<_, String>(1)?)))?;
            for row in rows {
                let (own, notebook) = row?;
                if own || protected.contains(&notebook) {
                    protected_unsealed += 1;
                }
            }
            Ok(LockStatus {
                initialized: row.is_some(),
                kdf: row.map(|row| row.kdf),
                sealed_notes,
                protected_unsealed,
            })
        })
    }

    /// Sets the workspace's passphrase: makes the workspace key, wraps it by the passphrase and by a new recovery
    /// key (returned, to be shown once), and seals every protected note, in one transaction. Refused when a
    /// passphrase is set already ([`Workspace::change_passphrase`] changes it).
    pub fn init_lock(&self, passphrase: &str, params: &KdfParams) -> Result<(Unlocked, RecoveryKey, SealReport)> {
        check_passphrase(passphrase)?;
        let secret = crypto::random_secret()?;
        let unlocked = Unlocked::from_secret(secret.clone())?;
        let public = *unlocked.public_bytes();
        let salt = random_salt()?;
        let kek = derive(passphrase.as_bytes(), &salt, params)?;
        let by_passphrase = crypto::encrypt(&kek, secret.as_ref(), &aad(PASSPHRASE_AAD, &public))?;
        let recovery = crypto::random_secret()?;
        let by_recovery = crypto::encrypt(&recovery, secret.as_ref(), &aad(RECOVERY_AAD, &public))?;
        let report = self.write_unlocked(&unlocked, |w| {
            if lock_row(w.conn)?.is_some() {
                return Err(Error::invalid(
                    "A passphrase is set already: `quire lock passwd` changes it, `quire lock recover` resets it.",
                ));
            }
            let row = LockRow {
                public_key: public.to_vec(),
                kdf: *params,
                salt: salt.to_vec(),
                by_passphrase: by_passphrase.clone(),
                by_recovery: by_recovery.clone(),
            };
            insert_lock(w, &row)?;
            let mut report = w.seal_all_protected()?;
            report.chats_removed += w.remove_chats_about_sealed()?;
            Ok(report)
        })?;
        // The lock is set and sealed already: a file that cannot be rewritten now (another process reading it) must
        // not lose the recovery key the caller is about to show. The report says whether it was.
        let mut report = report;
        report.file_rewritten = self.vacuum().is_ok();
        Ok((unlocked, RecoveryKey::from_bytes(&recovery), report))
    }

    /// Opens the workspace key with the passphrase. A wrong one is [`Error::WrongPassphrase`]; nothing changes.
    pub fn unlock(&self, passphrase: &str) -> Result<Unlocked> {
        let row = self.read(&Actor::User, |r| lock_row(r.conn))?.ok_or(Error::NoLock)?;
        let kek = derive(passphrase.as_bytes(), &row.salt, &row.kdf)?;
        open_secret(&kek, &row.by_passphrase, PASSPHRASE_AAD, &row.public_key).ok_or(Error::WrongPassphrase)
    }

    /// Opens the workspace key with the recovery key (to set a new passphrase with it).
    pub fn unlock_with_recovery(&self, recovery: &str) -> Result<Unlocked> {
        let key = RecoveryKey::parse(recovery)?;
        let row = self.read(&Actor::User, |r| lock_row(r.conn))?.ok_or(Error::NoLock)?;
        open_secret(&key, &row.by_recovery, RECOVERY_AAD, &row.public_key).ok_or(Error::WrongRecoveryKey)
    }

    /// Wraps the workspace key by a new passphrase (and new parameters); the recovery key stays valid.
    pub fn change_passphrase(&self, key: &Unlocked, passphrase: &str, params: &KdfParams) -> Result<()> {
        check_passphrase(passphrase)?;
        let salt = random_salt()?;
        let kek = derive(passphrase.as_bytes(), &salt, params)?;
        let by_passphrase = crypto::encrypt(&kek, key.secret.as_ref(), &aad(PASSPHRASE_AAD, key.public_bytes()))?;
        let kdf = serde_json::to_string(params).map_err(|e| Error::invalid(e.to_string()))?;
        self.write_unlocked(key, |w| {
            let now = w.now().as_millis();
            w.conn.execute(
                "UPDATE lock SET kdf = ?1, salt = ?2, by_passphrase = ?3, updated = ?4 WHERE id = 1",
                params![kdf, salt.as_slice(), by_passphrase, now],
            )?;
            Ok::<_, Error>(())
        })
    }

    /// Replaces the recovery key by a new one (returned, to be shown once); the old one no longer opens anything.
    pub fn new_recovery_key(&self, key: &Unlocked) -> Result<RecoveryKey> {
        let recovery = crypto::random_secret()?;
        let by_recovery = crypto::encrypt(&recovery, key.secret.as_ref(), &aad(RECOVERY_AAD, key.public_bytes()))?;
        self.write_unlocked(key, |w| {
            let now = w.now().as_millis();
            w.conn.execute(
                "UPDATE lock SET by_recovery = ?1, updated = ?2 WHERE id = 1",
                params![by_recovery, now],
            )?;
            Ok::<_, Error>(())
        })?;
        Ok(RecoveryKey::from_bytes(&recovery))
    }
}

pub(super) fn open_secret(key: &crypto::Secret, wrapped: &[u8], what: &[u8], public: &[u8]) -> Option<Unlocked> {
    let opened = crypto::decrypt(key, wrapped, &aad(what, public)).ok()?;
    if opened.len() != 32 {
        return None;
    }
    let mut secret = Zeroizing::new([0u8; 32]);
    secret.copy_from_slice(&opened);
    let unlocked = Unlocked::from_secret(secret).ok()?;
    // The stored public key must be the one this secret makes: a lock row put together from two workspaces fails.
    (unlocked.public_bytes().as_slice() == public).then_some(unlocked)
}
