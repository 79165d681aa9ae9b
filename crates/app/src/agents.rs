//! `quire agent add|list|remove|test` and `quire chat --agent NAME`: external agents that speak ACP, in words;
//! quire-host's `agents` keeps their entries and starts them, quire-agent's `acp` speaks to them.

use clap::Subcommand;
use quire_agent::{Approver, AutoApprove};
use quire_core::Workspace;

use crate::output::{Output, json_value, line};

#[derive(Debug, Subcommand)]
pub(crate) enum AgentCommand {
    /// Add an agent that speaks ACP (Codex through codex-acp, Claude Code, Gemini CLI, your own): its command after
    /// --. It reaches your notes through quire's MCP server only; its writes wait for your review.
    Add {
        /// What to call it (`quire chat --agent NAME`).
        name: String,
        /// Limit it to this notebook (title or path); repeat for more.
        #[arg(long = "notebook", short = 'n', value_name = "NOTEBOOK")]
        notebooks: Vec<String>,
        /// Apply its writes at once instead of staging them for review.
        #[arg(long)]
        apply_writes: bool,
        /// An environment variable for it, NAME=VALUE; repeat for more.
        #[arg(long = "env", value_name = "NAME=VALUE")]
        env: Vec<String>,
        /// The command and its arguments.
        #[arg(last = true, required = true, value_name = "COMMAND")]
        command: Vec<String>,
    },
    /// The agents.
    List,
    /// Remove an agent.
    Remove {
        /// Its name.
        name: String,
    },
    /// Start the agent and a session with quire's MCP server attached, then end it: says whether it works.
    Test {
        /// Its name.
        name: String,
    },
}

pub(crate) fn run(
    out: &Output,
    ws: impl FnOnce() -> anyhow::Result<Workspace>,
    command: AgentCommand,
) -> anyhow::Result<()> {
    match command {
        AgentCommand::Add {
            name,
            notebooks,
            apply_writes,
            env,
            command,
        } => {
            let entry = quire_host::agents::entry(name, notebooks, apply_writes, &env, command)?;
            quire_host::agents::add(&ws()?, &entry)?;
            if out.json {
                return json_value(&entry);
            }
            let name = &entry.name;
            line(&format!(
                "Added {name}: `quire chat --agent {name}`; check it starts with `quire agent test {name}`."
            ))
        }
        AgentCommand::List => {
            let agents = quire_host::agents::list()?;
            if out.json {
                return json_value(&agents);
            }
            if agents.is_empty() {
                return line("No agent yet: `quire agent add NAME -- COMMAND ARGS` adds one that speaks ACP.");
            }
            agents.iter().try_for_each(|a| line(&quire_host::agents::describe(a)))
        }
        AgentCommand::Remove { name } => {
            quire_host::agents::remove(&name)?;
            line(&format!("Removed {name}."))
        }
        AgentCommand::Test { name } => {
            let ws = ws()?;
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
            line(&runtime.block_on(quire_host::agents::test(&ws, &name))?)
        }
    }
}

/// `quire chat --agent NAME`: each message (the one of --message, else each line typed) is a turn of the agent; its
/// words are printed as they come, its tool calls and plan on standard error, and its permission requests asked here.
pub(crate) fn chat(
    ws: &Workspace,
    name: String,
    message: Option<String>,
    approve: bool,
    json_output: bool,
) -> anyhow::Result<std::process::ExitCode> {
    let entry = quire_host::agents::find(&name)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let mut session = quire_host::agents::start(ws, &entry).await?;
        let writes = if entry.applies_writes() {
            "applied"
        } else {
            "staged for your review (quire review)"
        };
        let info = session
            .agent_info
            .as_ref()
            .map(|i| format!(" ({i})"))
            .unwrap_or_default();
        eprintln!("{name}{info}: its writes are {writes}.");
        let approver: &dyn Approver = if approve {
            &AutoApprove(true)
        } else {
            &crate::chat::AskOnTerminal
        };
        let cancel = tokio_util::sync::CancellationToken::new();
        let messages: Box<dyn Iterator<Item = String>> = match message {
            Some(message) => Box::new(std::iter::once(message)),
            None => Box::new(
                std::io::stdin()
                    .lines()
                    .map_while(Result::ok)
                    .filter(|l| !l.trim().is_empty()),
            ),
        };
        let mut last = None;
        for message in messages {
            let mut show = |event| {
                if !json_output {
                    crate::chat::show_event(event)
                }
            };
            last = Some(session.prompt(&message, &mut show, approver, &cancel).await?);
            if !json_output {
                crate::output::text("\n")?;
            }
        }
        session.close().await;
        if json_output && let Some(turn) = last {
            json_value(&serde_json::json!({ "agent": name, "stop_reason": turn.stop_reason, "text": turn.text }))?;
        }
        anyhow::Ok(std::process::ExitCode::SUCCESS)
    })
}
