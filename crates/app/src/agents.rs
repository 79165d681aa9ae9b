//! `quire agent add|list|remove|test` and `quire chat --agent NAME`: external agents that speak ACP, in words;
//! quire-host's `agents` keeps their entries and starts them, quire-agent's `acp` speaks to them.

use clap::Subcommand;
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
        /// Let it read and write the text files of this folder (its working directory then); by default it gets no
        /// file system.
        #[arg(long, value_name = "DIR")]
        files: Option<std::path::PathBuf>,
        /// Let it run commands (in its folder); by default it gets no terminal.
        #[arg(long)]
        terminal: bool,
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
            files,
            terminal,
            command,
        } => {
            let entry = quire_host::agents::entry(name, notebooks, apply_writes, &env, (files, terminal), command)?;
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
            if out.json {
                return json_value(&serde_json::json!({ "removed": name }));
            }
            line(&format!("Removed {name}."))
        }
        AgentCommand::Test { name } => {
            let ws = ws()?;
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
            let said = runtime.block_on(quire_host::agents::test(&ws, &name))?;
            if out.json {
                return json_value(&serde_json::json!({ "agent": name, "works": true, "said": said }));
            }
            line(&said)
        }
    }
}

/// `quire chat --agent NAME`: each message (the one of --message, else each line typed) is a turn of the agent; its
/// words are printed as they come, its tool calls and plan on standard error, and its permission requests asked here.
/// Ctrl-C cancels the turn running (the agent is told, and ended if it does not stop); a second one ends the chat.
pub(crate) fn chat(
    ws: &Workspace,
    name: String,
    message: Option<String>,
    json_output: bool,
) -> anyhow::Result<std::process::ExitCode> {
    use std::io::{IsTerminal as _, Write as _};
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
        let interactive = message.is_none();
        let typing = std::io::stdin().is_terminal();
        if interactive && typing {
            eprintln!("Type a message and press Enter; /quit ends the chat, Ctrl-C stops the agent's turn.");
        }
        // Between turns the token is a cancelled one: Ctrl-C at the prompt ends the chat at once.
        let idle = || {
            let token = tokio_util::sync::CancellationToken::new();
            token.cancel();
            token
        };
        let turn_cancel = std::sync::Arc::new(std::sync::Mutex::new(idle()));
        let signals = quire_host::agents::stop_on_signals(turn_cancel.clone());
        let mut pending = message;
        let mut last = None;
        loop {
            let message = match pending.take() {
                Some(message) => message,
                None if !interactive => break,
                None => {
                    if typing {
                        eprint!("> ");
                        let _ = std::io::stderr().flush();
                    }
                    // One line at a time: a permission question reads standard input between two messages.
                    let mut line = String::new();
                    if std::io::stdin().read_line(&mut line)? == 0 {
                        break;
                    }
                    match line.trim() {
                        "" => continue,
                        "/quit" | "/exit" => break,
                        text => text.to_owned(),
                    }
                }
            };
            let cancel = tokio_util::sync::CancellationToken::new();
            *turn_cancel.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = cancel.clone();
            let mut show = |event| {
                if !json_output {
                    crate::chat::show_event(event);
                }
            };
            let turn = session
                .prompt(&message, &mut show, &AskFor(name.clone()), &cancel)
                .await?;
            *turn_cancel.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = idle();
            if !json_output {
                crate::output::text("\n")?;
                if turn.stop_reason == "cancelled" {
                    eprintln!("(stopped)");
                }
            }
            last = Some(turn);
        }
        signals.abort();
        session.close().await;
        if json_output && let Some(turn) = last {
            json_value(&serde_json::json!({ "agent": name, "stop_reason": turn.stop_reason, "text": turn.text }))?;
        }
        anyhow::Ok(std::process::ExitCode::SUCCESS)
    })
}

/// Asks on the terminal before an agent's step, in the agent's name.
struct AskFor(String);

impl quire_agent::Approver for AskFor {
    fn approve<'a>(
        &'a self,
        request: &'a quire_agent::ApprovalRequest,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = bool> + Send + 'a>> {
        let with = if request.arguments.is_null() {
            String::new()
        } else {
            format!(" with {}", request.arguments)
        };
        let question = format!("\n{} asks to run “{}”{with}. Allow? [y/N] ", self.0, request.title);
        Box::pin(async move {
            tokio::task::spawn_blocking(move || crate::chat::ask(&question))
                .await
                .unwrap_or(false)
        })
    }
}
