//! What can go wrong with a plugin's entry, its grant or its start.

use std::path::{Path, PathBuf};

/// A plugin problem, said to the person as it is.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PluginError {
    /// An entry (or a plugin added from the page) that cannot be used, and what to write instead.
    #[error("{0}")]
    Invalid(String),
    /// A plugin of that name is configured already.
    #[error("a plugin named '{0}' exists already; remove it first (`quire plugin remove {0}`)")]
    Exists(String),
    /// No plugin of that name is configured.
    #[error("there is no plugin named '{0}' (see `quire plugin list`)")]
    Unknown(String),
    /// config.toml or the grants' file cannot be read as it is.
    #[error("{}: {message}", path.display())]
    Config {
        /// The file.
        path: PathBuf,
        /// What is wrong in it.
        message: String,
    },
    /// A file could not be read or written.
    #[error("cannot {what} {}: {source}", path.display())]
    Io {
        /// `read`, `write`, `create`.
        what: &'static str,
        /// The file or folder.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A grant's MCP token could not be made or revoked.
    #[error("the grant of the plugin '{plugin}': {message}")]
    Grant {
        /// The plugin.
        plugin: String,
        /// What went wrong.
        message: String,
    },
    /// The plugin did not start or list its tools.
    #[error("{0}")]
    Start(String),
}

impl PluginError {
    pub(crate) fn io(what: &'static str, path: &Path, source: std::io::Error) -> PluginError {
        PluginError::Io {
            what,
            path: path.to_owned(),
            source,
        }
    }

    pub(crate) fn config(path: &Path, message: String) -> PluginError {
        PluginError::Config {
            path: path.to_owned(),
            message,
        }
    }
}
