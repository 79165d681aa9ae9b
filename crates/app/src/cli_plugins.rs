//! The command line of `quire plugin`.

use clap::{Args, Subcommand};

/// `quire plugin ...`.
#[derive(Debug, Subcommand)]
pub(crate) enum PluginCommand {
    /// Add a plugin, start it once and list its tools.
    Add(PluginAddArgs),
    /// List the plugins with their state and tools (each is started to ask it).
    List,
    /// Remove a plugin (and revoke its MCP token, if it had one).
    Remove {
        /// The plugin's name.
        name: String,
    },
    /// Start a plugin, list its tools and report what does not work.
    Test {
        /// The plugin's name.
        name: String,
    },
}

/// `quire plugin add`.
#[derive(Debug, Args)]
pub(crate) struct PluginAddArgs {
    /// Its name (a-z 0-9 -): its tools are offered as NAME__tool.
    pub(crate) name: String,
    /// The address of a Streamable HTTP server, instead of a command.
    #[arg(long)]
    pub(crate) url: Option<String>,
    /// A header for an HTTP plugin, as 'Name: value'; repeat for several.
    #[arg(long = "header", value_name = "HEADER")]
    pub(crate) headers: Vec<String>,
    /// A variable of its environment, as NAME=value; repeat for several.
    #[arg(long = "env", value_name = "NAME=VALUE")]
    pub(crate) env: Vec<String>,
    /// The longest a call may take ("30s", "2m"; default 60 s).
    #[arg(long)]
    pub(crate) timeout: Option<String>,
    /// Ask before every call that writes, not only destructive ones.
    #[arg(long)]
    pub(crate) ask_before_writes: bool,
    /// Offer its tools to quire's own agent only (the sidebar, `quire chat`), not to `quire mcp`'s clients.
    #[arg(long)]
    pub(crate) sidebar_only: bool,
    /// Give it a token to quire's MCP server reaching this notebook (title or path); repeat for several.
    #[arg(long = "grant-notebook", value_name = "NOTEBOOK")]
    pub(crate) grant_notebooks: Vec<String>,
    /// Give it a read-only token to quire's MCP server (with --grant-notebook: limited to those).
    #[arg(long)]
    pub(crate) grant_read_only: bool,
    /// The address of your `quire mcp --http`, passed to it as QUIRE_MCP_URL.
    #[arg(long)]
    pub(crate) grant_url: Option<String>,
    /// The program and its arguments, after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    pub(crate) command: Vec<String>,
}
