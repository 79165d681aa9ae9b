//! `quire notebook add|rename|move|delete` and `quire note move`: reshaping the notebook tree from the command line.

use anyhow::bail;
use quire_core::{Actor, Notebook, ROOT_NOTEBOOK_ID, Workspace, Writer};
use quire_tools::types::NotebookInfo;
use serde::Serialize;

use crate::cli::{Destination, NotebookMoveArgs};
use crate::lookup::{NoSuchNotebook, find_notebook_in};
use crate::output::{self, Output, shell_word};
use crate::unlock::Unlocker;

/// `quire notebook add PATH`: creates the notebooks of the path that are missing; refuses a path that exists.
pub(crate) fn add(out: &Output, ws: &Workspace, path: &str) -> anyhow::Result<()> {
    if path.split('/').all(|part| part.trim().is_empty()) {
        bail!("give the new notebook's path, such as Work/Projects");
    }
    let (created, info) = ws.write(&Actor::User, |w| {
        let made = w.create_notebook_path(Some(ROOT_NOTEBOOK_ID), path)?;
        if made.created.is_empty() {
            bail!(
                "the notebook '{}' exists already (see `quire notebook list`); to give it another title, use `quire \
                 notebook rename`",
                w.notebook_path_text(&made.notebook.id)?
            );
        }
        let last = made.notebook.id.clone();
        let created = made.created;
        let paths = created
            .iter()
            .map(|nb| Ok((nb.id.clone(), w.notebook_path_text(&nb.id)?)))
            .collect::<anyhow::Result<Vec<(String, String)>>>()?;
        Ok::<_, anyhow::Error>((paths, notebook_info(w, &last)?))
    })?;
    if out.json {
        #[derive(Serialize)]
        struct Added {
            #[serde(flatten)]
            notebook: NotebookInfo,
            /// The paths of the notebooks created, outermost first.
            created: Vec<String>,
        }
        let created = created.into_iter().map(|(_, path)| path).collect();
        return output::json_value(&Added {
            notebook: info,
            created,
        });
    }
    let mut text = String::new();
    for (id, path) in &created {
        text.push_str(&format!("Added notebook {path}  ({id})\n"));
    }
    output::text(&text)
}

/// `quire notebook rename PATH NEW_TITLE`.
pub(crate) fn rename(out: &Output, ws: &Workspace, path: &str, new_title: &str) -> anyhow::Result<()> {
    if new_title.contains('/') {
        bail!(
            "a notebook title cannot contain '/', which separates the notebooks of a path; to put the notebook inside \
             another one, use `quire notebook move`"
        );
    }
    let (before, change_set, info) = ws.write(&Actor::User, |w| {
        let notebook = existing(w, path, "renamed")?;
        let before = w.notebook_path_text(&notebook.id)?;
        w.rename_notebook(&notebook.id, new_title).map_err(title_taken)?;
        Ok::<_, anyhow::Error>((before, change_set(w), notebook_info(w, &notebook.id)?))
    })?;
    if out.json {
        return output::json_value(&info);
    }
    let after = &info.path;
    let text = match change_set {
        Some(id) => format!("Renamed notebook {before} to {after}\n{}", undo_hint(&id)),
        None => format!("The notebook {before} already has that title; nothing changed.\n"),
    };
    output::text(&text)
}

/// `quire notebook move PATH --to PARENT` (or `--top-level`). Moving a notebook out of a protected one unseals its
/// notes: that asks for the passphrase.
pub(crate) fn move_notebook(
    out: &Output,
    ws: &Workspace,
    keys: &Unlocker,
    args: &NotebookMoveArgs,
) -> anyhow::Result<()> {
    let (before, change_set, info) = keys.write(ws, |w| {
        let notebook = existing(w, &args.path, "moved")?;
        let parent = destination(w, &args.to)?;
        let before = w.notebook_path_text(&notebook.id)?;
        w.move_notebook(&notebook.id, &parent).map_err(title_taken)?;
        Ok::<_, anyhow::Error>((before, change_set(w), notebook_info(w, &notebook.id)?))
    })?;
    if out.json {
        return output::json_value(&info);
    }
    let after = if info.parent_id == ROOT_NOTEBOOK_ID {
        "the top level".to_owned()
    } else {
        info.path.clone()
    };
    let text = match change_set {
        Some(id) => format!("Moved notebook {before} to {after}\n{}", undo_hint(&id)),
        None => format!("The notebook {before} is there already; nothing changed.\n"),
    };
    output::text(&text)
}

/// `quire notebook delete PATH`: only an empty notebook, as quire-core allows.
pub(crate) fn delete(out: &Output, ws: &Workspace, path: &str) -> anyhow::Result<()> {
    let (change_set, info) = ws.write(&Actor::User, |w| {
        let notebook = existing(w, path, "deleted")?;
        let info = notebook_info(w, &notebook.id)?;
        match w.delete_notebook(&notebook.id) {
            Ok(()) => {}
            // Core says what the notebook holds; the command line says how to see and move it.
            Err(quire_core::Error::NotebookNotEmpty { notes, notebooks }) => bail!(
                "Notebook is not empty: it holds {} (trashed ones included) and {}. `quire note list --notebook {}` \
                 lists its notes (`quire note list --trash` those in the trash), `quire note move ID --to NOTEBOOK` \
                 and `quire notebook move` move things out. Nothing was deleted.",
                output::plural(notes, "note"),
                output::plural(notebooks, "notebook"),
                shell_word(&info.path)
            ),
            Err(e) => return Err(e.into()),
        }
        Ok::<_, anyhow::Error>((change_set(w), info))
    })?;
    if out.json {
        #[derive(Serialize)]
        struct Deleted {
            #[serde(flatten)]
            notebook: NotebookInfo,
            deleted: bool,
        }
        return output::json_value(&Deleted {
            notebook: info,
            deleted: true,
        });
    }
    let mut text = format!("Deleted notebook {}\n", info.path);
    if let Some(id) = change_set {
        text.push_str(&undo_hint(&id));
    }
    output::text(&text)
}

/// `quire note move ID --to NOTEBOOK` (or `--top-level`). Moving a sealed note out of a protected notebook
/// unseals it: that asks for the passphrase.
pub(crate) fn move_note(
    out: &Output,
    ws: &Workspace,
    keys: &Unlocker,
    id: &str,
    to: &Destination,
) -> anyhow::Result<()> {
    let (title, before, after, change_set) = keys.write(ws, |w| {
        let note = w.note_summary(id)?;
        let target = destination(w, to)?;
        let before = place(w, &note.notebook_id)?;
        let moved = w.move_note(id, &target)?;
        let after = place(w, &moved.notebook_id)?;
        Ok((note.title, before, after, change_set(w)))
    })?;
    if out.json {
        return output::print_changed_note_json(ws, keys, id);
    }
    let text = match change_set {
        Some(change_set) => format!(
            "Moved note {id} \"{title}\" from {before} to {after}\n{}",
            undo_hint(&change_set)
        ),
        None => format!("The note {id} \"{title}\" is in {after} already; nothing changed.\n"),
    };
    output::text(&text)
}

/// `quire notebook protect|unprotect PATH`: everything inside it, now and later. Protecting needs no passphrase;
/// unprotecting a notebook whose notes are sealed does, to decrypt them.
pub(crate) fn set_protected(
    out: &Output,
    ws: &Workspace,
    keys: &Unlocker,
    path: &str,
    protected: bool,
) -> anyhow::Result<()> {
    let (change_set, info, notes) = keys.write(ws, |w| {
        let notebook = existing(w, path, if protected { "protected" } else { "unprotected" })?;
        w.set_notebook_protected(&notebook.id, protected)?;
        let inside = w.notebook_subtree(&notebook.id)?;
        let counts = w.notebook_note_counts()?;
        let notes: u64 = inside.iter().filter_map(|id| counts.get(id)).sum();
        Ok((change_set(w), notebook_info(w, &notebook.id)?, notes))
    })?;
    if protected {
        // Unsent sync batches lose what they said of its notes in plain now, not at the next sync.
        quire_sync::Device::scrub_outbox(ws)?;
    }
    if out.json {
        return output::json_value(&info);
    }
    let sealing = ws.lock_is_set()?;
    let notes = output::plural(notes, "note");
    let path = &info.path;
    let text = match (change_set, protected, sealing) {
        (None, true, _) => format!("The notebook {path} is protected already; nothing changed.\n"),
        (None, false, _) => format!("The notebook {path} is not protected; nothing changed.\n"),
        (Some(id), true, true) => format!(
            "Protected notebook {path} and everything in it ({notes} now): AI tools see their titles only, and \
             their text is sealed: it opens only with the passphrase.\n{}",
            undo_hint(&id)
        ),
        (Some(id), true, false) => format!(
            "Protected notebook {path} and everything in it ({notes} now): AI tools see their titles only. Their \
             text is not encrypted until a passphrase is set: `quire lock init` seals every protected note.\n{}",
            undo_hint(&id)
        ),
        (Some(id), false, _) => format!(
            "Notebook {path} ({notes}) is not protected any more{}.\n{}",
            if info.is_protected {
                ", but a notebook that holds it still is"
            } else {
                ""
            },
            undo_hint(&id)
        ),
    };
    output::text(&text)
}

/// The notebook a command changes, named by title or path; the top level itself is not one.
fn existing(w: &Writer<'_>, path: &str, done: &str) -> anyhow::Result<Notebook> {
    let id = find_notebook_in(w, path)?;
    if id == ROOT_NOTEBOOK_ID {
        bail!("name a notebook by its title or path, such as Work/Projects; the top level cannot be {done}");
    }
    Ok(w.notebook(&id)?)
}

/// The notebook `--to` names (which must exist), or the top level with `--top-level`.
fn destination(w: &Writer<'_>, to: &Destination) -> anyhow::Result<String> {
    let Some(name) = &to.to else {
        return Ok(ROOT_NOTEBOOK_ID.to_owned());
    };
    find_notebook_in(w, name).map_err(|e| match e.downcast_ref::<NoSuchNotebook>() {
        Some(missing) => anyhow::anyhow!(
            "{missing}; create it first with `quire notebook add {}`, or use --top-level",
            shell_word(&missing.path)
        ),
        None => e,
    })
}

/// quire-core refuses a second notebook of one title in a parent; the command line says how to get past it.
fn title_taken(e: quire_core::Error) -> anyhow::Error {
    match e {
        quire_core::Error::NotebookTitleTaken(taken) => anyhow::anyhow!(
            "{} holds a notebook titled '{}' already, so both would have the path '{}'; rename one of them first \
             (`quire notebook rename`)",
            if taken.parent_path.is_empty() {
                "the top level"
            } else {
                &taken.parent_path
            },
            taken.title,
            taken.path
        ),
        other => other.into(),
    }
}

/// A notebook as the notebook tools describe it (`create_notebook`, `move_notebook`: the same type).
fn notebook_info(w: &Writer<'_>, id: &str) -> anyhow::Result<NotebookInfo> {
    Ok(NotebookInfo::new(&w.notebook(id)?, w.notebook_path_text(id)?))
}

/// Where something is, for a sentence: `Work/Projects`, or `the top level`.
fn place(w: &Writer<'_>, notebook_id: &str) -> anyhow::Result<String> {
    Ok(if notebook_id == ROOT_NOTEBOOK_ID {
        "the top level".to_owned()
    } else {
        w.notebook_path_text(notebook_id)?
    })
}

fn change_set(w: &Writer<'_>) -> Option<String> {
    w.change_set_id().map(str::to_owned)
}

fn undo_hint(change_set: &str) -> String {
    format!("to take it back: quire undo {change_set}\n")
}
