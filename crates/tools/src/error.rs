//! Errors: [`Error`] for the registry's callers, [`ToolError`] for a tool's failure as the model sees it.

/// What can go wrong when using the registry itself (as opposed to a tool failing, which is a [`ToolError`]
/// reported inside a [`crate::ToolResult`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No tool has this name. Consumers report it differently from a tool's failure (MCP: JSON-RPC -32602).
    #[error("Unknown tool '{name}'. Call one of the listed tools.")]
    UnknownTool {
        /// The name that was called.
        name: String,
    },
    /// A plugin tool's name is already taken.
    #[error("A tool named '{0}' already exists; choose another name.")]
    NameTaken(String),
    /// A plugin tool's declaration is not valid.
    #[error("Invalid tool declaration: {0}")]
    InvalidTool(String),
    /// The workspace failed.
    #[error(transparent)]
    Core(#[from] quire_core::Error),
}

/// A tool's failure, as a full sentence the model can act on. It becomes `{"error": "..."}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError(String);

impl ToolError {
    /// A failure with this message.
    pub fn new(message: impl Into<String>) -> ToolError {
        ToolError(message.into())
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<quire_core::Error> for ToolError {
    fn from(e: quire_core::Error) -> ToolError {
        if e.is_caller_error() {
            ToolError(e.to_string())
        } else {
            ToolError(format!(
                "The workspace could not complete this call ({e}). Try again; if it keeps failing, tell the user."
            ))
        }
    }
}
