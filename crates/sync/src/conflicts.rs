//! The conflicts sync found (issue 46): places in a note where another device changed the same lines as this one
//! at the same time. Both versions are in the note, whole, one after the other; each conflict says which they are
//! until the person keeps one, the other, both, or (when the two changed different words) the merge by words.
//!
//! A conflict whose versions the note no longer holds as they were (the person edited them, or chose on another
//! device and that arrived) is settled: [`open`] drops it.

use quire_core::conflicts::SyncConflict;
use quire_core::{Actor, NoteUpdate, Workspace};

use crate::doc::merge_words;

/// A conflict as the person sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict {
    /// Its number in this workspace.
    pub id: i64,
    /// The note.
    pub note_id: String,
    /// The note's title.
    pub title: String,
    /// The other device's name (its id when it is not known here).
    pub device: String,
    /// The lines both started from.
    pub base: String,
    /// This device's version.
    pub ours: String,
    /// The other device's version.
    pub theirs: String,
    /// The two merged by words, when they changed different words.
    pub merged: Option<String>,
    /// When sync found it (milliseconds).
    pub found: i64,
}

/// What to keep of a conflict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    /// This device's version.
    Ours,
    /// The other device's.
    Theirs,
    /// Both, as they are now in the note.
    Both,
    /// The merge by words (only when there is one).
    Merged,
}

/// Why a conflict could not be resolved. Nothing was written.
#[derive(Debug, thiserror::Error)]
pub enum ConflictError {
    /// No conflict has that number (resolved already, or settled).
    #[error("there is no conflict {0} (it was resolved, or the note no longer holds both versions)")]
    NotFound(i64),
    /// A merge by words was asked for where the two changed the same words.
    #[error("the two versions changed the same words, so there is no merge by words: keep one, the other, or both")]
    NoMerge,
    /// The workspace refused the write.
    #[error(transparent)]
    Core(#[from] quire_core::Error),
}

/// The lines of a body as the sync documents hold them: with one more line end, so every line ends with one.
fn lines(body: &str) -> Vec<String> {
    format!("{body}\n").split_inclusive('\n').map(str::to_owned).collect()
}

fn block(text: &str) -> Vec<String> {
    text.split_inclusive('\n').map(str::to_owned).collect()
}

/// The lines of `body` (indexes) that hold `block`, none of them `taken` already: a run of them where there is one,
/// else each line where it is (a third device's version can land between two lines of another).
fn find(block: &[String], body: &[String], taken: &mut [bool]) -> Option<Vec<usize>> {
    if block.is_empty() {
        return Some(Vec::new());
    }
    let run = (0..=body.len().saturating_sub(block.len()))
        .find(|&i| block.len() <= body.len() && (0..block.len()).all(|k| !taken[i + k] && body[i + k] == block[k]));
    let found: Vec<usize> = match run {
        Some(i) => (i..i + block.len()).collect(),
        None => {
            let mut found = Vec::new();
            for line in block {
                let at = (0..body.len()).find(|&i| !taken[i] && !found.contains(&i) && body[i] == *line)?;
                found.push(at);
            }
            found
        }
    };
    for &i in &found {
        taken[i] = true;
    }
    Some(found)
}

/// Where the two versions are in `body` (the lines of each), or `None` when a line of either is gone: the conflict
/// is settled (one was removed, or changed by hand).
fn place(conflict: &SyncConflict, body: &[String]) -> Option<(Vec<usize>, Vec<usize>)> {
    let mut taken = vec![false; body.len()];
    let ours = find(&block(&conflict.ours), body, &mut taken)?;
    let theirs = find(&block(&conflict.theirs), body, &mut taken)?;
    Some((ours, theirs))
}

/// The body with `keep` made of the conflict's place, or `None` when the body no longer holds both versions.
fn resolved(conflict: &SyncConflict, body: &str, keep: Keep) -> Option<String> {
    let all = lines(body);
    let (ours, theirs) = place(conflict, &all)?;
    let (gone, added): (Vec<usize>, Vec<String>) = match keep {
        Keep::Both => return Some(body.to_owned()),
        Keep::Ours => (theirs, Vec::new()),
        Keep::Theirs => (ours, Vec::new()),
        Keep::Merged => {
            let merged = merge_words(&conflict.base, &conflict.ours, &conflict.theirs)?;
            (ours.into_iter().chain(theirs).collect(), block(&merged))
        }
    };
    let first = gone.iter().copied().min().unwrap_or(all.len());
    let mut out = String::new();
    for (i, line) in all.iter().enumerate() {
        if i == first {
            out.extend(added.iter().map(String::as_str));
        }
        if !gone.contains(&i) {
            out.push_str(line);
        }
    }
    Some(out.strip_suffix('\n').unwrap_or(&out).to_owned())
}

/// A choice made here undone by another device's opposite choice made at the same time: `before` (the body when
/// the other device's change came) held the lines kept here, `after` (the merged body) holds neither version. The
/// body with both versions back where the kept one was (as the conflict was, to be chosen again), or `None`.
pub(crate) fn restored(chosen: &SyncConflict, kept: &str, before: &str, after: &str) -> Option<String> {
    let (was, now) = (lines(before), lines(after));
    let kept_lines = block(kept);
    let other = if kept == chosen.ours {
        &chosen.theirs
    } else {
        &chosen.ours
    };
    let gone = |text: &str| find(&block(text), &now, &mut vec![false; now.len()]).is_none();
    let at = find(&kept_lines, &was, &mut vec![false; was.len()])?;
    if kept.is_empty() || !gone(kept) || !(other.is_empty() || gone(other)) {
        return None;
    }
    // Where the kept lines were: after the line that came before them, if it is still there.
    let first = at.iter().copied().min().unwrap_or(0);
    let place = match first.checked_sub(1) {
        Some(prev) => now.iter().position(|l| *l == was[prev]).map_or(0, |i| i + 1),
        None => 0,
    };
    let mut out: Vec<String> = now.clone();
    let both: Vec<String> = block(&chosen.ours).into_iter().chain(block(&chosen.theirs)).collect();
    out.splice(place..place, both);
    let text = out.concat();
    Some(text.strip_suffix('\n').unwrap_or(&text).to_owned())
}

/// The conflicts still open, oldest first (of one note when `note_id` is given). Those the note no longer holds are
/// dropped on the way.
pub fn open(ws: &Workspace, actor: &Actor, note_id: Option<&str>) -> Result<Vec<Conflict>, ConflictError> {
    let (mut recorded, bodies, chosen) = ws.read(actor, |r| {
        let mut recorded = r.sync_conflicts(note_id)?;
        let mut chosen = r.chosen_sync_conflicts(note_id)?;
        let mut bodies = std::collections::BTreeMap::new();
        for c in recorded.iter().chain(chosen.iter().map(|(c, _)| c)) {
            if !bodies.contains_key(&c.note_id) {
                match r.note(&c.note_id) {
                    Ok(note) => {
                        bodies.insert(c.note_id.clone(), (note.summary.title, note.body));
                    }
                    // A note the handle does not reach (a scoped one: a device limited to some notebooks) has no
                    // conflicts for it.
                    Err(quire_core::Error::NotFound(_)) => {}
                    Err(e) => return Err(e),
                }
            }
        }
        recorded.retain(|c| bodies.contains_key(&c.note_id));
        chosen.retain(|(c, _)| bodies.contains_key(&c.note_id));
        Ok::<_, quire_core::Error>((recorded, bodies, chosen))
    })?;
    // A choice undone (`quire undo`): both versions are back in the note, and the conflict is asked again.
    // One asked already (sync found the same place again) is not asked twice.
    let undone: Vec<SyncConflict> = chosen
        .into_iter()
        .filter(|(c, _)| place(c, &lines(&bodies[&c.note_id].1)).is_some())
        .filter(|(c, _)| {
            !recorded
                .iter()
                .any(|o| o.note_id == c.note_id && o.ours == c.ours && o.theirs == c.theirs)
        })
        .map(|(c, _)| c)
        .collect();
    if !undone.is_empty() {
        ws.write(actor, |w| {
            for c in &undone {
                w.reopen_sync_conflict(c.id)?;
            }
            Ok::<_, quire_core::Error>(())
        })?;
        recorded.extend(undone);
        recorded.sort_by_key(|c| (c.found, c.id));
    }
    // The devices' names are sync's state: read as sync (nothing is written).
    let names: std::collections::BTreeMap<String, String> = ws
        .read(&sync_actor(), |r| r.sync_devices())
        .map(|devices| devices.into_iter().map(|d| (d.id, d.name)).collect())
        .unwrap_or_default();
    let mut open = Vec::new();
    let mut settled = Vec::new();
    for c in recorded {
        let (title, body) = &bodies[&c.note_id];
        if place(&c, &lines(body)).is_none() {
            settled.push(c.id);
            continue;
        }
        open.push(Conflict {
            id: c.id,
            title: title.clone(),
            device: names.get(&c.device).cloned().unwrap_or_else(|| c.device.clone()),
            merged: merge_words(&c.base, &c.ours, &c.theirs),
            note_id: c.note_id,
            base: c.base,
            ours: c.ours,
            theirs: c.theirs,
            found: c.found,
        });
    }
    if !settled.is_empty() {
        ws.write(actor, |w| {
            for id in &settled {
                w.drop_sync_conflict(*id)?;
            }
            // A week on, another device's choice made at the same time has long arrived.
            w.drop_resolved_sync_conflicts(quire_core::Timestamp::now().0 - 7 * 24 * 3600 * 1000)?;
            Ok::<_, quire_core::Error>(())
        })?;
    }
    Ok(open)
}

/// Sync's own actor, for its state (the devices' names; a note to fold again).
fn sync_actor() -> Actor {
    Actor::Sync {
        device: "this device".into(),
    }
}

/// Keeps what the person chose of conflict `id`: the note's body is changed by `actor` (and can be undone as any
/// edit: the change set's id comes back with the conflict, `None` when nothing in the note changed), and the conflict
/// is gone. A conflict the note no longer holds is dropped and reported as not found.
pub fn resolve(
    ws: &Workspace,
    actor: &Actor,
    id: i64,
    keep: Keep,
) -> Result<(Conflict, Option<String>), ConflictError> {
    let conflict = open(ws, actor, None)?
        .into_iter()
        .find(|c| c.id == id)
        .ok_or(ConflictError::NotFound(id))?;
    if keep == Keep::Merged && conflict.merged.is_none() {
        return Err(ConflictError::NoMerge);
    }
    // Keeping both changes no text: sync's own write records the choice and marks the note for sync at once.
    let writer = if keep == Keep::Both {
        sync_actor()
    } else {
        actor.clone()
    };
    let change_set = ws.write(&writer, |w| {
        let recorded = w.sync_conflict(id)?.ok_or(ConflictError::NotFound(id))?;
        let body = w.note(&recorded.note_id)?.body;
        let new = resolved(&recorded, &body, keep).ok_or(ConflictError::NotFound(id))?;
        let mut change_set = None;
        if new != body {
            w.update_note(
                &recorded.note_id,
                NoteUpdate {
                    body: Some(new),
                    ..NoteUpdate::default()
                },
            )?;
            change_set = w.change_set_id().map(str::to_owned);
        }
        let kept = match keep {
            Keep::Both => None,
            Keep::Ours => Some(recorded.ours.clone()),
            Keep::Theirs => Some(recorded.theirs.clone()),
            Keep::Merged => merge_words(&recorded.base, &recorded.ours, &recorded.theirs),
        };
        let now = quire_core::Timestamp::now().0;
        match kept {
            Some(kept) => w.resolve_sync_conflict(id, &kept, now)?,
            // The text does not change: sync tells the other devices (see `NoteDoc::settle`).
            None => {
                w.mark_sync_dirty(&recorded.note_id)?;
                w.keep_both_sync_conflict(id, now)?
            }
        };
        Ok::<_, ConflictError>(change_set)
    })?;
    Ok((conflict, change_set))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conflict(ours: &str, theirs: &str) -> SyncConflict {
        SyncConflict {
            id: 1,
            note_id: "n".into(),
            device: "d".into(),
            base: "Eggs\n".into(),
            ours: ours.into(),
            theirs: theirs.into(),
            found: 0,
        }
    }

    #[test]
    fn each_choice_makes_the_body_it_names() {
        let c = conflict("Eggs x12 (desk)\n", "Brown eggs (laptop)\n");
        let body = "Milk\nBrown eggs (laptop)\nEggs x12 (desk)\nBread";
        assert_eq!(resolved(&c, body, Keep::Ours).unwrap(), "Milk\nEggs x12 (desk)\nBread");
        assert_eq!(
            resolved(&c, body, Keep::Theirs).unwrap(),
            "Milk\nBrown eggs (laptop)\nBread"
        );
        assert_eq!(resolved(&c, body, Keep::Both).unwrap(), body);
        assert_eq!(
            resolved(&c, body, Keep::Merged),
            None,
            "the same words changed: no merge"
        );
        assert_eq!(
            resolved(&c, "Milk\nEggs x12 (desk)\nBread", Keep::Ours),
            None,
            "settled"
        );
        let last = "Milk\nEggs x12 (desk)\nBrown eggs (laptop)";
        assert_eq!(resolved(&c, last, Keep::Theirs).unwrap(), "Milk\nBrown eggs (laptop)");
    }

    #[test]
    fn a_removal_and_a_change_twice_made_resolve_too() {
        let removed = conflict("", "Rye eggs\n");
        assert_eq!(
            resolved(&removed, "Milk\nRye eggs\nTea", Keep::Ours).unwrap(),
            "Milk\nTea"
        );
        assert_eq!(
            resolved(&removed, "Milk\nRye eggs\nTea", Keep::Theirs).unwrap(),
            "Milk\nRye eggs\nTea"
        );
        let twice = conflict("Eggs!\n", "Eggs!\n");
        assert_eq!(resolved(&twice, "Eggs!\nEggs!\nTea", Keep::Ours).unwrap(), "Eggs!\nTea");
        assert_eq!(resolved(&twice, "Eggs!\nTea", Keep::Ours), None);
    }

    /// Found in use: with three devices a fourth version landed between two lines of a recorded one, and the
    /// conflict vanished while all three versions stayed in the note.
    #[test]
    fn a_version_whose_lines_are_apart_is_still_found() {
        let c = conflict("Eggs C\nEggs A\n", "Eggs B\n");
        let body = "Milk\nEggs A\nEggs B\nEggs C\nBread";
        assert_eq!(resolved(&c, body, Keep::Theirs).unwrap(), "Milk\nEggs B\nBread");
        assert_eq!(resolved(&c, body, Keep::Ours).unwrap(), "Milk\nEggs A\nEggs C\nBread");
    }

    #[test]
    fn the_merge_by_words_replaces_both() {
        let mut c = conflict("White eggs x12\n", "Brown eggs x6\n");
        c.base = "Brown eggs x12\n".into();
        assert_eq!(
            resolved(&c, "White eggs x12\nBrown eggs x6\nBread", Keep::Merged).unwrap(),
            "White eggs x6\nBread"
        );
    }
}
