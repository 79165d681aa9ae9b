//! `quire sync`: setting up sync with a target (init, join), syncing now, its status, forgetting a device, leaving.
//! The engine is `quire-sync`; this asks the passphrase (the only thing sync needs the unlocked key for: deriving
//! its own key) and says what happened.

use std::process::ExitCode;

use anyhow::{Context, bail};
use quire_core::{Error, Workspace};
use quire_sync::conflicts::{self, Keep};
use quire_sync::{Address, Device, SyncKey, SyncReport};
use serde_json::json;

use crate::cli::SyncCommand;
use crate::output::{self, Output, plural};
use crate::unlock::{Refused, Unlocker, workspace_name};

pub(crate) fn run(
    out: &Output,
    ws: &Workspace,
    keys: &Unlocker,
    command: Option<SyncCommand>,
) -> anyhow::Result<ExitCode> {
    quire_host::settings::apply_sync_timeout()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the runtime sync runs on")?;
    match command {
        None => runtime.block_on(sync_now(out, ws, false)),
        Some(SyncCommand::Compact) => runtime.block_on(sync_now(out, ws, true)),
        Some(SyncCommand::Init { target, name }) => runtime.block_on(init(out, ws, keys, &target, name)),
        Some(SyncCommand::Join { target, name }) => runtime.block_on(join(out, ws, keys, &target, name)),
        Some(SyncCommand::Status) => status(out, ws),
        Some(SyncCommand::Conflicts) => conflicts(out, ws, keys),
        Some(SyncCommand::Resolve { id, keep }) => resolve(out, ws, keys, id, &keep),
        Some(SyncCommand::Forget { device }) => {
            let forgotten = Device::forget(ws, &device)?;
            if out.json {
                output::json_value(&json!({"forgotten": forgotten.id, "name": forgotten.name}))?;
            } else {
                output::text(&format!(
                    "Forgot device {} ({}): its later changes are no longer waited for.\n",
                    forgotten.name, forgotten.id
                ))?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Some(SyncCommand::Leave) => {
            let before = Device::status(ws)?;
            Device::leave(ws)?;
            let unsent = before.map_or(0, |s| s.changed + s.unsent);
            if out.json {
                output::json_value(&json!({"left": true, "unsent": unsent}))?;
            } else {
                let mut text = "This workspace no longer syncs; its notes are all still here.\n".to_owned();
                if unsent > 0 {
                    text.push_str(
                        "Changes made here since the last `quire sync` were not sent: the other devices do not have \
                         them (join again to send them).\n",
                    );
                }
                output::text(&text)?;
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

async fn init(
    out: &Output,
    ws: &Workspace,
    keys: &Unlocker,
    target: &str,
    name: Option<String>,
) -> anyhow::Result<ExitCode> {
    let address = Address::parse_here(target)?;
    if !ws.lock_is_set()? {
        bail!(
            "Sync needs a passphrase first: everything it writes to the target is encrypted with a key derived from \
             it, and another device joins with it. Set one with `quire lock init`, then run this again."
        );
    }
    let key = keys.key(ws, "Setting up sync needs the passphrase: the workspace")?;
    let sync_key = SyncKey::from_bytes(*key.sync_key()?);
    let lock = ws.lock_material()?;
    let (device, report) = Device::set_up(
        ws.clone(),
        &address,
        sync_key,
        &lock,
        &Device::name_or_host(name.as_deref()),
    )
    .await?;
    finish(
        out,
        &report,
        &format!("{} now syncs with {}", workspace_name(ws), device.target_root()),
    )
}

async fn join(
    out: &Output,
    ws: &Workspace,
    keys: &Unlocker,
    target: &str,
    name: Option<String>,
) -> anyhow::Result<ExitCode> {
    let address = Address::parse_here(target)?;
    if let Some(status) = Device::status(ws)? {
        bail!(
            "This workspace syncs with {} already; `quire sync leave` stops that first.",
            status.target
        );
    }
    let locks = Device::locks_to_join(&address).await?;
    let (key, lock) = if ws.lock_is_set()? {
        // A workspace with a passphrase joins only a target of the same workspace (left before, say): its key must
        // open the target's files, which `Device::join` checks.
        let key = keys.key(ws, "Joining needs the passphrase: the workspace")?;
        (key, ws.lock_material()?)
    } else {
        let passphrase = keys.ask(
            &format!("Passphrase of the workspace synced at {}: ", address.shown()),
            "passphrase",
            || "Joining needs the passphrase: run in a terminal to type it, or pass --passphrase-stdin".to_owned(),
        )?;
        // Each device's key file opens with its own passphrase (one changed on a device changes its file only).
        match ws.join_any_lock(&locks, &passphrase) {
            Ok((key, lock)) => (keys.keep(key), lock),
            Err(Error::WrongPassphrase) => return Err(Refused(Error::WrongPassphrase.to_string()).into()),
            Err(e) => return Err(e.into()),
        }
    };
    let sync_key = SyncKey::from_bytes(*key.sync_key()?);
    let name = Device::name_or_host(name.as_deref());
    let (device, report) = Device::join_and_catch_up(ws.clone(), &address, sync_key, &lock, &name).await?;
    finish(
        out,
        &report,
        &format!("{} joined {}", workspace_name(ws), device.target_root()),
    )
}

async fn sync_now(out: &Output, ws: &Workspace, compact: bool) -> anyhow::Result<ExitCode> {
    let outcome = async {
        let device = Device::open(ws.clone()).await?.ok_or(quire_sync::SyncError::NotSetUp)?;
        if compact {
            device.compact().await
        } else {
            device.sync().await
        }
    }
    .await;
    let error = match outcome {
        Ok(report) => return finish(out, &report, "Synced"),
        Err(error) => error,
    };
    // A target that could not even be opened is recorded too, for `quire sync status`.
    Device::record_failure(ws, &error)?;
    let status = match Device::status(ws)? {
        Some(status) if error.is_offline() => status,
        _ => return Err(error.into()),
    };
    let waiting = status.changed + status.unsent;
    if out.json {
        output::json_value(
            &json!({"offline": true, "target": status.target, "waiting": waiting, "reason": error.to_string()}),
        )?;
    } else {
        eprintln!(
            "offline: the target at {} cannot be reached; {} (`quire sync status` says why)",
            status.target,
            match waiting {
                0 => "nothing here waits to be sent".to_owned(),
                1 => "1 change waits here and goes with the next sync".to_owned(),
                n => format!("{n} changes wait here and go with the next sync"),
            }
        );
    }
    Ok(ExitCode::from(3))
}

/// Prints what a sync did; refused files make the exit code 1.
fn finish(out: &Output, report: &SyncReport, headline: &str) -> anyhow::Result<ExitCode> {
    if out.json {
        output::json_value(&json!({
            "sent_batches": report.sent_batches,
            "sent_notes": report.sent_docs,
            "applied_batches": report.applied_batches,
            "applied_notes": report.applied_notes,
            "waiting": report.waiting,
            "applied_snapshots": report.applied_snapshots,
            "made_snapshot": report.made_snapshot,
            "removed_files": report.removed,
            "refused": report.refused,
            "ignored": report.ignored,
            "gaps": report.gaps,
            "conflicts": report.conflicts,
            "kept_aside": report.kept_aside,
        }))?;
    } else {
        let mut text = format!(
            "{headline}: sent {}, received {}.\n",
            plural(report.sent_docs as u64, "change"),
            plural(report.applied_notes as u64, "note change"),
        );
        if report.made_snapshot || report.removed > 0 {
            text.push_str(&format!(
                "Compacted: {}; removed {} of this device's from the target (every device has them).\n",
                if report.made_snapshot {
                    "wrote a snapshot"
                } else {
                    "no new snapshot"
                },
                plural(report.removed as u64, "file"),
            ));
        }
        if report.waiting > 0 {
            text.push_str(&format!(
                "{} from other devices wait for files not on the target yet.\n",
                quire_sync::batches(report.waiting)
            ));
        }
        for gap in &report.gaps {
            text.push_str(&format!("Waiting: {gap}.\n"));
        }
        if report.conflicts > 0 {
            text.push_str(&format!(
                "{}: another device changed the same lines as this one since they last synced. Both versions are in \
                 the note; see them with `quire sync conflicts`, and choose with `quire sync resolve`.\n",
                plural(report.conflicts as u64, "conflict")
            ));
        }
        if report.kept_aside > 0 {
            let (notes, them, each) = match report.kept_aside {
                1 => ("1 note was".to_owned(), "it", "it"),
                n => (format!("{n} notes were"), "them", "each"),
            };
            text.push_str(&format!(
                "{notes} sealed on another device before edits made here reached {them}: the edits wait beside \
                 {each}. `quire sync conflicts` merges them in (with the passphrase while the note is sealed).\n"
            ));
        }
        for refused in &report.refused {
            text.push_str(&format!("Refused: {refused}\n"));
        }
        for ignored in &report.ignored {
            text.push_str(&format!("Ignored (not quire's, never read): {ignored}\n"));
        }
        output::text(&text)?;
    }
    Ok(if report.refused.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn status(out: &Output, ws: &Workspace) -> anyhow::Result<ExitCode> {
    let Some(status) = Device::status(ws)? else {
        if out.json {
            output::json_value(&json!({"syncing": false}))?;
        } else {
            output::text("This workspace does not sync (`quire sync init TARGET` or `quire sync join TARGET`).\n")?;
        }
        return Ok(ExitCode::SUCCESS);
    };
    if out.json {
        output::json_value(&status.to_json())?;
    } else {
        output::text(&status.describe())?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The open conflicts: those of sealed notes opened with the passphrase when one is typed or given (asked only when
/// there are some), which also merges the edits kept beside sealed notes.
fn open_conflicts(ws: &Workspace, keys: &Unlocker) -> anyhow::Result<Vec<conflicts::Conflict>> {
    let open = quire_host::conflicts::open(ws, keys.opened(), None)?;
    match open.iter().find(|c| c.locked) {
        Some(sealed) if keys.can_ask() => {
            let key = keys.key(ws, &format!("A conflict in “{}”", sealed.title))?;
            Ok(quire_host::conflicts::open(ws, Some(key), None)?)
        }
        _ => Ok(open),
    }
}

fn conflicts(out: &Output, ws: &Workspace, keys: &Unlocker) -> anyhow::Result<ExitCode> {
    let open = open_conflicts(ws, keys)?;
    if out.json {
        output::json_value(&json!(
            open.iter()
                .map(|c| json!({
                    "id": c.id, "note_id": c.note_id, "title": c.title, "device": c.device, "base": c.base,
                    "mine": c.ours, "theirs": c.theirs, "merged": c.merged, "found": millis_text(c.found),
                    "sealed": c.locked, "edits_beside_note": c.aside,
                }))
                .collect::<Vec<_>>()
        ))?;
        return Ok(ExitCode::SUCCESS);
    }
    if open.is_empty() {
        output::text("No conflicts: every change from another device merged.\n")?;
        return Ok(ExitCode::SUCCESS);
    }
    // The label on a version's first line only, the text in one column.
    let lines = |label: &str, text: &str| match text {
        "" => format!("  {label:<22}(the lines removed)\n"),
        _ => text
            .lines()
            .enumerate()
            .map(|(i, l)| format!("  {:<22}{l}\n", if i == 0 { label } else { "" }))
            .collect(),
    };
    let locked = open.iter().filter(|c| c.locked).count();
    let mut text = String::new();
    if open.len() > locked {
        text.push_str(&format!(
            "{}: another device changed the same lines of a note at the same time. Both versions are in the note \
             until you choose: `quire sync resolve ID --keep mine|theirs|both` (or `merged`, where offered).\n",
            plural((open.len() - locked) as u64, "conflict")
        ));
    }
    if locked > 0 {
        text.push_str(&format!(
            "{} in sealed notes: they open with the passphrase.\n",
            plural(locked as u64, "conflict")
        ));
    }
    for c in &open {
        if c.locked {
            let what = if c.aside {
                format!(
                    "edits made here wait beside “{}” ({}): {} sealed it before they arrived, found {}",
                    c.title,
                    c.note_id,
                    c.device,
                    millis_text(c.found)
                )
            } else {
                format!(
                    "in “{}” ({}), with {}, found {}",
                    c.title,
                    c.note_id,
                    c.device,
                    millis_text(c.found)
                )
            };
            text.push_str(&format!(
                "\n#{} {what}\n  The note is sealed: run `quire sync conflicts` in a terminal (or with \
                 --passphrase-stdin) to open it with the passphrase.\n",
                c.id
            ));
            continue;
        }
        text.push_str(&format!(
            "\n#{} in “{}” ({}), with {}, found {}\n",
            c.id,
            c.title,
            c.note_id,
            c.device,
            millis_text(c.found)
        ));
        text.push_str(&lines("was:", &c.base));
        text.push_str(&lines("mine (here):", &c.ours));
        text.push_str(&lines(&format!("theirs ({}):", c.device), &c.theirs));
        if let Some(merged) = &c.merged {
            text.push_str(&lines("merged:", merged));
        }
    }
    output::text(&text)?;
    Ok(ExitCode::SUCCESS)
}

fn resolve(out: &Output, ws: &Workspace, keys: &Unlocker, id: i64, keep: &str) -> anyhow::Result<ExitCode> {
    let keep = match keep {
        "mine" => Keep::Ours,
        "theirs" => Keep::Theirs,
        "both" => Keep::Both,
        _ => Keep::Merged,
    };
    let (c, change_set) = match quire_host::conflicts::resolve(ws, keys.opened(), id, keep) {
        // A sealed note's: with the passphrase (asked once).
        Err(conflicts::ConflictError::Locked { title, .. }) => {
            let key = keys.key(ws, &format!("Conflict {id}, in “{title}”,"))?;
            quire_host::conflicts::resolve(ws, Some(key), id, keep)?
        }
        done => done?,
    };
    if out.json {
        output::json_value(&json!({"resolved": id, "note_id": c.note_id, "change_set_id": change_set}))?;
    } else {
        let kept = match keep {
            Keep::Ours => "this device's version".to_owned(),
            Keep::Theirs => format!("{}'s version", c.device),
            Keep::Both => "both versions".to_owned(),
            Keep::Merged => "the two merged".to_owned(),
        };
        let undo = change_set.map_or(String::new(), |id| format!("; `quire undo {id}` takes it back"));
        output::text(&format!("Kept {kept} in “{}”{undo}.\n", c.title))?;
    }
    Ok(ExitCode::SUCCESS)
}

fn millis_text(millis: i64) -> String {
    quire_core::Timestamp(millis).to_rfc3339()
}
