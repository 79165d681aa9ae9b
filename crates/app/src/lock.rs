//! `quire lock`: setting the workspace's passphrase (which seals every protected note), its status, changing it,
//! recovering with the recovery key, and a new recovery key. The passphrase other commands ask for is `unlock`'s.

use std::time::Duration;

use anyhow::bail;
use quire_core::Workspace;
use quire_core::seal::{KdfParams, LockStatus, MIN_PASSPHRASE_CHARS, RecoveryKey, SealReport};
use serde_json::json;
use zeroize::Zeroizing;

use crate::cli::{KdfArgs, LockCommand};
use crate::output::{self, Output, plural};
use crate::unlock::{Refused, Unlocker, workspace_name};

/// What `quire lock init` says before it asks anything.
const WARNING: &str = "\
A passphrase seals protected notes: their text, revisions, attachments and history are encrypted in the workspace
file and open only with it. You also get a recovery key, shown once. If you lose both the passphrase and the
recovery key, the sealed notes are gone for good: nobody can open them, not even with a copy of the workspace.
";

/// How long deriving the key from the passphrase takes here, by default.
const KDF_TARGET: Duration = Duration::from_millis(500);

pub(crate) fn run(out: &Output, ws: &Workspace, keys: &Unlocker, command: &LockCommand) -> anyhow::Result<()> {
    match command {
        LockCommand::Init { kdf } => init(out, ws, keys, kdf),
        LockCommand::Status => status(out, ws),
        LockCommand::Passwd { kdf } => passwd(out, ws, keys, kdf),
        LockCommand::Recover { kdf } => recover(out, ws, keys, kdf),
        LockCommand::NewRecoveryKey => new_recovery_key(out, ws, keys),
    }
}

fn init(out: &Output, ws: &Workspace, keys: &Unlocker, kdf: &KdfArgs) -> anyhow::Result<()> {
    if ws.lock_is_set()? {
        bail!(
            "a passphrase is set already: `quire lock passwd` changes it, `quire lock recover` sets a new one with \
             the recovery key. Nothing changed."
        );
    }
    if !keys.can_ask() {
        return Err(Refused(not_a_terminal("quire lock init")).into());
    }
    // Said before anything is asked, so nobody sets a passphrase without knowing what losing it means.
    eprintln!("{WARNING}");
    let passphrase = new_passphrase(keys, "quire lock init")?;
    let params = params(kdf);
    let (key, recovery, report) = ws.init_lock(&passphrase, &params)?;
    keys.keep(key);
    if out.json {
        return output::json_value(&json!({
            "initialized": true,
            "recovery_key": recovery.as_str(),
            "sealed": report,
            "kdf": params,
        }));
    }
    let mut text = format!(
        "Passphrase set for {} ({}).\n",
        workspace_name(ws),
        describe_kdf(&params)
    );
    text.push_str(&sealed_in_words(&report));
    text.push_str(&recovery_text(&recovery, "Recovery key"));
    text.push_str("If you forget the passphrase, `quire lock recover` sets a new one with this key.\n");
    output::text(&text)
}

fn status(out: &Output, ws: &Workspace) -> anyhow::Result<()> {
    let status = ws.lock_status()?;
    if out.json {
        return output::json_value(&status);
    }
    output::text(&status_text(&status))
}

fn status_text(status: &LockStatus) -> String {
    let LockStatus {
        initialized,
        kdf,
        sealed_notes,
        protected_unsealed,
    } = status;
    if !initialized {
        let protected = match protected_unsealed {
            0 => "No note is protected yet.".to_owned(),
            1 => "1 protected note is hidden from AI, but its text is stored unencrypted.".to_owned(),
            n => format!("{n} protected notes are hidden from AI, but their text is stored unencrypted."),
        };
        return format!(
            "No passphrase is set. {protected}\n`quire lock init` sets one; from then on every protected note is \
             sealed (encrypted).\n"
        );
    }
    let mut text = format!(
        "Passphrase: set{}\nSealed notes: {sealed_notes} (their text opens only with the passphrase)\n",
        kdf.as_ref()
            .map(|k| format!(" ({})", describe_kdf(k)))
            .unwrap_or_default()
    );
    if *protected_unsealed > 0 {
        text.push_str(&format!("Protected but not sealed: {protected_unsealed}\n"));
    }
    text
}

fn passwd(out: &Output, ws: &Workspace, keys: &Unlocker, kdf: &KdfArgs) -> anyhow::Result<()> {
    require_lock(ws)?;
    let current = keys.ask(
        &format!("Current passphrase for {}: ", workspace_name(ws)),
        "current passphrase",
        || not_a_terminal("quire lock passwd"),
    )?;
    let key = crate::unlock::open(ws, &current)?;
    let passphrase = new_passphrase(keys, "quire lock passwd")?;
    let params = params(kdf);
    ws.change_passphrase(&key, &passphrase, &params)?;
    if out.json {
        return output::json_value(&json!({ "changed": true, "kdf": params }));
    }
    let mut said = format!(
        "Passphrase changed ({}): the old one no longer opens this workspace file. The recovery key is unchanged. \
         Copies made before (backups, other folders) still open with the old passphrase: the key under it is the \
         same.\n",
        describe_kdf(&params)
    );
    if quire_sync::Device::status(ws)?.is_some() {
        said.push_str(
            "This workspace syncs: its next sync replaces this device's key file on the target. Each of your other \
             devices keeps a key file of its own there, which the old passphrase still opens (and with it, a new \
             device can join) until you run `quire lock passwd` on that device too.\n",
        );
    }
    output::text(&said)
}

fn recover(out: &Output, ws: &Workspace, keys: &Unlocker, kdf: &KdfArgs) -> anyhow::Result<()> {
    require_lock(ws)?;
    let recovery = keys.ask(
        "Recovery key (8 groups of 8 hex digits, as `quire lock init` printed it): ",
        "recovery key",
        || not_a_terminal("quire lock recover"),
    )?;
    let key = match ws.unlock_with_recovery(&recovery) {
        Ok(key) => key,
        // A wrong key, or text that is not one: refused, and said why.
        Err(e @ (quire_core::Error::WrongRecoveryKey | quire_core::Error::Invalid(_))) => {
            return Err(Refused(e.to_string()).into());
        }
        Err(e) => return Err(e.into()),
    };
    let passphrase = new_passphrase(keys, "quire lock recover")?;
    let params = params(kdf);
    ws.change_passphrase(&key, &passphrase, &params)?;
    if out.json {
        return output::json_value(&json!({ "changed": true, "kdf": params }));
    }
    output::text(
        "New passphrase set: the old passphrase no longer opens this workspace file (copies made before still open \
         with it). The recovery key still does; if someone else may have seen it, `quire lock new-recovery-key` \
         replaces it.\n",
    )
}

fn new_recovery_key(out: &Output, ws: &Workspace, keys: &Unlocker) -> anyhow::Result<()> {
    require_lock(ws)?;
    let key = keys.key(ws, "the workspace's key")?;
    let recovery = ws.new_recovery_key(key)?;
    if out.json {
        return output::json_value(&json!({ "recovery_key": recovery.as_str() }));
    }
    let mut text = recovery_text(&recovery, "New recovery key");
    text.push_str(
        "The old recovery key no longer opens this workspace file; copies of the file made before still open with it.\n",
    );
    output::text(&text)
}

/// [`quire_core::Error::NoLock`] said the command line's way.
fn require_lock(ws: &Workspace) -> anyhow::Result<()> {
    if ws.lock_is_set()? {
        Ok(())
    } else {
        bail!("no passphrase is set on this workspace, so nothing is sealed: `quire lock init` sets one")
    }
}

/// A new passphrase: asked twice on the terminal, read once from standard input; refused when shorter than
/// [`MIN_PASSPHRASE_CHARS`] or typed differently the second time.
fn new_passphrase(keys: &Unlocker, command: &str) -> anyhow::Result<Zeroizing<String>> {
    let first = keys.ask(
        &format!("New passphrase (at least {MIN_PASSPHRASE_CHARS} characters): "),
        "new passphrase",
        || not_a_terminal(command),
    )?;
    if first.chars().count() < MIN_PASSPHRASE_CHARS {
        return Err(Refused(format!(
            "A passphrase needs at least {MIN_PASSPHRASE_CHARS} characters; a few words are easier to remember than \
             symbols. Nothing changed."
        ))
        .into());
    }
    if keys.reads_stdin() {
        return Ok(first);
    }
    let again = keys.ask("The same passphrase again: ", "passphrase", || not_a_terminal(command))?;
    if *again != *first {
        return Err(Refused("The two passphrases differ. Nothing changed.".to_owned()).into());
    }
    Ok(first)
}

fn not_a_terminal(command: &str) -> String {
    format!("`{command}` asks for the passphrase on a terminal; pass it with --passphrase-stdin in a script")
}

/// The Argon2id parameters: those given, or tuned to about half a second on this computer.
fn params(kdf: &KdfArgs) -> KdfParams {
    match (kdf.kdf_memory_kib, kdf.kdf_passes) {
        (Some(memory_kib), Some(passes)) => KdfParams {
            memory_kib,
            passes,
            lanes: 1,
        },
        _ => KdfParams::tuned(KDF_TARGET),
    }
}

/// `Argon2id, 64 MiB, 3 passes`.
fn describe_kdf(kdf: &KdfParams) -> String {
    let memory = if kdf.memory_kib.is_multiple_of(1024) {
        format!("{} MiB", kdf.memory_kib / 1024)
    } else {
        format!("{} KiB", kdf.memory_kib)
    };
    let passes = match kdf.passes {
        1 => "1 pass".to_owned(),
        n => format!("{n} passes"),
    };
    format!("Argon2id, {memory}, {passes}")
}

/// What sealing did, in a sentence or two.
fn sealed_in_words(report: &SealReport) -> String {
    if report.notes == 0 {
        return "No note is protected yet: `quire note protect ID` seals one, without the passphrase.\n".to_owned();
    }
    let mut with = Vec::new();
    for (count, one, many) in [
        (report.revisions, "revision", "revisions"),
        (report.attachments, "attachment", "attachments"),
        (report.snapshots, "change-log entry", "change-log entries"),
    ] {
        match count {
            0 => {}
            1 => with.push(format!("1 {one}")),
            n => with.push(format!("{n} {many}")),
        }
    }
    let mut text = format!("Sealed {}", plural(report.notes, "protected note"));
    if !with.is_empty() {
        text.push_str(&format!(" with {}", and_list(&with)));
    }
    text.push('.');
    if report.chats_removed > 0 {
        text.push_str(&format!(
            " Removed {} about them (a chat quotes the note).",
            plural(report.chats_removed, "chat")
        ));
    }
    text.push('\n');
    if !report.file_rewritten {
        text.push_str(
            "Another quire process was using the workspace file, so it was not rewritten: text an older quire deleted \
             may stay in its free space until it is reused. Stop the other process (quire serve, mcp, chat) before \
             copying the file anywhere.\n",
        );
    }
    text
}

/// `a`, `a and b`, `a, b and c`.
fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// The recovery key, set apart so it is copied whole.
fn recovery_text(recovery: &RecoveryKey, label: &str) -> String {
    format!(
        "\n{label}, shown this once. Write it down and keep it apart from this computer:\n\n    {}\n\n",
        recovery.as_str()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kdf_and_reports_read_as_sentences() {
        let tuned = KdfParams {
            memory_kib: 64 * 1024,
            passes: 3,
            lanes: 1,
        };
        assert_eq!(describe_kdf(&tuned), "Argon2id, 64 MiB, 3 passes");
        assert_eq!(
            describe_kdf(&KdfParams::cheapest_for_tests()),
            "Argon2id, 8 KiB, 1 pass"
        );
        let report = SealReport {
            notes: 2,
            revisions: 1,
            attachments: 0,
            snapshots: 3,
            chats_removed: 1,
            file_rewritten: true,
        };
        assert_eq!(
            sealed_in_words(&report),
            "Sealed 2 protected notes with 1 revision and 3 change-log entries. Removed 1 chat about them (a chat \
             quotes the note).\n"
        );
    }
}
