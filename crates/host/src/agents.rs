//! External agents (ACP): the `[[agents]]` entries of config.toml (`quire agent add|list|remove|test`), and a session
//! with one, started with quire's own MCP server attached: `quire mcp` on the same workspace, limited to the entry's
//! notebooks, its writes staged for review unless the entry says `writes = "apply"`, its reads and writes recorded
//! under the agent's name. quire-agent's `acp` speaks the protocol.

use std::path::Path;

use anyhow::{Context, bail};
use quire_agent::acp::{AcpSession, McpAttach};
use quire_core::Workspace;

pub use crate::settings::AgentConfig;
use crate::settings::{config_dir, read_config};

/// The entry `quire agent add NAME [--notebook NB]... [--apply-writes] [--env K=V]... -- COMMAND ARGS` makes.
pub fn entry(
    name: String,
    notebooks: Vec<String>,
    apply_writes: bool,
    env: &[String],
    mut command: Vec<String>,
) -> anyhow::Result<AgentConfig> {
    let env = env
        .iter()
        .map(|pair| {
            pair.split_once('=')
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .with_context(|| format!("--env {pair}: write NAME=VALUE"))
        })
        .collect::<anyhow::Result<_>>()?;
    if command.is_empty() {
        bail!("give the agent's command after --: `quire agent add {name} -- COMMAND ARGS`");
    }
    let program = command.remove(0);
    Ok(AgentConfig {
        name,
        command: program,
        args: command,
        env,
        notebooks,
        writes: apply_writes.then(|| "apply".to_owned()),
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
    format!(
        "{}  {} {}  ({reach}; {writes})",
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

/// The configured agents.
pub fn list() -> anyhow::Result<Vec<AgentConfig>> {
    Ok(read_config(&config_dir()?)?.agents)
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
    if let Some(writes) = &entry.writes
        && writes != "stage"
        && writes != "apply"
    {
        bail!("writes is \"stage\" or \"apply\", not {writes:?}");
    }
    for notebook in &entry.notebooks {
        let found = ws.read(&quire_core::Actor::User, |r| r.find_notebook(notebook))?;
        if found.is_none() {
            bail!("no notebook is named {notebook:?} (`quire notebook list`)");
        }
    }
    edit(&config_dir()?, |list| {
        if list
            .iter()
            .any(|t| t.get("name").and_then(|n| n.as_str()) == Some(name))
        {
            bail!("an agent is named {name:?} already: remove it first (`quire agent remove {name}`)");
        }
        list.push(table_of(entry));
        Ok(())
    })
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
    if let Some(writes) = &entry.writes {
        table.insert("writes", value(writes.as_str()));
    }
    table
}

/// Edits the `[[agents]]` list of config.toml in place, keeping the rest of the file; the result must read as a
/// configuration quire takes.
fn edit(dir: &Path, change: impl FnOnce(&mut toml_edit::ArrayOfTables) -> anyhow::Result<()>) -> anyhow::Result<()> {
    let path = dir.join("config.toml");
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let mut doc: toml_edit::DocumentMut = text
        .parse()
        .with_context(|| format!("{} is not TOML", path.display()))?;
    let list = doc
        .entry("agents")
        .or_insert(toml_edit::Item::ArrayOfTables(toml_edit::ArrayOfTables::new()))
        .as_array_of_tables_mut()
        .with_context(|| format!("{}: `agents` is not a list of [[agents]] entries", path.display()))?;
    change(list)?;
    let text = doc.to_string();
    toml::from_str::<crate::settings::Config>(&text)
        .with_context(|| format!("{} would not be a configuration quire reads", path.display()))?;
    std::fs::create_dir_all(dir)?;
    quire_loopback::write_private(&path, &text).with_context(|| format!("cannot write {}", path.display()))
}

/// How the agent starts quire's MCP server on `ws`: this very program, `quire mcp` limited and named as the entry
/// says.
pub fn attach(ws: &Workspace, entry: &AgentConfig) -> anyhow::Result<McpAttach> {
    let command = std::env::current_exe().context("cannot find quire's own program to give the agent")?;
    let path = ws
        .path()
        .context("an agent reaches quire's notes through a workspace file, not one in memory")?;
    let mut args = vec![
        "--workspace".to_owned(),
        path.display().to_string(),
        "mcp".to_owned(),
        "--client-name".to_owned(),
        entry.client_name(),
    ];
    if !entry.applies_writes() {
        args.push("--review".to_owned());
    }
    for notebook in &entry.notebooks {
        args.push("--notebook".to_owned());
        args.push(notebook.clone());
    }
    Ok(McpAttach {
        name: "quire".to_owned(),
        command,
        args,
    })
}

/// The configured agents as the web app's sidebar runs them.
pub fn web_agents(ws: &Workspace) -> anyhow::Result<Vec<quire_web::WebAgent>> {
    let Some(_) = ws.path() else {
        return Ok(Vec::new());
    };
    list()?
        .iter()
        .map(|entry| {
            Ok(quire_web::WebAgent {
                agent: entry.agent(),
                attach: attach(ws, entry)?,
                cwd: agent_dir(&entry.name)?,
                applies_writes: entry.applies_writes(),
            })
        })
        .collect()
}

/// Starts a session with the agent `entry` on `ws`, in its data folder (the agent's working directory: quire gives
/// it no folder of the person's).
pub async fn start(ws: &Workspace, entry: &AgentConfig) -> anyhow::Result<AcpSession> {
    let attach = attach(ws, entry)?;
    let cwd = agent_dir(&entry.name)?;
    Ok(AcpSession::start(&entry.agent(), &attach, &cwd).await?)
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
            notebooks: vec!["Work".into()],
            writes: None,
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
