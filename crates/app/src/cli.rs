//! The command line, declared with clap.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

pub(crate) use crate::cli_plugins::{PluginAddArgs, PluginCommand};

/// quire: local-first notes with a safe AI tool layer.
#[derive(Debug, Parser)]
#[command(name = "quire", version, about = "quire: local-first notes with a safe AI tool layer.", long_about = None)]
pub(crate) struct Cli {
    /// The workspace file. Defaults to `quire/workspace.quire` in your data directory; created on first use.
    #[arg(long, global = true, env = "QUIRE_WORKSPACE", value_name = "PATH")]
    pub(crate) workspace: Option<PathBuf>,

    /// Print machine-readable JSON instead of text.
    #[arg(long, global = true)]
    pub(crate) json: bool,

    /// Read the passphrase from standard input (its first line) when the command meets a sealed note, instead of
    /// asking on the terminal. `quire lock` reads every passphrase it needs this way, one per line.
    #[arg(long, global = true)]
    pub(crate) passphrase_stdin: bool,

    #[command(subcommand)]
    pub(crate) command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Add, list, show, move, protect and restore notes.
    #[command(subcommand)]
    Note(NoteCommand),
    /// List, add, rename, move, protect and delete notebooks.
    #[command(subcommand)]
    Notebook(NotebookCommand),
    /// A quick capture: a new note in the inbox notebook (`[capture] inbox` in config.toml, "Inbox" by default) with
    /// the files given attached and their text read, or with --text.
    Capture(crate::capture::CaptureArgs),
    /// The text of attachments: read what waits for it (`quire serve` does this in the background).
    #[command(subcommand)]
    Attachments(crate::capture::AttachmentsCommand),
    /// Search notes with quire's query language (its syntax follows the options below).
    #[command(after_help = concat!("Search syntax: ", quire_core::search_syntax!()))]
    Search(SearchArgs),
    /// Query notes' fields (front matter, `key:: value` lines), tags, notebooks, links and tasks in Dataview's
    /// language: `quire query 'TABLE rating FROM #book WHERE rating >= 4 SORT rating DESC'` (docs/query.md).
    Query {
        /// TABLE, LIST, TASK or CALENDAR, then any of FROM, WHERE, SORT, GROUP BY, FLATTEN, LIMIT.
        #[arg(required = true)]
        query: Vec<String>,
    },
    /// The tasks (`- [ ]` lines) of every note, open ones by default, soonest due first; `quire tasks done NOTE LINE`
    /// completes one.
    Tasks(crate::query::TasksArgs),
    /// Open today's note, made from its template the first time (`[daily]` in config.toml sets its notebook, title
    /// format and template), or another day's, or the week's with --week.
    Today(crate::query::TodayArgs),
    /// List the AI tools, or call one exactly as an AI client would.
    #[command(subcommand)]
    Tools(ToolsCommand),
    /// Serve the web app on this computer (prints the address to open, with its key).
    Serve(ServeArgs),
    /// Serve the workspace to AI clients over MCP: stdio by default, Streamable HTTP with --http.
    Mcp(McpArgs),
    /// Chat with the in-app agent about your notes (interactive, or one --message for scripts).
    #[command(after_help = CHAT_EXIT_CODES)]
    Chat(crate::chat::ChatArgs),
    /// The semantic index: how far it is, or build it again.
    #[command(subcommand)]
    Index(IndexCommand),
    /// Bring notes in from Markdown, Obsidian, Joplin, Evernote, Notion, Google Keep, Simplenote, Standard Notes,
    /// Logseq, Roam, Bear or HTML, as one change set (`quire undo` takes it back). Importing again (a newer export
    /// too) updates what changed there and adds what is new. `quire import --format` lists what each keeps.
    #[command(after_help = IMPORT_HELP)]
    Import(ImportArgs),
    /// Write notes out as Markdown files with front matter (or as an Obsidian vault), attachments beside them.
    Export(ExportArgs),
    /// Sentence models for search by meaning: list the catalog, install one, choose one, remove one.
    #[command(subcommand)]
    Model(ModelCommand),
    /// What changed, by whom and when: change sets and, for one note, its revisions.
    History(crate::history::HistoryArgs),
    /// What AI read: which notes and attachments the assistant, MCP clients and plugins read, which part, when.
    Ledger(crate::history::LedgerArgs),
    /// Seal protected notes with a passphrase: set it, see what is sealed, change it, recover with the recovery key.
    #[command(subcommand, after_help = LOCK_HELP)]
    Lock(LockCommand),
    /// Sync this workspace with your other devices through a folder they all reach (a Syncthing, Dropbox or iCloud
    /// folder, a network share): encrypted, merged note by note. Without a subcommand: sync now.
    #[command(after_help = SYNC_HELP)]
    Sync(SyncArgs),
    /// Add MCP servers (any language) as plugins: their tools join the agent's and those `quire mcp` offers.
    #[command(subcommand, after_help = PLUGIN_HELP)]
    Plugin(PluginCommand),
    /// Changes staged for your review by MCP clients, external agents and automations: list them, show their diffs,
    /// accept or reject them.
    #[command(subcommand)]
    Review(crate::review::ReviewCommand),
    /// Your other devices (a phone, a tablet) that open the web app of `quire serve --listen`: pair one with a
    /// one-time code, list them, end one.
    #[command(subcommand)]
    Device(crate::device::DeviceCommand),
    /// External agents that speak ACP (Codex, Claude Code, Gemini CLI): add one, then chat with it (`quire chat
    /// --agent NAME`); it reaches your notes through quire's MCP server, its writes staged for your review.
    #[command(subcommand)]
    Agent(crate::agents::AgentCommand),
    /// Prompts that run on a schedule (daily, weekly, every N hours) or a trigger (a note created or changed, a tag
    /// added, tasks due) inside `quire serve` and `quire mcp`, with a model or an agent; their writes wait for review.
    #[command(subcommand)]
    Automation(crate::automations::AutomationCommand),
    /// Undo a change set as a whole: an agent turn, an MCP call, a plugin call, or one of yours.
    ///
    /// An agent turn's change set holds the edits you accepted from it too. Nothing changes when a later edit
    /// touched the same things (undo that one first, or pass --with-later); an undo is a change set itself, so it
    /// can be undone.
    Undo {
        /// The change set's id, as `quire history` and `quire chat` print it.
        change_set: String,
        /// Also undo the later changes that touched the same things since, newest first, as one change set.
        #[arg(long)]
        with_later: bool,
    },
}

const LOCK_HELP: &str = "\
Once a passphrase is set, every protected note is sealed: its text, revisions, attachments and history are encrypted
in the workspace file, and open only with the passphrase. Titles, tags, labels and sizes stay readable. A command
that needs a sealed note's text asks for the passphrase on the terminal, or reads it with --passphrase-stdin.

If both the passphrase and the recovery key are lost, the sealed notes are gone for good.

Exit codes:
  0  done
  1  something failed (the message says what)
  2  a passphrase or recovery key was wrong, missing, too short, or typed differently twice; nothing changed";

const SYNC_HELP: &str = "\
Sync needs a passphrase (`quire lock init`): every file sync writes to the target is encrypted with a key derived
from it, and a device joins with it. Never put the workspace file itself in a synced folder: two devices writing one
SQLite file through a file-sync tool corrupt it. Sync the target folder instead.

A remote target that stalls fails a request after `[sync] timeout` in config.toml (6 seconds when unset); a failure
that may pass (refused, reset, stalled, a server's 5xx) is tried twice more within the sync.

Exit codes:
  0  done
  1  something failed (the message says what); files refused on the target are listed
  2  the passphrase was wrong or missing; nothing changed
  3  offline: the target cannot be reached now; changes made here wait and go with the next sync";

#[derive(Debug, Args)]
pub(crate) struct SyncArgs {
    #[command(subcommand)]
    pub(crate) command: Option<SyncCommand>,
}

#[derive(Debug, Subcommand)]
pub(crate) enum SyncCommand {
    /// Make TARGET this workspace's sync target and send everything to it (asks the passphrase).
    Init {
        /// A folder (made if it does not exist), `webdav://host/path` (`webdav+http://` for plain HTTP), or
        /// `s3://bucket/prefix`. Credentials come from the environment: QUIRE_WEBDAV_USER, QUIRE_WEBDAV_PASSWORD;
        /// AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION, AWS_ENDPOINT_URL (R2, MinIO, Garage).
        target: String,
        /// This device's name, shown in the history of the others (default: the computer's name).
        #[arg(long)]
        name: Option<String>,
    },
    /// Join the workspace synced at TARGET from this device: asks its passphrase, then brings in everything.
    /// Notes already here are kept and sent to the others.
    Join {
        /// The target another device made with `quire sync init` (a folder, webdav:// or s3://).
        target: String,
        /// This device's name, shown in the history of the others (default: the computer's name).
        #[arg(long)]
        name: Option<String>,
    },
    /// When this device last synced, what waits to be sent, and the other devices seen.
    Status,
    /// Stop waiting for a device that will not sync again (lost, or retired), by its id or name.
    Forget {
        /// The device's id (or its start) or name, as `quire sync status` lists it.
        device: String,
    },
    /// Stop syncing this workspace (its notes stay; the target and the other devices are not touched).
    Leave,
    /// Sync, then write a snapshot of everything to the target and remove this device's files there that every
    /// device still syncing has applied (sync does this by itself once 256 files pile up).
    Compact,
    /// The places where another device changed the same lines of a note as this one: both versions are in the note
    /// until you choose with `quire sync resolve`.
    Conflicts,
    /// Choose what to keep of a conflict `quire sync conflicts` lists.
    Resolve {
        /// The conflict's number.
        id: i64,
        /// This device's version (`mine`), the other device's (`theirs`), both as they are, or the two merged by
        /// words (`merged`, when they changed different words).
        #[arg(long, value_parser = ["mine", "theirs", "both", "merged"])]
        keep: String,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum LockCommand {
    /// Set the workspace's passphrase and seal every protected note; prints the recovery key once.
    Init {
        #[command(flatten)]
        kdf: KdfArgs,
    },
    /// Whether a passphrase is set, how many notes are sealed, and the key derivation's cost.
    Status,
    /// Change the passphrase (asks the current one, then the new one twice); the recovery key stays valid.
    Passwd {
        #[command(flatten)]
        kdf: KdfArgs,
    },
    /// Set a new passphrase with the recovery key, when the passphrase is forgotten.
    Recover {
        #[command(flatten)]
        kdf: KdfArgs,
    },
    /// Replace the recovery key (asks the passphrase); the old one stops working. Prints the new one once.
    NewRecoveryKey,
}

/// The cost of deriving the key from the passphrase (Argon2id). By default 64 MiB and as many passes as take
/// about half a second on this computer.
#[derive(Debug, Args)]
pub(crate) struct KdfArgs {
    /// Argon2id's memory in KiB, for slow or small machines only (at least 8): less memory makes each guess of
    /// the passphrase cheaper for whoever has a copy of the workspace. Give --kdf-passes with it.
    #[arg(long, value_name = "KIB", requires = "kdf_passes", value_parser = clap::value_parser!(u32).range(8..))]
    pub(crate) kdf_memory_kib: Option<u32>,
    /// Argon2id's passes over that memory (at least 1), with --kdf-memory-kib.
    #[arg(long, value_name = "N", requires = "kdf_memory_kib", value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) kdf_passes: Option<u32>,
}

const IMPORT_HELP: &str = "\
Exit codes:
  0  everything was imported (or was unchanged)
  1  some files or attachments could not be imported, or notes were left alone (conflicts); the rest was
     imported, see the summary (a note whose attachment was lost is imported without it)
  2  nothing could be imported (an unreadable source, a protected --into notebook)";

#[derive(Debug, Args)]
pub(crate) struct ImportArgs {
    /// What to import: a folder of Markdown or HTML files, an Obsidian vault, a Joplin export (a .jex file or a RAW
    /// folder), an Evernote export (an .enex file, or a folder of them), a Notion export, Google Keep's Takeout
    /// folder, Simplenote's notes.json, a Standard Notes backup, a Logseq graph, a Roam JSON export, a Bear backup
    /// (.bear2bk) or TextBundles; a zip of any of these.
    #[arg(required_unless_present = "format")]
    pub(crate) path: Option<PathBuf>,
    /// What the source is (`--format` alone lists the formats and what each keeps); detected when not given.
    #[arg(long, value_name = "FORMAT", num_args = 0..=1, value_parser = str::parse::<quire_import::ImportFormat>)]
    pub(crate) format: Option<Option<quire_import::ImportFormat>>,
    /// The notebook to import into (a title or a path such as Work/Projects); the top level by default.
    #[arg(long, value_name = "NOTEBOOK")]
    pub(crate) into: Option<String>,
    /// Read and check everything and say what would happen, without writing anything.
    #[arg(long)]
    pub(crate) dry_run: bool,
    /// Overwrite notes that were changed in quire since their last import (a revision keeps their text).
    #[arg(long)]
    pub(crate) force: bool,
}

#[derive(Debug, Args)]
pub(crate) struct ExportArgs {
    /// The folder to write into (created when missing; files of an earlier export are replaced).
    pub(crate) dir: PathBuf,
    /// `markdown`: links between notes as relative paths; `obsidian`: as `[[wikilinks]]`, and an Obsidian vault.
    #[arg(long, value_enum, default_value_t = ExportFormatArg::Markdown)]
    pub(crate) format: ExportFormatArg,
    /// Only this notebook and what is inside it.
    #[arg(long, value_name = "NOTEBOOK")]
    pub(crate) notebook: Option<String>,
    /// Protected notes and notebooks too (marked `protected: true`, which import restores). Sealed notes are
    /// written as plain text, so this asks for the passphrase; without it they are left out.
    #[arg(long)]
    pub(crate) include_protected: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ExportFormatArg {
    Markdown,
    Obsidian,
}

#[derive(Debug, Subcommand)]
pub(crate) enum ModelCommand {
    /// The models quire can install, which are installed, and what search by meaning uses now.
    List,
    /// Download a model from its public repository (all-MiniLM-L6-v2 when no NAME), check every file's SHA-256,
    /// and install it; it becomes the active model when search by meaning has none. An interrupted download resumes.
    ///
    /// Proxies are taken from HTTPS_PROXY / HTTP_PROXY / NO_PROXY, a mirror of the hub from HF_ENDPOINT.
    Install {
        /// The model's name in the catalog (see `quire model list`).
        name: Option<String>,
        /// Install from a folder holding the model's files instead of downloading them (an offline machine).
        #[arg(long, value_name = "DIR")]
        from: Option<PathBuf>,
    },
    /// Make search by meaning use an installed model (`builtin` for the built-in fallback); the semantic index
    /// embeds the notes again in the background.
    Use {
        /// The model's name, or `builtin`.
        name: String,
    },
    /// Delete an installed model's files; if it was active, search by meaning falls back to the built-in embedder.
    Remove {
        /// The model's name.
        name: String,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum IndexCommand {
    /// Show the embedder in use and how many notes are indexed or waiting.
    Status,
    /// Build the word-search index again and embed every note again (with a progress bar).
    Rebuild,
}

const CHAT_EXIT_CODES: &str = "\
Exit codes:
  0  the turn finished (and, with --apply, its edits were saved)
  1  the turn stopped early (model error, step limit) or its edits could not be saved; with --json the whole
     result is still printed, with \"error\" or \"applied\": false and \"not_applied_reason\"
  2  unusable arguments: a --note that is protected, in the trash or missing, a selection that does not fit

A protected note is never given to the agent: focusing one is refused. Every turn that wrote prints its change set
and the command that undoes it (`quire undo CHANGE_SET`; \"change_set_id\" with --json).";

#[derive(Debug, Default, Args)]
#[command(args_conflicts_with_subcommands = true)]
#[command(group(clap::ArgGroup::new("serving").args(["http", "addr"]).multiple(true)))]
pub(crate) struct McpArgs {
    #[command(subcommand)]
    pub(crate) command: Option<McpCommand>,
    /// Serve Streamable HTTP on ADDR (default 127.0.0.1:8848) instead of stdio; every request needs the token that
    /// `quire mcp token` prints.
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = "127.0.0.1:8848")]
    pub(crate) http: Option<std::net::SocketAddr>,
    /// Serve Streamable HTTP on ADDR, as `quire serve --addr` takes it (the same as `--http ADDR`).
    #[arg(long, value_name = "ADDR")]
    pub(crate) addr: Option<std::net::SocketAddr>,
    /// Allow binding an address that is not loopback (reachable from other machines). Think twice.
    #[arg(long, requires = "serving")]
    pub(crate) allow_remote: bool,
    /// The https:// address a tunnel or reverse proxy gives this server: hosted assistants then sign in with OAuth
    /// (you consent in the browser with quire's key) and reach it at URL/mcp.
    #[arg(long, requires = "serving", value_name = "URL")]
    pub(crate) public_url: Option<String>,
    /// Offer only read-only tools (also `read_only = true` under `[mcp]` in the config file).
    #[arg(long)]
    pub(crate) read_only: bool,
    /// Reach only this notebook and what is inside it, by title or path (`Work/Projects`); repeat for several (also
    /// `notebooks = [...]` under `[mcp]`). Everything else does not exist for the client, and nothing can be
    /// written outside.
    #[arg(long = "notebook", value_name = "NOTEBOOK")]
    pub(crate) notebooks: Vec<String>,
    /// Do not offer this tool; repeat for several (also `disabled_tools = [...]` under `[mcp]` in the config file).
    #[arg(long = "disable-tool", value_name = "NAME")]
    pub(crate) disabled_tools: Vec<String>,
    /// Stage clients' writes for your review instead of applying them (`quire review`, the web app's Review page;
    /// also `writes = "stage"` under `[mcp]`).
    #[arg(long)]
    pub(crate) review: bool,
    /// The name the client's reads and writes are recorded under (history, review, `quire ledger`), whatever it
    /// calls itself; quire passes it when it starts this server for an external agent.
    #[arg(long, value_name = "NAME", hide = true)]
    pub(crate) client_name: Option<String>,
}

#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    /// The address to listen on (port 0 picks a free one).
    #[arg(long, default_value = "127.0.0.1:8080", value_name = "ADDR")]
    pub(crate) addr: std::net::SocketAddr,
    /// Allow an address that is not loopback (reachable from other machines). Think twice.
    #[arg(long)]
    pub(crate) allow_remote: bool,
    /// Serve your other devices too: listen on ADDR (0.0.0.0:8443: every network of this computer) over TLS; a
    /// device signs in with a code from `quire device pair`. Needs --tls-cert and --tls-key, --tls-self-signed, or
    /// an https --public-url in front.
    #[arg(long, value_name = "ADDR", conflicts_with = "addr")]
    pub(crate) listen: Option<std::net::SocketAddr>,
    /// The TLS certificate chain (PEM) for --listen, with --tls-key.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub(crate) tls_cert: Option<std::path::PathBuf>,
    /// The certificate's private key (PEM).
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub(crate) tls_key: Option<std::path::PathBuf>,
    /// Let quire make a certificate (kept for the next start); browsers warn once, and show its fingerprint.
    #[arg(long, conflicts_with = "tls_cert")]
    pub(crate) tls_self_signed: bool,
    /// Replace the web key; addresses printed before stop opening sessions, and open sessions end (their browsers
    /// open the new address).
    #[arg(long)]
    pub(crate) rotate_key: bool,
    /// Open the address in your default browser once the server listens.
    #[arg(long)]
    pub(crate) open: bool,
    /// The https:// address a tunnel or reverse proxy gives this server: quire's MCP endpoint is then served here
    /// too, at URL/mcp, for hosted assistants signing in with OAuth, and paired devices open the web app there.
    #[arg(long, value_name = "URL")]
    pub(crate) public_url: Option<String>,
}

#[derive(Debug, Subcommand)]
pub(crate) enum McpCommand {
    /// Print the bearer token HTTP clients must send (created on first use), or manage named tokens that reach less.
    Token {
        /// Replace the token with a new one; clients using the old one stop working.
        #[arg(long)]
        rotate: bool,
        #[command(subcommand)]
        action: Option<TokenAction>,
    },
}

const PLUGIN_HELP: &str = "\
A plugin is an MCP server. Its tools are offered to the agent and to quire mcp's clients (unless --sidebar-only) as
NAME__tool, with the effect its annotations give (readOnlyHint, destructiveHint; none: mutating), and destructive
calls wait for your approval. It gets only the
arguments the model sends: never the workspace, never a key; its environment holds only what its entry names (by
default PATH, LANG, LC_ALL, TZ and TMPDIR are passed on, and HOME is a folder of its own). Each call has a time limit
and an output cap; a plugin that crashes or hangs is stopped and started again. Entries live in config.toml as
[[plugins]].

  quire plugin add weather -- python3 /path/to/weather.py
  quire plugin add everything -- npx -y @modelcontextprotocol/server-everything
  quire plugin add search --url http://127.0.0.1:9000/mcp --header 'Authorization: Bearer KEY'";

#[derive(Debug, Subcommand)]
pub(crate) enum TokenAction {
    /// Create a named token for one client, printed once (only its hash is kept).
    Add {
        /// A name to tell it by (letters, digits, `-`, `_`, `.`). A running `quire mcp --http` accepts it at once.
        name: String,
        /// Reach only this notebook and what is inside it, by title or path; repeat for several.
        #[arg(long = "notebook", value_name = "NOTEBOOK")]
        notebooks: Vec<String>,
        /// Offer only read-only tools.
        #[arg(long)]
        read_only: bool,
        /// Do not offer this tool; repeat for several.
        #[arg(long = "disable-tool", value_name = "NAME")]
        disabled_tools: Vec<String>,
        /// Stage the client's writes for your review instead of applying them (`quire review`).
        #[arg(long)]
        review: bool,
        /// Let it call only this plugin's tools; repeat for several (default: every plugin, later ones too).
        #[arg(long = "plugin", value_name = "PLUGIN", conflicts_with = "no_plugins")]
        plugins: Vec<String>,
        /// Let it call no plugin's tools.
        #[arg(long)]
        no_plugins: bool,
    },
    /// List the named tokens (never the tokens themselves).
    List,
    /// Revoke a named token: clients using it stop working at once, also on a server already running.
    Revoke {
        /// The token's name.
        name: String,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum ToolsCommand {
    /// List every tool with its effect and title (`--json` adds descriptions and schemas).
    List,
    /// Call a tool as an AI client (never as you): protected notes stay out of reach, writes are logged and undoable.
    /// Prints the output object, or the `{"error": ...}` object and exits with 1.
    Call {
        /// The tool's name, as `quire tools list` shows it.
        name: String,
        /// The arguments as a JSON object (default `{}`); `-` reads them from standard input.
        #[arg(default_value = "{}")]
        args: String,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum NoteCommand {
    /// Add a note.
    Add(NoteAddArgs),
    /// List notes: the top level, one notebook, one tag, or the trash.
    List(NoteListArgs),
    /// Show one note with its body.
    Show {
        /// The note's id (as printed by `note add` or `search`).
        id: String,
    },
    /// Protect a note: AI tools may see its title, never read or change it. Once `quire lock init` has set a
    /// passphrase, its text is also sealed (encrypted); protecting needs no passphrase.
    Protect {
        /// The note's id.
        id: String,
    },
    /// Remove a note's protection (a sealed note's text is decrypted: this needs the passphrase).
    Unprotect {
        /// The note's id.
        id: String,
    },
    /// Attach files to a note. Their text is read first (a PDF page by page; an image or a scanned page with OCR,
    /// when Tesseract is installed), so search and the AI tools find it and name the page.
    Attach {
        /// The note's id.
        id: String,
        /// The files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Remove an attachment from a note, by its id or its file name.
    Detach {
        /// The note's id.
        id: String,
        /// The attachment's id or file name.
        attachment: String,
    },
    /// Move a note into another notebook, or to the top level (a note in the trash too; it stays in the trash).
    Move {
        /// The note's id (as printed by `note add` or `search`).
        id: String,
        #[command(flatten)]
        to: Destination,
    },
    /// List a note's revisions: its title and text before each change, newest first.
    Revisions {
        /// The note's id.
        id: String,
        /// Show each revision's text too (with --json, as `body`), not only its length.
        #[arg(long)]
        text: bool,
    },
    /// Put a note's title and text back as they were in a revision (the current text is kept as a revision first).
    Restore {
        /// The note's id.
        id: String,
        /// The revision's number, as `quire note revisions` prints it.
        revision: i64,
    },
}

#[derive(Debug, Args)]
pub(crate) struct NoteListArgs {
    /// The notebook, by title or path (`Work/Projects`); its sub-notebooks are not included.
    #[arg(long, short, conflicts_with_all = ["tag", "trash"])]
    pub(crate) notebook: Option<String>,
    /// Only notes with this tag, in every notebook.
    #[arg(long, conflicts_with = "trash")]
    pub(crate) tag: Option<String>,
    /// The notes in the trash.
    #[arg(long)]
    pub(crate) trash: bool,
    /// How many notes to show (at most 100).
    #[arg(long, default_value_t = 50)]
    pub(crate) limit: u64,
    /// How many notes to skip, for the next page.
    #[arg(long, default_value_t = 0)]
    pub(crate) offset: u64,
}

#[derive(Debug, Args)]
pub(crate) struct NoteAddArgs {
    /// The title.
    #[arg(long, short, allow_hyphen_values = true)]
    pub(crate) title: String,
    /// The Markdown body (it may start with `-`, like a list).
    #[arg(long, short, conflicts_with = "body_file", allow_hyphen_values = true)]
    pub(crate) body: Option<String>,
    /// Read the Markdown body from a file (`-` for standard input).
    #[arg(long, value_name = "FILE")]
    pub(crate) body_file: Option<PathBuf>,
    /// The notebook, by title or path (`Work/Projects`); created when missing. Default: the top level.
    #[arg(long, short)]
    pub(crate) notebook: Option<String>,
    /// A tag; repeat for several.
    #[arg(long = "tag", value_name = "TAG")]
    pub(crate) tags: Vec<String>,
    /// Make it a to-do.
    #[arg(long)]
    pub(crate) todo: bool,
    /// Make its body from a template: a note's id, title or `Notebook/Title` path (`{{date}}`, `{{title}}` and
    /// Templater's `tp.date.now` filled in).
    #[arg(long, conflicts_with_all = ["body", "body_file"])]
    pub(crate) template: Option<String>,
}

#[derive(Debug, Subcommand)]
pub(crate) enum NotebookCommand {
    /// Show the notebook tree with the number of notes in each.
    List,
    /// Create a notebook, with the notebooks of its path that are missing.
    ///
    /// `quire notebook add Work/Projects` creates Work too when there is none. A path that exists already is
    /// refused, and nothing changes.
    Add {
        /// The path from the top level, such as `Work/Projects`; a lone title creates a top-level notebook.
        path: String,
    },
    /// Give a notebook a new title; it stays where it is, with everything in it.
    Rename {
        /// The notebook, by title or path (`Work/Projects`).
        path: String,
        /// The new title (one line, without `/`).
        new_title: String,
    },
    /// Move a notebook, with everything in it, into another notebook or to the top level.
    Move(NotebookMoveArgs),
    /// Protect a notebook and everything in it, now and later (sealed too once a passphrase is set).
    Protect {
        /// The notebook, by title or path (`Work/Projects`).
        path: String,
    },
    /// Remove a notebook's protection (its sealed notes are decrypted: this needs the passphrase).
    Unprotect {
        /// The notebook, by title or path (`Work/Projects`).
        path: String,
    },
    /// Delete an empty notebook (`quire undo` brings it back).
    ///
    /// A notebook that holds notes (those in the trash too) or notebooks is refused and left as it is: move them out
    /// first with `quire note move` and `quire notebook move`. `quire undo CHANGE_SET`, with the change set the
    /// command prints, brings a deleted notebook back.
    Delete {
        /// The notebook, by title or path (`Work/Projects`).
        path: String,
    },
}

#[derive(Debug, Args)]
pub(crate) struct NotebookMoveArgs {
    /// The notebook to move, by title or path (`Work/Projects`).
    pub(crate) path: String,
    #[command(flatten)]
    pub(crate) to: Destination,
}

/// Where a note or notebook goes: into a notebook, or to the top level.
#[derive(Debug, Args)]
#[group(required = true, multiple = false)]
pub(crate) struct Destination {
    /// The notebook to move it into, by title or path (`Archive/2025`); it must exist (`quire notebook add` creates
    /// one).
    #[arg(long, value_name = "NOTEBOOK")]
    pub(crate) to: Option<String>,
    /// Move it to the top level, outside every notebook.
    #[arg(long)]
    pub(crate) top_level: bool,
}

#[derive(Debug, Args)]
pub(crate) struct SearchArgs {
    /// The query; several arguments are joined with spaces. Put `--` before a query that starts with `-`.
    #[arg(required = true, num_args = 1..)]
    pub(crate) query: Vec<String>,
    /// How many results to show.
    #[arg(long, default_value_t = 20)]
    pub(crate) limit: u64,
    /// How many results to skip.
    #[arg(long, default_value_t = 0)]
    pub(crate) offset: u64,
    /// Include notes in the trash.
    #[arg(long)]
    pub(crate) trashed: bool,
}
