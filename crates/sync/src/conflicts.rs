//! The conflicts sync found (issue 46): places in a note where another device changed the same lines as this one
//! at the same time. Both versions are in the note, whole, one after the other; each conflict says which they are
//! until the person keeps one, the other, both, or (when the two changed different words) the merge by words.
//!
//! A conflict whose versions the note no longer holds as they were (the person edited them, or chose on another
//! device and that arrived) is settled: [`open`] drops it.
//!
//! A protected note's conflicts are sealed with it (quire-core keeps them so), and so is a text kept beside a note
//! that another device sealed without this device's edits (an aside, [`SyncConflict::aside`]). This crate never
//! holds the unlocked key: [`open_as`] and [`resolve_as`] take a [`Person`], through which the app and the web
//! read and write with it. Without it, such conflicts are listed by note only ([`Conflict::locked`]); with it, an
//! aside is merged into the note (by words, else by lines with both versions kept, as an offline save is) and the
//! places both changed become conflicts like any other.

use quire_core::conflicts::SyncConflict;
use quire_core::{Actor, NoteUpdate, Reader, Workspace, Writer};

use crate::doc::{merge_body, merge_words, merged_lines};

/// How the person's reads and writes reach the workspace: as the user ([`AsUser`]), or with the unlocked key (the
/// app and the web, which may hold it, implement this), so that a sealed note's conflicts open.
pub trait Person {
    /// Reads as the person.
    fn read<T>(&self, f: &mut dyn FnMut(&Reader<'_>) -> quire_core::Result<T>) -> quire_core::Result<T>;
    /// Writes as the person, in one transaction.
    fn write<T>(&self, f: &mut dyn FnMut(&mut Writer<'_>) -> Result<T, ConflictError>) -> Result<T, ConflictError>;

    /// Whether this is the person (the user), who may merge the texts kept beside notes into them as the conflicts
    /// are listed; sync's own count for its status only reads.
    fn is_person(&self) -> bool {
        true
    }
}

/// The person without the unlocked key (or any other actor): a sealed note's conflicts stay closed.
pub struct AsUser<'a> {
    /// The workspace.
    pub ws: &'a Workspace,
    /// Who reads and writes.
    pub actor: &'a Actor,
}

impl Person for AsUser<'_> {
    fn read<T>(&self, f: &mut dyn FnMut(&Reader<'_>) -> quire_core::Result<T>) -> quire_core::Result<T> {
        self.ws.read(self.actor, |r| f(r))
    }

    fn write<T>(&self, f: &mut dyn FnMut(&mut Writer<'_>) -> Result<T, ConflictError>) -> Result<T, ConflictError> {
        self.ws.write(self.actor, |w| f(w))
    }

    fn is_person(&self) -> bool {
        self.actor.is_user()
    }
}

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
    /// The note is sealed and this was read without the unlocked key: the texts are empty, and choosing needs it.
    pub locked: bool,
    /// Edits made here that the note, sealed on `device` without them, lacks (read without the key: with it they
    /// are merged in as the conflicts are listed).
    pub aside: bool,
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
    /// The conflict is in a sealed note, and the passphrase was not given.
    #[error("conflict {id} is in “{title}”, which is sealed: its versions open with the passphrase")]
    Locked {
        /// The conflict.
        id: i64,
        /// The note's title.
        title: String,
    },
    /// Two versions could not be merged.
    #[error("the versions of “{0}” could not be merged: {1}")]
    Merge(String, String),
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

/// Where the conflict's place is in `body` (the indexes of its lines), or `None` when a line of it is gone: the
/// conflict is settled (a version was kept, or the place changed by hand). The place holds each version's own
/// lines and the base lines neither removed ([`merged_lines`]): a run of them where there is one, else each line
/// where it is (a third device's version can land between two lines of another).
fn place(conflict: &SyncConflict, body: &[String]) -> Option<Vec<usize>> {
    let mut wanted = merged_lines(&conflict.base, &conflict.ours, &conflict.theirs);
    if wanted.is_empty() {
        return None;
    }
    wanted.sort();
    let run = (0..=body.len().saturating_sub(wanted.len()))
        .filter(|_| wanted.len() <= body.len())
        .find(|&i| {
            let mut here = body[i..i + wanted.len()].to_vec();
            here.sort();
            here == wanted
        });
    if let Some(i) = run {
        return Some((i..i + wanted.len()).collect());
    }
    let mut taken = vec![false; body.len()];
    find(&wanted, body, &mut taken)
}

/// The body with `keep` made of the conflict's place, or `None` when the body no longer holds it.
fn resolved(conflict: &SyncConflict, body: &str, keep: Keep) -> Option<String> {
    let all = lines(body);
    let gone = place(conflict, &all)?;
    let added = match keep {
        Keep::Both => return Some(body.to_owned()),
        Keep::Ours => block(&conflict.ours),
        Keep::Theirs => block(&conflict.theirs),
        Keep::Merged => block(&merge_words(&conflict.base, &conflict.ours, &conflict.theirs)?),
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
    open_as(ws, &AsUser { ws, actor }, note_id)
}

/// [`open`] through `person`: with the unlocked key, a sealed note's conflicts open, and the texts kept beside
/// sealed notes are merged into them first (the places both changed are then conflicts in the list).
pub fn open_as(ws: &Workspace, person: &impl Person, note_id: Option<&str>) -> Result<Vec<Conflict>, ConflictError> {
    merge_asides(person, note_id)?;
    let (mut recorded, bodies, chosen) = person.read(&mut |r| {
        let mut recorded = r.sync_conflicts(note_id)?;
        let mut chosen = r.chosen_sync_conflicts(note_id)?;
        let mut bodies = std::collections::BTreeMap::new();
        for c in recorded.iter().chain(chosen.iter().map(|(c, _)| c)) {
            if !bodies.contains_key(&c.note_id) {
                match r.note(&c.note_id) {
                    Ok(note) => {
                        bodies.insert(c.note_id.clone(), (note.summary.title, Some(note.body)));
                    }
                    // Sealed, and this view has no key (or is not the person's: sync's own count for its status):
                    // listed by its title, texts closed.
                    Err(quire_core::Error::Locked { .. } | quire_core::Error::ProtectedContent) => {
                        let title = r.note_summary(&c.note_id)?.title;
                        bodies.insert(c.note_id.clone(), (title, None));
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
        Ok((recorded, bodies, chosen))
    })?;
    // A choice undone (`quire undo`): both versions are back in the note, and the conflict is asked again.
    // One asked already (sync found the same place again) is not asked twice.
    let undone: Vec<SyncConflict> = chosen
        .into_iter()
        .filter(|(c, _)| {
            bodies[&c.note_id]
                .1
                .as_ref()
                .is_some_and(|body| place(c, &lines(body)).is_some())
        })
        .filter(|(c, _)| {
            !recorded
                .iter()
                .any(|o| o.note_id == c.note_id && o.ours == c.ours && o.theirs == c.theirs)
        })
        .map(|(c, _)| c)
        .collect();
    if !undone.is_empty() {
        person.write(&mut |w| {
            for c in &undone {
                w.reopen_sync_conflict(c.id)?;
            }
            Ok(())
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
        let locked = body.is_none() || (c.sealed && c.ours.is_empty() && c.theirs.is_empty() && c.base.is_empty());
        // An edit kept beside the note is not in it: it waits for the person's look, which merges it.
        if let Some(body) = body
            && !locked
            && !c.aside
            && place(&c, &lines(body)).is_none()
        {
            settled.push(c.id);
            continue;
        }
        open.push(Conflict {
            id: c.id,
            title: title.clone(),
            device: names.get(&c.device).cloned().unwrap_or_else(|| c.device.clone()),
            merged: if locked {
                None
            } else {
                merge_words(&c.base, &c.ours, &c.theirs)
            },
            note_id: c.note_id,
            base: c.base,
            ours: c.ours,
            theirs: c.theirs,
            found: c.found,
            locked,
            aside: c.aside,
        });
    }
    if !settled.is_empty() {
        person.write(&mut |w| {
            for id in &settled {
                w.drop_sync_conflict(*id)?;
            }
            // A week on, another device's choice made at the same time has long arrived.
            w.drop_resolved_sync_conflicts(quire_core::Timestamp::now().0 - 7 * 24 * 3600 * 1000)?;
            Ok(())
        })?;
    }
    Ok(open)
}

/// Merges the texts kept beside sealed notes into them, when `person` opens them (nothing otherwise): each in one
/// write of the person's (an edit, undone as any), the places both changed recorded as conflicts of the note.
fn merge_asides(person: &impl Person, note_id: Option<&str>) -> Result<(), ConflictError> {
    // Found in review: sync's status merged them as sync, and failed where a merge had a conflict to record.
    if !person.is_person() {
        return Ok(());
    }
    let asides: Vec<SyncConflict> = person
        .read(&mut |r| r.sync_conflicts(note_id))?
        .into_iter()
        .filter(|c| c.aside && !(c.base.is_empty() && c.ours.is_empty()))
        .collect();
    for aside in asides {
        person.write(&mut |w| {
            let note = match w.note(&aside.note_id) {
                Ok(note) => note,
                Err(quire_core::Error::Locked { .. } | quire_core::Error::NotFound(_)) => return Ok(()),
                Err(e) => return Err(e.into()),
            };
            // This device's text first, as sync keeps a conflict's versions.
            let (mut merged, mut clashes) = merge_body(&aside.base, &aside.ours, &note.body)
                .map_err(|e| ConflictError::Merge(note.summary.title.clone(), e.to_string()))?;
            // A choice made here that the merge undid along with another device's opposite choice (a sealed note's
            // choices do not travel in its document: the device whose body lost puts both versions back, to be
            // chosen again; found in review).
            for (chosen, kept) in w.chosen_sync_conflicts(Some(&aside.note_id))? {
                if let Some(both) = restored(&chosen, &kept, &aside.ours, &merged) {
                    merged = both;
                    w.drop_sync_conflict(chosen.id)?;
                    clashes.push(crate::doc::Clash {
                        base: chosen.base.clone(),
                        ours: chosen.ours.clone(),
                        theirs: chosen.theirs.clone(),
                    });
                }
            }
            if merged != note.body {
                w.update_note(
                    &aside.note_id,
                    NoteUpdate {
                        body: Some(merged.clone()),
                        ..NoteUpdate::default()
                    },
                )?;
            }
            w.drop_sync_conflict(aside.id)?;
            for clash in &clashes {
                w.record_offline_conflict(&SyncConflict::new(
                    &aside.note_id,
                    &aside.device,
                    &clash.base,
                    &clash.ours,
                    &clash.theirs,
                    aside.found,
                ))?;
            }
            Ok(())
        })?;
    }
    Ok(())
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
    resolve_as(ws, &AsUser { ws, actor }, id, keep)
}

/// [`resolve`] through `person`: a sealed note's conflict needs the unlocked key ([`ConflictError::Locked`]
/// without it).
pub fn resolve_as(
    ws: &Workspace,
    person: &impl Person,
    id: i64,
    keep: Keep,
) -> Result<(Conflict, Option<String>), ConflictError> {
    let conflict = open_as(ws, person, None)?
        .into_iter()
        .find(|c| c.id == id)
        .ok_or(ConflictError::NotFound(id))?;
    if conflict.locked {
        return Err(ConflictError::Locked {
            id,
            title: conflict.title,
        });
    }
    if keep == Keep::Merged && conflict.merged.is_none() {
        return Err(ConflictError::NoMerge);
    }
    let mut choose = |w: &mut Writer<'_>| {
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
            // The text does not change: sync tells the other devices (see `NoteDoc::settle`); a sealed note's
            // document carries no plain key, so its choice stays here.
            None => {
                if !recorded.sealed {
                    w.mark_sync_dirty(&recorded.note_id)?;
                }
                w.keep_both_sync_conflict(id, now)?
            }
        };
        Ok::<_, ConflictError>(change_set)
    };
    // Keeping both of a plain note's conflict changes no text: sync's own write records the choice and marks the
    // note for sync at once.
    let change_set = if keep == Keep::Both && !conflict_is_sealed(person, id)? {
        ws.write(&sync_actor(), choose)?
    } else {
        person.write(&mut choose)?
    };
    Ok((conflict, change_set))
}

fn conflict_is_sealed(person: &impl Person, id: i64) -> Result<bool, ConflictError> {
    Ok(person.read(&mut |r| r.sync_conflict(id))?.is_some_and(|c| c.sealed))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conflict(ours: &str, theirs: &str) -> SyncConflict {
        let mut c = SyncConflict::new("n", "d", "Eggs\n", ours, theirs, 0);
        c.id = 1;
        c
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
        // The version kept is its text as that device had it, where the place starts.
        assert_eq!(resolved(&c, body, Keep::Ours).unwrap(), "Milk\nEggs C\nEggs A\nBread");
    }

    /// Found with three devices: two changes that overlap by one line (B and C changed here, C and D there) make
    /// texts of three lines on each side, and the merged body holds neither whole (`B1 C1 C2 D2`). The conflict was
    /// taken for settled at once and never asked. Its place is the lines both versions added: found, and each choice
    /// makes that version's text.
    #[test]
    fn changes_that_overlap_by_one_line_are_found_and_each_choice_is_whole() {
        let mut c = conflict("B1\nC1\nD\n", "B\nC2\nD2\n");
        c.base = "B\nC\nD\n".into();
        let body = "A\nB1\nC1\nC2\nD2\nE";
        assert_eq!(resolved(&c, body, Keep::Ours).unwrap(), "A\nB1\nC1\nD\nE");
        assert_eq!(resolved(&c, body, Keep::Theirs).unwrap(), "A\nB\nC2\nD2\nE");
        assert_eq!(resolved(&c, body, Keep::Both).unwrap(), body);
        assert_eq!(resolved(&c, "A\nB1\nC1\nD\nE", Keep::Theirs), None, "settled");
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
