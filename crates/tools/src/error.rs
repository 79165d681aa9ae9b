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

/// What kind of failure a [`ToolError`] is, so that a consumer can react to it (an HTTP status, an offer to the
/// user, a retry) without reading its message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ToolErrorKind {
    /// The note, notebook, tag, attachment, ... does not exist, or is not visible to this caller.
    NotFound,
    /// The arguments are not valid, or the call asks for something that cannot be done as asked.
    Invalid,
    /// A guard refused: the target is protected, a system notebook, outside the caller's scope, open in the
    /// user's editor, or reserved for the user.
    Protected,
    /// The workspace changed in a way that stands in the way (an undo after later changes, a title already
    /// taken).
    Conflict,
    /// Something the tool needs is not available now (the embedding model, the client, the workspace is busy);
    /// the same call may work later.
    Unavailable,
    /// A failure inside quire or a plugin: a bug, a panic, a database or file-system error.
    Internal,
    /// The note is sealed and the workspace is locked: only the user can open it, with the passphrase, on their
    /// own paths (the app and the CLI); no tool can.
    Locked,
}

impl ToolErrorKind {
    /// The word used in JSON: `not_found`, `invalid`, ...
    pub fn as_str(self) -> &'static str {
        match self {
            ToolErrorKind::NotFound => "not_found",
            ToolErrorKind::Invalid => "invalid",
            ToolErrorKind::Protected => "protected",
            ToolErrorKind::Conflict => "conflict",
            ToolErrorKind::Unavailable => "unavailable",
            ToolErrorKind::Internal => "internal",
            ToolErrorKind::Locked => "locked",
        }
    }
}

/// A tool's failure: a full sentence the model can act on, and its [`ToolErrorKind`]. It becomes
/// `{"error": "..."}`; the kind is for Rust callers (HTTP statuses, the terminal's wording), not part of that JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError {
    kind: ToolErrorKind,
    message: String,
}

impl ToolError {
    /// A failure of this kind with this message.
    pub fn of_kind(kind: ToolErrorKind, message: impl Into<String>) -> ToolError {
        ToolError {
            kind,
            message: message.into(),
        }
    }

    /// A call that is not valid as asked ([`ToolErrorKind::Invalid`]): the usual failure of a tool's own checks.
    pub fn new(message: impl Into<String>) -> ToolError {
        ToolError::of_kind(ToolErrorKind::Invalid, message)
    }

    /// Something that does not exist or is not visible ([`ToolErrorKind::NotFound`]).
    pub fn not_found(message: impl Into<String>) -> ToolError {
        ToolError::of_kind(ToolErrorKind::NotFound, message)
    }

    /// A failure inside quire or a plugin ([`ToolErrorKind::Internal`]).
    pub fn internal(message: impl Into<String>) -> ToolError {
        ToolError::of_kind(ToolErrorKind::Internal, message)
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// What kind of failure it is.
    pub fn kind(&self) -> ToolErrorKind {
        self.kind
    }
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ToolError {}

impl From<quire_core::Error> for ToolError {
    fn from(e: quire_core::Error) -> ToolError {
        use quire_core::Error as E;
        let kind = match &e {
            E::NotFound(_) => ToolErrorKind::NotFound,
            E::System { .. }
            | E::Protected(_)
            | E::OpenInEditor
            | E::ProtectedContent
            | E::DangerousAttribute(_)
            | E::UserOnly(_)
            | E::OutsideScope(_) => ToolErrorKind::Protected,
            E::Conflict(_) | E::ChangedSince(_) | E::StaleEdit { .. } | E::NotebookTitleTaken(_) => {
                ToolErrorKind::Conflict
            }
            E::EmbedderUnavailable(_) => ToolErrorKind::Unavailable,
            E::Locked { .. } => ToolErrorKind::Locked,
            E::SealBroken { .. } => ToolErrorKind::Internal,
            E::Database(_) | E::Io { .. } => ToolErrorKind::Internal,
            _ => ToolErrorKind::Invalid,
        };
        if e.is_caller_error() {
            ToolError::of_kind(kind, e.to_string())
        } else {
            ToolError::of_kind(
                kind,
                format!(
                    "The workspace could not complete this call ({e}). Try again; if it keeps failing, tell the user."
                ),
            )
        }
    }
}
