//! External agents (ACP): the `[[agents]]` entries of config.toml (`quire agent add|list|remove|test`), and a session
//! with one, started with quire's own MCP server attached: `quire mcp` on the same workspace, limited to the entry's
//! notebooks, its writes staged for review unless the entry says `writes = "apply"`, its reads and writes recorded
//! under the agent's name. quire-agent's `acp` speaks the protocol.

pub mod page;

use std::path::Path;

use anyhow::{Context, bail};
use quire_agent::acp::{AcpSession, McpAttach};
use quire_core::Workspace;

pub use crate::settings::AgentConfig;
use crate::settings::{config_dir, read_config};

/// The entry `quire agent add NAME [--notebook NB]... [--apply-writes] [--env K=V|K]... -- COMMAND ARGS` makes:
/// `--env NAME=VALUE` keeps the value, `--env NAME` passes that variable of quire's environment on at each start.
pub fn entry(
    name: String,
    notebooks: Vec<String>,
    apply_writes: bool,
    env: &[String],
    access: (Option<std::path::PathBuf>, bool),
    mut command: Vec<String>,
) -> anyhow::Result<AgentConfig> {
    let (files, terminal) = access;
    // Kept as the folder it is now, whatever the working directory of a later start.
    let files = files
        .map(|dir| {
            std::fs::canonicalize(&dir)
                .ok()
                .filter(|d| d.is_dir())
                .with_context(|| format!("--files {}: not a folder", dir.display()))
        })
        .transpose()?;
    let mut values = std::collections::BTreeMap::new();
    let mut inherit_env = Vec::new();
    for pair in env {
        match pair.split_once('=') {
            Some((key, value)) if !key.is_empty() => {
                values.insert(key.to_owned(), value.to_owned());
            }
            None if !pair.is_empty() => inherit_env.push(pair.clone()),
            _ => bail!("--env {pair:?}: write NAME=VALUE, or NAME to pass on that variable of your environment"),
        }
    }
    if command.is_empty() {
        bail!("give the agent's command after --: `quire agent add {name} -- COMMAND ARGS`");
    }
    let program = command.remove(0);
    Ok(AgentConfig {
        name,
        command: program,
        args: command,
        env: values,
        inherit_env,
        notebooks,
        writes: if apply_writes {
            crate::settings::AgentWrites::Apply
        } else {
            crate::settings::AgentWrites::Stage
        },
        files: files.map(|dir| dir.display().to_string()),
        terminal,
    })
}

/// An entry in one line, as `quire agent list` shows it.
pub fn describe(agent: &AgentConfig) -> String {
    let reach = if agent.notebooks.is_empty() {
        "all notebooks".to_owned()
    } else {
        agent.notebooks.join(", ")
    };
    let writes = if agent.applies_writes() {
        "writes applied"
    } else {
        "writes staged for review"
    };
    let mut given = Vec::new();
    if let Some(files) = &agent.files {
        given.push(format!("files in {files}"));
    }
    if agent.terminal {
        given.push("a terminal".to_owned());
    }
    let given = if given.is_empty() {
        "no files, no terminal".to_owned()
    } else {
        given.join(" and ")
    };
    format!(
        "{}  {} {}  ({reach}; {writes}; {given})",
        agent.name,
        agent.command,
        agent.args.join(" ")
    )
}

/// Starts the agent named `name` on `ws` and ends it: what it said it is.
pub async fn test(ws: &Workspace, name: &str) -> anyhow::Result<String> {
    let entry = find(name)?;
    let session = start(ws, &entry).await?;
    let info = session.agent_info.clone();
    session.close().await;
    let said = info.unwrap_or_else(|| "an agent that did not say its name".to_owned());
    Ok(format!(
        "{name} works: {said} started a session with quire's MCP server attached."
    ))
}

/// The configured agents; an entry quire cannot use (no name, no command, a name twice) is an error naming the file.
pub fn list() -> anyhow::Result<Vec<AgentConfig>> {
    let dir = config_dir()?;
    let agents = read_config(&dir)?.agents;
    let file = dir.join("config.toml");
    for (i, agent) in agents.iter().enumerate() {
        if agent.name.trim().is_empty() || agent.command.trim().is_empty() {
            bail!(
                "{}: the [[agents]] entry number {} needs a name and a command",
                file.display(),
                i + 1
            );
        }
        if agents[..i].iter().any(|a| a.name.eq_ignore_ascii_case(&agent.name)) {
            bail!(
                "{}: two [[agents]] entries are named {:?}: rename or remove one",
                file.display(),
                agent.name
            );
        }
    }
    Ok(agents)
}

/// The agent named `name`.
pub fn find(name: &str) -> anyhow::Result<AgentConfig> {
    let agents = list()?;
    agents.iter().find(|a| a.name == name).cloned().with_context(|| {
        let known: Vec<&str> = agents.iter().map(|a| a.name.as_str()).collect();
        if known.is_empty() {
            format!("no agent is named {name:?}: add one with `quire agent add {name} -- COMMAND ARGS`")
        } else {
            format!("no agent is named {name:?}; the agents are {}", known.join(", "))
        }
    })
}

/// Adds `entry` to config.toml, checking its notebooks exist in `ws`.
pub fn add(ws: &Workspace, entry: &AgentConfig) -> anyhow::Result<()> {
    let name = entry.name.trim();
    if name.is_empty() || name.chars().any(|c| c.is_control()) || name.chars().count() > 60 {
        bail!("an agent's name is 1 to 60 characters, with no line breaks");
    }
    if entry.command.trim().is_empty() {
        bail!("give the agent's command after --: `quire agent add {name} -- COMMAND ARGS`");
    }
    for notebook in &entry.notebooks {
        let found = ws.read(&quire_core::Actor::User, |r| r.find_notebook(notebook))?;
        if found.is_none() {
            bail!("no notebook is named {notebook:?} (`quire notebook list`)");
        }
    }
    if !program_exists(&entry.command) {
        eprintln!(
            "Note: {} is not found here (not a file, nor on PATH); `quire agent test {name}` will say whether it starts.",
            entry.command
        );
    }
    edit(&config_dir()?, |list| {
        if list.iter().any(|t| {
            t.get("name")
                .and_then(|n| n.as_str())
                .is_some_and(|n| n.eq_ignore_ascii_case(name))
        }) {
            bail!("an agent is named {name:?} already: remove it first (`quire agent remove {name}`)");
        }
        list.push(table_of(entry));
        Ok(())
    })
}

/// Whether `command` names a program: a path to a file, or a name found on PATH.
fn program_exists(command: &str) -> bool {
    if command.contains('/') {
        return Path::new(command).is_file();
    }
    std::env::var_os("PATH").is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(command).is_file()))
}

/// Drops the agent named `name`; refused when there is none.
pub fn remove(name: &str) -> anyhow::Result<()> {
    edit(&config_dir()?, |list| {
        let before = list.len();
        list.retain(|t| t.get("name").and_then(|n| n.as_str()) != Some(name));
        if list.len() == before {
            bail!("no agent is named {name:?} (`quire agent list`)");
        }
        Ok(())
    })
}

fn table_of(entry: &AgentConfig) -> toml_edit::Table {
    use toml_edit::{Array, InlineTable, Table, value};
    let mut table = Table::new();
    table.insert("name", value(entry.name.trim()));
    table.insert("command", value(entry.command.as_str()));
    let mut args = Array::new();
    args.extend(entry.args.iter().map(String::as_str));
    table.insert("args", value(args));
    if !entry.env.is_empty() {
        let mut env = InlineTable::new();
        for (k, v) in &entry.env {
            env.insert(k, v.as_str().into());
        }
        table.insert("env", value(env));
    }
    if !entry.notebooks.is_empty() {
        let mut notebooks = Array::new();
        notebooks.extend(entry.notebooks.iter().map(String::as_str));
        table.insert("notebooks", value(notebooks));
    }
    if !entry.inherit_env.is_empty() {
        let mut names = Array::new();
        names.extend(entry.inherit_env.iter().map(String::as_str));
        table.insert("inherit_env", value(names));
    }
    if entry.applies_writes() {
        table.insert("writes", value("apply"));
    }
    if let Some(files) = &entry.files {
        table.insert("files", value(files.as_str()));
    }
    if entry.terminal {
        table.insert("terminal", value(true));
    }
    table
}

/// Edits the `[[agents]]` list of config.toml in place, keeping the rest of the file.
fn edit(dir: &Path, change: impl FnOnce(&mut toml_edit::ArrayOfTables) -> anyhow::Result<()>) -> anyhow::Result<()> {
    crate::settings::edit_entries(dir, "agents", change)
}

/// How the agent starts quire's MCP server on `ws`: this very program, `quire mcp` limited and named as the entry
/// says.
pub fn attach(ws: &Workspace, entry: &AgentConfig) -> anyhow::Result<McpAttach> {
    attach_as(ws, entry, &entry.client_name())
}

/// [`attach`], the server naming its client `client` (an automation run by the agent: its name).
fn attach_as(ws: &Workspace, entry: &AgentConfig, client: &str) -> anyhow::Result<McpAttach> {
    let command = std::env::current_exe().context("cannot find quire's own program to give the agent")?;
    let path = ws
        .path()
        .context("an agent reaches quire's notes through a workspace file, not one in memory")?;
    let mut args = vec![
        "--workspace".to_owned(),
        path.display().to_string(),
        "mcp".to_owned(),
        "--client-name".to_owned(),
        client.to_owned(),
    ];
    if !entry.applies_writes() {
        args.push("--review".to_owned());
    }
    for notebook in &entry.notebooks {
        let found = ws.read(&quire_core::Actor::User, |r| r.find_notebook(notebook))?;
        if found.is_none() {
            bail!(
                "the agent {} is limited to the notebook {notebook:?}, which does not exist any more (renamed or \
                 deleted): remove the agent and add it again with the notebook's name now (`quire agent remove {}`)",
                entry.name,
                entry.name
            );
        }
        args.push("--notebook".to_owned());
        args.push(notebook.clone());
    }
    // quire's own configuration and data, where this process found them, for the server the agent starts.
    let env = ["XDG_CONFIG_HOME", "XDG_DATA_HOME", "HOME"]
        .iter()
        .filter_map(|name| std::env::var(name).ok().map(|value| ((*name).to_owned(), value)))
        .collect();
    Ok(McpAttach {
        name: "quire".to_owned(),
        command,
        args,
        env,
    })
}

/// The configured agents as the web app's sidebar runs them, read again at each call (the picker's next look sees an
/// agent added in a terminal). One that cannot start (a notebook gone) is left out and said in the log.
pub fn web_agents(ws: &Workspace) -> Vec<quire_web::WebAgent> {
    if ws.path().is_none() {
        return Vec::new();
    }
    let agents = match list() {
        Ok(agents) => agents,
        Err(e) => {
            tracing::warn!(error = %format!("{e:#}"), "the sidebar offers no external agent");
            return Vec::new();
        }
    };
    agents
        .iter()
        .filter_map(|entry| {
            let ready = attach(ws, entry).and_then(|attach| {
                Ok(quire_web::WebAgent {
                    agent: entry.agent(),
                    attach,
                    cwd: working_dir(entry)?,
                })
            });
            ready
                .map_err(
                    |e| tracing::warn!(agent = %entry.name, error = %format!("{e:#}"), "the sidebar does not offer it"),
                )
                .ok()
        })
        .collect()
}

/// Starts a session with the agent `entry` on `ws`, in its data folder (the agent's working directory: quire gives
/// it no folder of the person's).
pub async fn start(ws: &Workspace, entry: &AgentConfig) -> anyhow::Result<AcpSession> {
    start_as(ws, entry, &entry.client_name()).await
}

/// [`start`], its reads and writes through quire recorded under `client`.
pub async fn start_as(ws: &Workspace, entry: &AgentConfig, client: &str) -> anyhow::Result<AcpSession> {
    let attach = attach_as(ws, entry, client)?;
    let cwd = working_dir(entry)?;
    Ok(AcpSession::start(&entry.agent(), &attach, &cwd).await?)
}

/// Where the agent works: the folder it was given, or, without one, a folder of its own (none of the person's).
fn working_dir(entry: &AgentConfig) -> anyhow::Result<std::path::PathBuf> {
    match &entry.files {
        Some(folder) => Ok(std::path::PathBuf::from(folder)),
        None => agent_dir(&entry.name),
    }
}

/// The agent's own folder (its working directory), made when missing.
fn agent_dir(name: &str) -> anyhow::Result<std::path::PathBuf> {
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let dir = dirs::data_dir()
        .context("cannot find your data directory")?
        .join("quire")
        .join("agents")
        .join(safe);
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    Ok(dir)
}

/// Ctrl-C (or a termination signal) cancels the turn running (the agent is told, and killed if it has not stopped
/// within a few seconds); one between turns, or a second one, ends quire at once (an agent in the same terminal gets
/// the same Ctrl-C).
pub fn stop_on_signals(
    turn: std::sync::Arc<std::sync::Mutex<tokio_util::sync::CancellationToken>>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        #[cfg(unix)]
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
        loop {
            #[cfg(unix)]
            let terminate = async {
                match term.as_mut() {
                    Some(term) => {
                        term.recv().await;
                    }
                    None => std::future::pending().await,
                }
            };
            #[cfg(not(unix))]
            let terminate = std::future::pending::<()>();
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                () = terminate => {}
            }
            let cancel = turn.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone();
            if cancel.is_cancelled() {
                eprintln!("\nStopped.");
                quire_agent::acp::end_all();
                std::process::exit(130);
            }
            cancel.cancel();
        }
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    #[test]
    fn an_entry_is_written_as_a_table_quire_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("config.toml"), "# mine\n[chat]\nmodel = \"x\"\n").unwrap();
        let entry = AgentConfig {
            name: "codex".into(),
            command: "npx".into(),
            args: vec!["@zed-industries/codex-acp".into()],
            env: BTreeMap::from([("OPENAI_BASE_URL".into(), "http://127.0.0.1:9/v1".into())]),
            inherit_env: vec!["OPENAI_API_KEY".into()],
            notebooks: vec!["Work".into()],
            writes: crate::settings::AgentWrites::Stage,
            files: Some("/home/me/project".into()),
            terminal: true,
        };
        edit(dir.path(), |list| {
            list.push(table_of(&entry));
            Ok(())
        })
        .unwrap();
        let text = std::fs::read_to_string(dir.path().join("config.toml")).unwrap();
        assert!(text.starts_with("# mine\n"), "{text}");
        let config: crate::settings::Config = toml::from_str(&text).unwrap();
        assert_eq!(config.agents, [entry]);
        assert!(
            edit(dir.path(), |list| {
                list.push(toml_edit::Table::new());
                Ok(())
            })
            .is_err(),
            "an entry without a name or command is not written"
        );
    }
}
