//! `quire plugin add | list | remove | test`. What an entry may say and how it becomes a plugin is quire-plugins'
//! ([`quire_plugins::config`]); starting them with quire's HTTP client and keeping grants' tokens is quire-host's.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, bail};
use quire_core::Workspace;
use quire_host::plugins::{FileGrants, Revoker, new_host};
use quire_host::settings::config_dir;
use quire_plugins::config::{GrantConfig, PluginConfig, read_entries, remove_entry, resolve, write_entry};
use quire_plugins::grants::{drop_grant, keep_grants, usable_specs};
use quire_plugins::running;
use quire_plugins::{PluginSpec, PluginStatus, effect_name};
use quire_tools::ToolRegistry;

use crate::cli::PluginCommand;

/// Drops a plugin's entry, its token (revoked) and its folder; an error when there was no such plugin.
fn remove_plugin(dir: &Path, name: &str) -> anyhow::Result<bool> {
    if !remove_entry(dir, name)? {
        bail!("there is no plugin named '{name}' (see `quire plugin list`)");
    }
    let revoked = drop_grant(dir, name, Some(&Revoker { dir: dir.to_owned() }))?;
    let _ = std::fs::remove_dir_all(quire_plugins::config::plugin_dir(name));
    Ok(revoked)
}

/// `quire plugin ...`.
pub(crate) fn run(
    ws: impl FnOnce() -> anyhow::Result<Workspace>,
    command: PluginCommand,
    json: bool,
) -> anyhow::Result<std::process::ExitCode> {
    let dir = config_dir()?;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    match command {
        PluginCommand::Add(args) => {
            let entry = args.entry()?;
            resolve(&entry, None)?;
            if read_entries(&dir)?.iter().any(|p| p.name == entry.name) {
                bail!(
                    "a plugin named '{}' exists already; remove it first (`quire plugin remove {}`)",
                    entry.name,
                    entry.name
                );
            }
            write_entry(&dir, &entry)?;
            // Its token, made as quire makes it at start; a grant that cannot be made takes the entry back out.
            if entry.grant.is_some()
                && let Err(e) = ws().and_then(|ws| {
                    let grants = FileGrants { ws, dir: dir.clone() };
                    Ok(keep_grants(&dir, &grants)?)
                })
            {
                let _ = remove_plugin(&dir, &entry.name);
                return Err(e);
            }
            if !json {
                crate::output::line(&format!(
                    "Added the plugin '{}' to {}.",
                    entry.name,
                    dir.join("config.toml").display()
                ))?;
            }
            test(&runtime, &dir, &entry.name, json)
        }
        PluginCommand::Remove { name } => {
            let revoked = remove_plugin(&dir, &name)?;
            crate::output::line(&if revoked {
                format!("Removed the plugin '{name}' and revoked its MCP token.")
            } else {
                format!("Removed the plugin '{name}'.")
            })?;
            Ok(std::process::ExitCode::SUCCESS)
        }
        PluginCommand::List => {
            let statuses = runtime.block_on(statuses(&dir))?;
            let hosts = running::running_hosts();
            if json {
                let mut listed = serde_json::to_value(&statuses)?;
                for entry in listed.as_array_mut().into_iter().flatten() {
                    let name = entry["name"].as_str().unwrap_or_default().to_owned();
                    entry["processes"] = serde_json::to_value(running::runs_in(&hosts, &name))?;
                }
                crate::output::json_value(&listed)?;
            } else if statuses.is_empty() {
                crate::output::line("No plugins. `quire plugin add NAME -- COMMAND ARGS...` adds one.")?;
            } else {
                for status in &statuses {
                    crate::output::text(&describe(status))?;
                    crate::output::text(&running::describe(&running::runs_in(&hosts, &status.name)))?;
                }
            }
            Ok(std::process::ExitCode::SUCCESS)
        }
        PluginCommand::Test { name } => test(&runtime, &dir, &name, json),
    }
}

impl crate::cli::PluginAddArgs {
    /// The `[[plugins]]` entry these flags describe.
    fn entry(&self) -> anyhow::Result<PluginConfig> {
        let mut entry = PluginConfig {
            name: self.name.clone(),
            url: self.url.clone(),
            ..PluginConfig::default()
        };
        match (self.command.split_first(), &self.url) {
            (Some((program, args)), None) => {
                entry.command = Some(program.clone());
                entry.args = args.to_vec();
            }
            (None, Some(_)) => {}
            (Some(_), Some(_)) => bail!("give --url or a command after --, not both"),
            (None, None) => {
                bail!("give the plugin's command after -- (quire plugin add NAME -- COMMAND ARGS...) or --url URL")
            }
        }
        for header in &self.headers {
            let Some((name, value)) = header.split_once(':') else {
                bail!("--header {header:?}: write it as 'Name: value'");
            };
            entry.headers.insert(name.trim().to_owned(), value.trim().to_owned());
        }
        for var in &self.env {
            let Some((name, value)) = var.split_once('=') else {
                bail!("--env {var:?}: write it as NAME=value");
            };
            entry.env.insert(name.to_owned(), value.to_owned());
        }
        entry.timeout = self.timeout.clone().map(toml::Value::String);
        if self.ask_before_writes {
            entry.approve = Some("writes".into());
        }
        if self.sidebar_only {
            entry.expose = Some("sidebar".into());
        }
        if !self.grant_notebooks.is_empty() || self.grant_read_only || self.grant_url.is_some() {
            entry.grant = Some(GrantConfig {
                notebooks: self.grant_notebooks.clone(),
                read_only: self.grant_read_only,
                url: self.grant_url.clone(),
            });
        }
        Ok(entry)
    }
}

/// Starts every configured plugin (enabled or not: this is to look at them), lists its tools, stops it.
async fn statuses(dir: &Path) -> anyhow::Result<Vec<PluginStatus>> {
    let registry = Arc::new(ToolRegistry::empty());
    let host = new_host();
    let (specs, problems) = usable_specs(dir)?;
    for problem in problems {
        eprintln!("warning: {problem}");
    }
    let enabled: BTreeMap<String, bool> = specs.iter().map(|s| (s.name.clone(), s.enabled)).collect();
    let all = specs.into_iter().map(|s| PluginSpec { enabled: true, ..s }).collect();
    host.add_all(all, &registry).await;
    let mut statuses = host.statuses();
    host.shutdown().await;
    for status in &mut statuses {
        if enabled.get(&status.name) == Some(&false) && status.state == "running" {
            status.state = "disabled";
        }
    }
    Ok(statuses)
}

fn test(
    runtime: &tokio::runtime::Runtime,
    dir: &Path,
    name: &str,
    json: bool,
) -> anyhow::Result<std::process::ExitCode> {
    let (specs, problems) = usable_specs(dir)?;
    let Some(spec) = specs.into_iter().find(|s| s.name == name) else {
        if let Some(problem) = problems.iter().find(|p| p.contains(&format!("'{name}'"))) {
            bail!("{problem}");
        }
        bail!("there is no plugin named '{name}' (see `quire plugin list`)");
    };
    let status = runtime.block_on(async {
        let registry = Arc::new(ToolRegistry::empty());
        let host = new_host();
        let _ = host.add(PluginSpec { enabled: true, ..spec }, &registry).await;
        let status = host.statuses().into_iter().next();
        host.shutdown().await;
        status
    });
    let status = status.context("the plugin was not kept")?;
    let ok = status.error.is_none();
    if json {
        crate::output::json_value(&serde_json::to_value(&status)?)?;
    } else {
        crate::output::text(&describe(&status))?;
    }
    if !ok {
        bail!(
            "the plugin '{name}' does not work: fix its entry in {} and run `quire plugin test {name}`, or `quire \
             plugin remove {name}`",
            dir.join("config.toml").display()
        );
    }
    Ok(std::process::ExitCode::SUCCESS)
}

/// A plugin's status for people: its state, then each tool with its effect.
fn describe(status: &PluginStatus) -> String {
    let mut out = format!("{}  {}", status.name, status.state);
    if status.restarts > 0 {
        out.push_str(&format!(" (restarted {} times)", status.restarts));
    }
    out.push('\n');
    if let Some(error) = &status.error {
        out.push_str(&format!("  problem: {error}\n"));
    }
    if status.sidebar_only {
        out.push_str("  for quire's own agent only (expose = \"sidebar\"): quire mcp does not offer its tools\n");
    }
    // Columns as wide as this plugin's longest name and effect (ux-2 #26: a long name pushed its row out of line),
    // then what the tool does: its description's first sentence, or its title when it has none.
    let effects: Vec<String> = status
        .tools
        .iter()
        .map(|tool| {
            let effect = effect_name(tool.effect).replace('_', "-");
            if tool.needs_approval {
                format!("{effect}, asks first")
            } else {
                effect
            }
        })
        .collect();
    let name_width = status.tools.iter().map(|t| t.name.chars().count()).max().unwrap_or(0);
    let effect_width = effects.iter().map(|e| e.chars().count()).max().unwrap_or(0);
    for (tool, effect) in status.tools.iter().zip(&effects) {
        out.push_str(&format!(
            "  {:<name_width$}  {effect:<effect_width$}  {}\n",
            tool.name,
            what_it_does(&tool.description, &tool.title)
        ));
    }
    if status.tools.is_empty() && status.error.is_none() {
        out.push_str("  (no tools)\n");
    }
    out
}

/// A tool in a line: the first sentence of its description (at most 80 characters), or its title.
fn what_it_does(description: &str, title: &str) -> String {
    let first = description.split_inclusive(". ").next().unwrap_or("").trim();
    if first.is_empty() {
        return title.to_owned();
    }
    let mut line: String = first.chars().take(80).collect();
    if first.chars().count() > 80 {
        line.push('…');
    }
    line
}
