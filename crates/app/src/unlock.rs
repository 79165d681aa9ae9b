//! The passphrase a command asks for when it meets a sealed note: every command runs as the user first, and only
//! when quire-core answers that a note is sealed (`Error::Locked`) is the passphrase asked, once, and the same work
//! done again with the unlocked key. A command that meets no sealed note never asks.

use std::cell::OnceCell;
use std::io::IsTerminal;

use anyhow::Context;
use quire_core::seal::Unlocked;
use quire_core::{Actor, Error, Reader, Workspace, Writer};
use quire_tools::{ToolErrorKind, ToolRegistry, TypedTool};
use zeroize::Zeroizing;

/// Input that was refused (a wrong, missing or too short passphrase, a wrong recovery key): the command exits with
/// 2 and nothing changed.
#[derive(Debug)]
pub(crate) struct Refused(pub(crate) String);

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Refused {}

/// Where passphrases come from (a line of standard input each with `--passphrase-stdin`, else the terminal), and
/// the workspace key once one opened it.
pub(crate) struct Unlocker {
    from_stdin: bool,
    key: OnceCell<Unlocked>,
}

impl Unlocker {
    pub(crate) fn new(from_stdin: bool) -> Unlocker {
        Unlocker {
            from_stdin,
            key: OnceCell::new(),
        }
    }

    /// Reads one secret (`thing`: "passphrase", "recovery key"): the next line of standard input with
    /// `--passphrase-stdin`, else typed on the terminal without echo after `prompt`. `missing` is the message when
    /// neither is possible (no terminal).
    pub(crate) fn ask(
        &self,
        prompt: &str,
        thing: &str,
        missing: impl FnOnce() -> String,
    ) -> anyhow::Result<Zeroizing<String>> {
        if self.from_stdin {
            let mut line = Zeroizing::new(String::new());
            let read = std::io::stdin()
                .read_line(&mut line)
                .with_context(|| format!("cannot read the {thing} from standard input"))?;
            if read == 0 {
                return Err(Refused(format!(
                    "No {thing} on standard input: it ended first (--passphrase-stdin reads one per line). Nothing \
                     changed."
                ))
                .into());
            }
            let end = line.trim_end_matches(['\n', '\r']).len();
            line.truncate(end);
            return Ok(line);
        }
        if !std::io::stdin().is_terminal() {
            return Err(Refused(missing()).into());
        }
        match prompt_hidden(prompt) {
            Ok(text) => Ok(Zeroizing::new(text)),
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                Err(Refused("Nothing was typed. Nothing changed.".to_owned()).into())
            }
            Err(e) => Err(anyhow::Error::new(e).context(format!("cannot read the {thing} from the terminal"))),
        }
    }

    /// The workspace key: opened with the passphrase the first time (asked once), the same key after. `sealed`
    /// says what needs it, for the message when the passphrase cannot be asked.
    pub(crate) fn key(&self, ws: &Workspace, sealed: &str) -> anyhow::Result<&Unlocked> {
        if let Some(key) = self.key.get() {
            return Ok(key);
        }
        let passphrase = self.ask(
            &format!("Passphrase for {}: ", workspace_name(ws)),
            "passphrase",
            || format!("{sealed} is sealed; run in a terminal to type the passphrase, or pass --passphrase-stdin"),
        )?;
        let key = open(ws, &passphrase)?;
        Ok(self.key.get_or_init(|| key))
    }

    /// Keeps a key opened otherwise (by `quire lock`).
    pub(crate) fn keep(&self, key: Unlocked) -> &Unlocked {
        self.key.get_or_init(|| key)
    }

    /// Whether a passphrase can be had: from standard input, or typed on a terminal.
    pub(crate) fn can_ask(&self) -> bool {
        self.from_stdin || std::io::stdin().is_terminal()
    }

    /// The key, when it was opened already (nothing is asked).
    pub(crate) fn opened(&self) -> Option<&Unlocked> {
        self.key.get()
    }

    /// Whether passphrases come from standard input (`--passphrase-stdin`).
    pub(crate) fn reads_stdin(&self) -> bool {
        self.from_stdin
    }

    /// Reads as the user; when that meets a sealed note, asks the passphrase and reads again with the key.
    pub(crate) fn read<T>(&self, ws: &Workspace, f: impl Fn(&Reader<'_>) -> anyhow::Result<T>) -> anyhow::Result<T> {
        if let Some(key) = self.key.get() {
            return ws.read_unlocked(key, f);
        }
        match ws.read(&Actor::User, &f) {
            Err(e) => match locked_note(&e) {
                Some(sealed) => ws.read_unlocked(self.key(ws, &sealed)?, f),
                None => Err(e),
            },
            done => done,
        }
    }

    /// Writes as the user; when that meets a sealed note (and so changed nothing), asks the passphrase and writes
    /// again with the key.
    pub(crate) fn write<T>(
        &self,
        ws: &Workspace,
        mut f: impl FnMut(&mut Writer<'_>) -> anyhow::Result<T>,
    ) -> anyhow::Result<T> {
        if let Some(key) = self.key.get() {
            return ws.write_unlocked(key, f);
        }
        match ws.write(&Actor::User, &mut f) {
            Err(e) => match locked_note(&e) {
                Some(sealed) => ws.write_unlocked(self.key(ws, &sealed)?, f),
                None => Err(e),
            },
            done => done,
        }
    }

    /// Runs a read-only tool with the user's view (`--json` output in the tools' shape); when the note `note_id`
    /// is sealed, asks the passphrase and runs it again through the unlocked read.
    pub(crate) fn tool<T: TypedTool>(
        &self,
        ws: &Workspace,
        note_id: &str,
        input: impl Fn() -> T::Input,
    ) -> anyhow::Result<T::Output> {
        let tools = ToolRegistry::builtin();
        if let Some(key) = self.key.get() {
            return Ok(tools.read_as_user_typed_via::<T>(ws, input(), &|f| ws.read_unlocked(key, f))?);
        }
        match tools.read_as_user_typed::<T>(ws, input()) {
            Err(e) if e.kind() == ToolErrorKind::Locked => {
                let key = self.key(ws, &note_named(ws, note_id))?;
                Ok(tools.read_as_user_typed_via::<T>(ws, input(), &|f| ws.read_unlocked(key, f))?)
            }
            done => Ok(done?),
        }
    }

    /// Runs a read-only tool with the user's view, through the key if it is open, never asking for it: `None` when
    /// the note is sealed (a command that sealed it, or moved it, prints it without its text then).
    pub(crate) fn tool_if_open<T: TypedTool>(
        &self,
        ws: &Workspace,
        input: T::Input,
    ) -> anyhow::Result<Option<T::Output>> {
        let tools = ToolRegistry::builtin();
        let done = match self.key.get() {
            Some(key) => tools.read_as_user_typed_via::<T>(ws, input, &|f| ws.read_unlocked(key, f)),
            None => tools.read_as_user_typed::<T>(ws, input),
        };
        match done {
            Err(e) if e.kind() == ToolErrorKind::Locked => Ok(None),
            done => Ok(Some(done?)),
        }
    }
}

/// Opens the workspace key with a passphrase; a wrong one is [`Refused`].
pub(crate) fn open(ws: &Workspace, passphrase: &str) -> anyhow::Result<Unlocked> {
    match ws.unlock(passphrase) {
        Ok(key) => Ok(key),
        Err(Error::WrongPassphrase) => Err(Refused(Error::WrongPassphrase.to_string()).into()),
        Err(e) => Err(e.into()),
    }
}

/// The sealed note an error stopped at, as messages name it (`note 'Bank'`).
fn locked_note(e: &anyhow::Error) -> Option<String> {
    e.chain().find_map(|cause| match cause.downcast_ref::<Error>() {
        Some(Error::Locked { title, .. }) => Some(format!("note '{title}'")),
        _ => None,
    })
}

/// A note as messages name it, by its title (titles are never sealed).
fn note_named(ws: &Workspace, id: &str) -> String {
    match ws.read(&Actor::User, |r| r.note_summary(id)) {
        Ok(note) => format!("note '{}'", note.title),
        Err(_) => format!("note {id}"),
    }
}

/// The workspace as a prompt names it: its file.
pub(crate) fn workspace_name(ws: &Workspace) -> String {
    ws.path()
        .map_or_else(|| "this workspace".to_owned(), |p| p.display().to_string())
}

/// Asks on the terminal without echo: the prompt on standard error (standard output may go to a file), the answer
/// from standard input, a terminal.
fn prompt_hidden(prompt: &str) -> std::io::Result<String> {
    #[cfg(unix)]
    let config = rpassword::ConfigBuilder::new()
        .input_file_path("/dev/stdin")
        .output_writer(std::io::stderr())
        .build();
    #[cfg(not(unix))]
    let config = rpassword::ConfigBuilder::new().build();
    rpassword::prompt_password_with_config(prompt, config)
}
