//! quire-host: what the quire binary does that is not its command line, so that the command line (`crates/app`)
//! parses, asks and prints, and this decides.
//!
//! - [`settings`]: the one owner of `config.toml` and of how each setting is resolved (flags, then the environment,
//!   then the file), and every write to the file but the `[[plugins]]` entries (quire-plugins').
//! - [`chat_models`]: the chat models' precedence, prices, and a model added from the page.
//! - [`devices`]: the person's other devices (pairing codes, the list, ending one), a running server's address
//!   beyond loopback, and the certificate `--tls-self-signed` makes.
//! - [`embedder`]: which sentence model search by meaning uses, and where catalog models are installed.
//! - [`secrets`]: the secrets kept in the configuration directory (the MCP token, the web key).
//! - [`mcp`]: the MCP server as the configuration makes it, its token file (named tokens, OAuth's clients and grants)
//!   followed while a server runs, and OAuth's one fetch (client metadata documents, from checked addresses only).
//! - [`plugins`]: quire-plugins' host started with quire's HTTP client, and grants' tokens in the token file.
//! - [`background`]: the components that run beside a server (the indexer, the sync loop, the plugins), started
//!   together, each with one status.
//! - [`web`]: the web app as `quire serve` runs it, assembled from the configuration.
//! - [`workspace`]: the workspace a command opens (the default one is created with a welcome note).

pub mod agents;
pub mod automations;
pub mod background;
pub mod capture;
pub mod chat_models;
pub mod conflicts;
pub mod devices;
pub mod embedder;
pub mod ledger;
pub mod mcp;
pub mod plugins;
pub mod secrets;
pub mod settings;
pub mod web;
pub mod workspace;
