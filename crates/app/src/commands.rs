//! The commands: each opens the workspace, calls quire-core, and hands the result to `output`.

use std::io::Read;
use std::process::ExitCode;

use anyhow::Context;
use quire_core::{Actor, Error, NewNote, Page, ROOT_NOTEBOOK_ID, SearchOptions, Workspace};
use quire_host::workspace::Opening;
use quire_tools::builtin::{ListNotebooks, ListNotes, SearchNotes};
use quire_tools::notes::{list_notes, search_notes};
use quire_tools::{ToolActor, ToolRegistry};

use crate::cli::{
    Cli, Command, IndexCommand, McpArgs, McpCommand, NoteAddArgs, NoteCommand, NotebookCommand, SearchArgs,
    ToolsCommand,
};
use crate::lookup::find_notebook;
use crate::output::{self, Output, print_changed_note_json, print_note_json};
use crate::unlock::Unlocker;

pub(crate) fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let Cli {
        workspace,
        json,
        passphrase_stdin,
        command,
    } = cli;
    let out = Output { json };
    // Asks for the passphrase only when a command meets a sealed note, and then once.
    let keys = Unlocker::new(passphrase_stdin);
    // One dispatch. The workspace is opened by the commands that use one (`quire model` and printing the MCP token
    // need none), the way the command needs it.
    let how = opening(command.as_ref());
    let ws = || quire_host::workspace::open(workspace.clone(), how);
    match command {
        Some(Command::Model(command)) => crate::model::run(command, &out),
        Some(Command::Mcp(McpArgs {
            command: Some(McpCommand::Token { rotate, action: None }),
            ..
        })) => crate::mcp::token_command(rotate),
        Some(Command::Mcp(McpArgs {
            command: Some(McpCommand::Token {
                action: Some(action), ..
            }),
            ..
        })) => crate::mcp::token_action(&ws()?, action, json),
        Some(Command::Mcp(args)) => crate::mcp::run(ws()?, args),
        Some(Command::Serve(args)) => crate::serve::run(ws()?, args),
        Some(Command::Chat(args)) => {
            return match args.agent {
                Some(agent) => crate::agents::chat(&ws()?, agent, args.message, json),
                None => crate::chat::run(ws()?, args, json),
            };
        }
        Some(Command::Plugin(command)) => return crate::plugins::run(ws, command, json),
        Some(Command::Review(command)) => crate::review::run(&out, &ws()?, command),
        Some(Command::Device(command)) => crate::device::run(&out, ws, command),
        Some(Command::Agent(command)) => crate::agents::run(&out, ws, command),
        Some(Command::Automation(command)) => return crate::automations::run(&out, ws, command),
        Some(Command::Tools(ToolsCommand::Call { name, args })) => return tools_call(&ws()?, &name, &args),
        None => output::status(&out, &ws()?),
        Some(Command::Note(NoteCommand::Add(args))) => note_add(&out, &ws()?, &keys, args),
        Some(Command::Note(NoteCommand::List(args))) => note_list(&out, &ws()?, &args),
        Some(Command::Note(NoteCommand::Show { id })) => {
            let ws = ws()?;
            if out.json {
                return print_note_json(&ws, &keys, &id).map(|()| ExitCode::SUCCESS);
            }
            let (note, path, attributes) = keys.read(&ws, |r| {
                let note = r.note(&id)?;
                let path = r.notebook_path_text(&note.summary.notebook_id)?;
                Ok((note, path, r.attributes(&id)?))
            })?;
            output::note(&out, &note, &path, &attributes)?;
            // Both versions of a sync conflict are plain lines of the text: say which wait for a choice.
            let listed = quire_host::conflicts::open(&ws, keys.opened(), Some(&id));
            for c in listed.unwrap_or_default().into_iter().filter(|c| !c.locked) {
                let (theirs, device) = (c.theirs.trim_end(), c.device);
                output::line(&format!(
                    "conflict {}: {theirs:?} from {device} waits for a choice (quire sync conflicts)",
                    c.id
                ))?;
            }
            Ok(())
        }
        Some(Command::Note(NoteCommand::Attach { id, files })) => crate::capture::attach(&out, &ws()?, &id, &files),
        Some(Command::Note(NoteCommand::Detach { id, attachment })) => {
            crate::capture::detach(&out, &ws()?, &keys, &id, &attachment)
        }
        Some(Command::Capture(args)) => crate::capture::capture(&out, &ws()?, &args),
        Some(Command::Attachments(crate::capture::AttachmentsCommand::Read)) => {
            crate::capture::read_waiting(&out, &ws()?)
        }
        Some(Command::Note(NoteCommand::Protect { id })) => set_protected(&out, &ws()?, &keys, &id, true),
        Some(Command::Note(NoteCommand::Unprotect { id })) => set_protected(&out, &ws()?, &keys, &id, false),
        Some(Command::Note(NoteCommand::Move { id, to })) => crate::notebooks::move_note(&out, &ws()?, &keys, &id, &to),
        Some(Command::Note(NoteCommand::Revisions { id, text })) => {
            crate::history::revisions(&out, &ws()?, &keys, &id, text)
        }
        Some(Command::Note(NoteCommand::Restore { id, revision })) => {
            crate::history::restore(&out, &ws()?, &keys, &id, revision)
        }
        Some(Command::Import(args)) => return crate::transfer::import(&out, &ws()?, &args),
        Some(Command::Export(args)) => crate::transfer::export(&out, &ws()?, &keys, &args),
        Some(Command::History(args)) => crate::history::history(&out, &ws()?, &keys, &args),
        Some(Command::Ledger(args)) => {
            let filtered = args.note.is_some() || args.client.is_some() || args.since.is_some();
            let filter = quire_host::ledger::filter(args.note, args.client, args.since.as_deref(), args.limit)?;
            let entries = ws()?.ledger(&filter)?;
            if out.json {
                crate::output::json_value(&serde_json::json!({ "entries": entries }))
            } else {
                crate::output::text(&quire_host::ledger::text(&entries, filtered))
            }
        }
        Some(Command::Undo { change_set, with_later }) => {
            crate::history::undo(&out, &ws()?, &keys, &change_set, with_later)
        }
        Some(Command::Lock(command)) => crate::lock::run(&out, &ws()?, &keys, &command),
        Some(Command::Sync(args)) => return crate::sync::run(&out, &ws()?, &keys, args.command),
        Some(Command::Notebook(NotebookCommand::List)) => {
            let ws = ws()?;
            if out.json {
                let tree = ToolRegistry::builtin().read_as_user_typed::<ListNotebooks>(&ws, Default::default())?;
                return output::json_value(&tree).map(|()| ExitCode::SUCCESS);
            }
            let (notebooks, counts) = ws.read(&Actor::User, |r| {
                Ok::<_, Error>((r.notebooks()?, r.notebook_note_counts()?))
            })?;
            output::notebook_tree(&out, &notebooks, &counts)
        }
        Some(Command::Notebook(NotebookCommand::Add { path })) => crate::notebooks::add(&out, &ws()?, &path),
        Some(Command::Notebook(NotebookCommand::Rename { path, new_title })) => {
            crate::notebooks::rename(&out, &ws()?, &path, &new_title)
        }
        Some(Command::Notebook(NotebookCommand::Move(args))) => {
            crate::notebooks::move_notebook(&out, &ws()?, &keys, &args)
        }
        Some(Command::Notebook(NotebookCommand::Delete { path })) => crate::notebooks::delete(&out, &ws()?, &path),
        Some(Command::Notebook(NotebookCommand::Protect { path })) => {
            crate::notebooks::set_protected(&out, &ws()?, &keys, &path, true)
        }
        Some(Command::Notebook(NotebookCommand::Unprotect { path })) => {
            crate::notebooks::set_protected(&out, &ws()?, &keys, &path, false)
        }
        Some(Command::Search(args)) => search(&out, &ws()?, args),
        Some(Command::Query { query }) => crate::query::query(&out, &ws()?, &query.join(" ")),
        Some(Command::Tasks(args)) => crate::query::tasks(&out, &ws()?, &keys, args),
        Some(Command::Today(args)) => crate::query::today(&out, &ws()?, &keys, args),
        Some(Command::Tools(ToolsCommand::List)) => output::tool_list(&out, &ToolRegistry::builtin().list()),
        Some(Command::Index(IndexCommand::Status)) => crate::index::status(&out, &ws()?),
        Some(Command::Index(IndexCommand::Rebuild)) => crate::index::rebuild(&out, &ws()?),
    }
    .map(|()| ExitCode::SUCCESS)
}

/// How a command wants its workspace opened (see [`Opening`]).
fn opening(command: Option<&Command>) -> Opening {
    Opening {
        background_index: matches!(command, Some(Command::Mcp(_) | Command::Serve(_) | Command::Chat(_))),
        embeds: matches!(
            command,
            Some(
                Command::Mcp(_)
                    | Command::Serve(_)
                    | Command::Chat(_)
                    | Command::Index(_)
                    | Command::Tools(ToolsCommand::Call { .. })
            )
        ),
    }
}

/// `quire note protect|unprotect ID`: protecting needs no passphrase (sealing uses the workspace's public key);
/// unprotecting a sealed note does, to decrypt it.
fn set_protected(out: &Output, ws: &Workspace, keys: &Unlocker, id: &str, protected: bool) -> anyhow::Result<()> {
    let note = keys.write(ws, |w| Ok(w.set_note_protected(id, protected)?))?;
    if protected {
        // Unsent sync batches lose what they said of it in plain now, not at the next sync.
        quire_sync::Device::scrub_outbox(ws)?;
    }
    if out.json {
        return print_changed_note_json(ws, keys, id);
    }
    output::protection(out, &note, ws.lock_is_set()?)
}

fn note_list(out: &Output, ws: &Workspace, args: &crate::cli::NoteListArgs) -> anyhow::Result<()> {
    let input = list_notes::Input {
        notebook_id: args
            .notebook
            .as_deref()
            .map(|name| find_notebook(ws, name))
            .transpose()?,
        tag: args.tag.clone(),
        in_trash: args.trash.then_some(true),
        limit: Some(args.limit.clamp(1, 100)),
        offset: Some(args.offset),
        ..Default::default()
    };
    let page = ToolRegistry::builtin().read_as_user_typed::<ListNotes>(ws, input)?;
    if out.json {
        return output::json_value(&page);
    }
    let top_level = args.notebook.is_none() && args.tag.is_none() && !args.trash;
    output::note_list(out, &page, top_level)
}

/// The actor of `quire tools call`: an MCP-like client, so every guard applies exactly as it would for an AI.
const CLI_CLIENT: &str = "quire cli";

/// Prints the result object; an `{"error": ...}` result exits with 1.
fn tools_call(ws: &Workspace, name: &str, args: &str) -> anyhow::Result<ExitCode> {
    let text = if args == "-" {
        let mut text = String::new();
        if let Err(e) = std::io::stdin().read_to_string(&mut text) {
            output::json_value(&serde_json::json!({
                "error": format!("Cannot read the arguments from standard input ({e}).")
            }))?;
            return Ok(ExitCode::FAILURE);
        }
        text
    } else {
        args.to_owned()
    };
    // Every failure prints an `{"error": ...}` object, as the help promises, so scripts parse one shape.
    let fail = |message: String| -> anyhow::Result<ExitCode> {
        output::json_value(&serde_json::json!({ "error": message }))?;
        Ok(ExitCode::FAILURE)
    };
    let args: serde_json::Value = match serde_json::from_str(&text) {
        Ok(args) => args,
        Err(e) => return fail(format!("The arguments are not valid JSON ({e}); give one JSON object.")),
    };
    if name == "semantic_search_notes" && ws.embedder().is_ok() {
        // No background indexer runs for one call: catch up first, so the answer reflects every note.
        if let Err(e) = ws.index_pending(usize::MAX) {
            tracing::warn!(error = %e, "the semantic index could not catch up; results may miss recent notes");
        }
    }
    let tools = ToolRegistry::builtin();
    let result = match tools.call(ws, &ToolActor::mcp(CLI_CLIENT), name, args) {
        Ok(result) => result,
        Err(e @ quire_tools::Error::UnknownTool { .. }) => {
            return fail(format!("{e} See `quire tools list`."));
        }
        Err(e) => return Err(e.into()),
    };
    output::json_value(&result.value)?;
    Ok(if result.is_error {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

fn note_add(out: &Output, ws: &Workspace, keys: &Unlocker, args: NoteAddArgs) -> anyhow::Result<()> {
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
    let (note, path) = keys.write(ws, |w| {
        let notebook_id = match &args.notebook {
            Some(name) => Some(resolve_notebook(w, name)?),
            None => None,
        };
        if let Some(template) = &args.template {
            let opened = w.create_from_template(&quire_core::FromTemplate {
                template: template.clone(),
                templates_notebook: quire_host::settings::templates_notebook()?,
                note: NewNote {
                    notebook_id,
                    is_todo: args.todo,
                    tags: args.tags.clone(),
                    ..NewNote::new(args.title.clone(), "")
                },
                now: jiff::Zoned::now().datetime(),
            })?;
            for warning in &opened.warnings {
                eprintln!("template: {warning}");
            }
            return Ok((opened.note, opened.notebook_path));
        }
        // Not `create_note`, which reads the note back: one added to a protected notebook is sealed from its
        // first write, and adding it needs no passphrase.
        let id = w.reserve_id()?;
        w.create_note_as(
            &id,
            NewNote {
                notebook_id,
                is_todo: args.todo,
                tags: args.tags.clone(),
                ..NewNote::new(args.title.clone(), body.clone())
            },
        )?;
        let note = w.note_summary(&id)?;
        let path = w.notebook_path_text(&note.notebook_id)?;
        Ok((note, path))
    })?;
    if out.json {
        // A note added to a protected notebook is sealed at once: printed without its text.
        return print_changed_note_json(ws, keys, &note.id);
    }
    output::note_added(out, &note, &path)
}

/// Finds a notebook by title or by `Parent/Child` path (ignoring case, as [`find_notebook_in`](crate::lookup::find_notebook_in)), creating what is
/// missing with quire-core's [`quire_core::Writer::create_notebook_path`].
fn resolve_notebook(w: &mut quire_core::Writer<'_>, name: &str) -> anyhow::Result<String> {
    if let Some(found) = w.find_notebook(name)? {
        return Ok(found.id);
    }
    let made = w.create_notebook_path(Some(ROOT_NOTEBOOK_ID), name)?;
    for notebook in &made.created {
        tracing::info!(notebook = %notebook.title, "created notebook");
    }
    Ok(made.notebook.id)
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
    if out.json {
        let input = search_notes::Input {
            query,
            limit: Some(args.limit.clamp(1, 100)),
            offset: Some(args.offset),
            include_trashed: Some(args.trashed),
        };
        return output::json_value(&ToolRegistry::builtin().read_as_user_typed::<SearchNotes>(ws, input)?);
    }
    let (results, notebooks) = ws.read(&Actor::User, |r| {
        Ok::<_, Error>((r.search(&query, options)?, r.notebook_tree()?))
    })?;
    output::search_results(out, &results, &notebooks)
}
