//! The commands: each opens the workspace, calls quire-core, and hands the result to `output`.

use std::io::Read;
use std::path::PathBuf;

use anyhow::{Context, bail};
use quire_core::{Actor, Error, NewNote, NewNotebook, Page, ROOT_NOTEBOOK_ID, SearchOptions, Workspace};

use crate::cli::{Cli, Command, NoteAddArgs, NoteCommand, NotebookCommand, SearchArgs};
use crate::output::{self, Output};

const WELCOME: &str = include_str!("../assets/welcome.md");

pub(crate) fn run(cli: Cli) -> anyhow::Result<()> {
    let out = Output { json: cli.json };
    let ws = open_workspace(cli.workspace)?;
    match cli.command {
        None => output::status(&out, &ws),
        Some(Command::Note(NoteCommand::Add(args))) => note_add(&out, &ws, args),
        Some(Command::Note(NoteCommand::Show { id })) => {
            let (note, path) = ws.read(&Actor::User, |r| {
                let note = r.note(&id)?;
                let path = r.notebook_path(&note.summary.notebook_id)?;
                Ok::<_, Error>((note, path))
            })?;
            output::note(&out, &note, &path)
        }
        Some(Command::Notebook(NotebookCommand::List)) => {
            let (notebooks, counts) = ws.read(&Actor::User, |r| {
                Ok::<_, Error>((r.notebooks()?, r.notebook_note_counts()?))
            })?;
            output::notebook_tree(&out, &notebooks, &counts)
        }
        Some(Command::Search(args)) => search(&out, &ws, args),
    }
}

/// Opens the workspace named on the command line, or the default one in the user's data directory.
/// A default workspace that does not exist yet is created with a welcome note.
fn open_workspace(path: Option<PathBuf>) -> anyhow::Result<Workspace> {
    let (path, is_default) = match path {
        Some(path) => (path, false),
        None => {
            let dir = dirs::data_dir()
                .context("cannot find your data directory; pass --workspace PATH or set QUIRE_WORKSPACE")?;
            (dir.join("quire").join("workspace.quire"), true)
        }
    };
    let is_new = !path.exists();
    let ws = Workspace::open(&path)?;
    if is_new {
        tracing::info!(path = %path.display(), "created a new workspace");
        if is_default {
            ws.write(&Actor::User, |w| {
                w.create_note(NewNote {
                    tags: vec!["quire".into()],
                    ..NewNote::new("Welcome to quire", WELCOME)
                })
            })?;
        }
    }
    Ok(ws)
}

fn note_add(out: &Output, ws: &Workspace, args: NoteAddArgs) -> anyhow::Result<()> {
    let body = match (&args.body, &args.body_file) {
        (Some(body), _) => body.clone(),
        (None, Some(file)) if file.as_os_str() == "-" => {
            let mut body = String::new();
            std::io::stdin()
                .read_to_string(&mut body)
                .context("cannot read the body from standard input")?;
            body
        }
        (None, Some(file)) => {
            std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?
        }
        (None, None) => String::new(),
    };
    let (note, path) = ws.write(&Actor::User, |w| {
        let notebook_id = match &args.notebook {
            Some(name) => Some(resolve_notebook(w, name)?),
            None => None,
        };
        let note = w.create_note(NewNote {
            notebook_id,
            is_todo: args.todo,
            tags: args.tags.clone(),
            ..NewNote::new(args.title.clone(), body)
        })?;
        let path = w.notebook_path(&note.summary.notebook_id)?;
        Ok::<_, anyhow::Error>((note, path))
    })?;
    output::note_added(out, &note, &path)
}

/// Finds a notebook by title or by `Parent/Child` path (ignoring case), creating what is missing.
fn resolve_notebook(w: &mut quire_core::Writer<'_>, name: &str) -> anyhow::Result<String> {
    let parts: Vec<&str> = name.split('/').map(str::trim).filter(|p| !p.is_empty()).collect();
    if parts.is_empty() {
        bail!("the notebook name is empty");
    }
    if let [title] = parts.as_slice() {
        let found = w.notebooks_titled(title)?;
        match found.as_slice() {
            [one] => return Ok(one.id.clone()),
            [] => {}
            several => bail!(
                "{} notebooks are titled '{title}'; give its path instead, for example '{}'",
                several.len(),
                path_of(w, &several[0].id)?
            ),
        }
    }
    let mut parent = ROOT_NOTEBOOK_ID.to_owned();
    let notebooks = w.notebooks()?;
    for part in parts {
        let existing = notebooks
            .iter()
            .find(|nb| nb.parent_id.as_deref() == Some(parent.as_str()) && nb.title.eq_ignore_ascii_case(part));
        parent = match existing {
            Some(nb) => nb.id.clone(),
            None => {
                let created = w.create_notebook(NewNotebook {
                    title: part.to_owned(),
                    parent_id: Some(parent.clone()),
                    icon: None,
                })?;
                tracing::info!(notebook = %created.title, "created notebook");
                created.id
            }
        };
    }
    Ok(parent)
}

fn path_of(r: &quire_core::Reader<'_>, id: &str) -> anyhow::Result<String> {
    Ok(output::path_text(&r.notebook_path(id)?))
}

fn search(out: &Output, ws: &Workspace, args: SearchArgs) -> anyhow::Result<()> {
    let query = args.query.join(" ");
    let options = SearchOptions {
        page: Page {
            offset: args.offset,
            limit: args.limit,
        },
        include_trashed: args.trashed,
    };
    let (results, notebooks) = ws.read(&Actor::User, |r| {
        Ok::<_, Error>((r.search(&query, options)?, r.notebooks()?))
    })?;
    output::search_results(out, &results, &notebooks)
}
