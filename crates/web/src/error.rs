//! The API's one error type: a refusal or failure of any handler, its HTTP status chosen by its kind (never by its
//! message), and the JSON body the page reads (`{"error": ..., "kind": ...}`).

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use quire_tools::ToolErrorKind;
use serde::Serialize;

use crate::note::Note;

/// What kind of refusal or failure an answer is: the page branches on this, never on the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The note, notebook, revision, change set, chat, ... does not exist (404).
    NotFound,
    /// The request is not valid as asked, or a guard refused it; the message says why (400).
    Invalid,
    /// A refusal for the user's own sake (a protected note's edits cannot be accepted) (403).
    Protected,
    /// The workspace or the server is in a state that stands in the way: a change set already undone, an install
    /// already running (409).
    Conflict,
    /// An undo refused because a later change set changed the same thing since: the page offers to undo both
    /// (`?with_later=true`) (409).
    ChangedSince,
    /// A save made on an older version of the note: the body carries the note as it is now, and nothing was saved
    /// (409).
    StaleEdit,
    /// The request comes from another site, or names a host other than this machine (403).
    Forbidden,
    /// The request carries no open session (401).
    NoSession,
    /// The note is sealed and the workspace is locked: its content opens once the workspace is unlocked with its
    /// passphrase (`POST /api/lock/unlock`); nothing was read or changed (423). A read of the note carries the note
    /// without its content (`locked: true`).
    Locked,
    /// Too many sign-in attempts failed lately (a wrong key or pairing code): wait, then try again (429).
    TooManyAttempts,
    /// A failure of the server or the workspace, not of the request (500).
    Internal,
}

impl ErrorKind {
    /// The HTTP status that says this kind.
    pub fn status(self) -> StatusCode {
        match self {
            ErrorKind::NotFound => StatusCode::NOT_FOUND,
            ErrorKind::Invalid => StatusCode::BAD_REQUEST,
            ErrorKind::Protected | ErrorKind::Forbidden => StatusCode::FORBIDDEN,
            ErrorKind::Conflict | ErrorKind::ChangedSince | ErrorKind::StaleEdit => StatusCode::CONFLICT,
            ErrorKind::NoSession => StatusCode::UNAUTHORIZED,
            ErrorKind::Locked => StatusCode::LOCKED,
            ErrorKind::TooManyAttempts => StatusCode::TOO_MANY_REQUESTS,
            ErrorKind::Internal => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

/// The body of every refusal and failure of the API.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct ErrorBody {
    /// What went wrong, in words, shown to the person as it is.
    pub error: String,
    /// What kind of refusal it is; the page branches on this.
    pub kind: ErrorKind,
    /// With `stale_edit`: the note as it is now, to load or to save over. With `locked`, from a read of the note:
    /// the note without its content, to show its title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<Box<Note>>,
}

/// A refusal or failure of a handler. It becomes the status of its kind and an [`ErrorBody`].
#[derive(Debug)]
pub(crate) struct ApiError(ErrorBody);

impl ApiError {
    /// A refusal or failure of this kind, said in `message`.
    pub(crate) fn new(kind: ErrorKind, message: impl Into<String>) -> ApiError {
        ApiError(ErrorBody {
            error: message.into(),
            kind,
            note: None,
        })
    }

    /// A request that is not valid as asked.
    pub(crate) fn invalid(message: impl Into<String>) -> ApiError {
        ApiError::new(ErrorKind::Invalid, message)
    }

    /// A failure of the server itself.
    pub(crate) fn internal(message: impl Into<String>) -> ApiError {
        ApiError::new(ErrorKind::Internal, message)
    }

    /// A save refused because the note changed since the editor loaded it, with the note as it is now.
    pub(crate) fn stale_edit(current: Note) -> ApiError {
        ApiError(ErrorBody {
            error: "The note changed since it was loaded (another window or an AI client saved it). Nothing was \
                    saved; your text is still in the editor. Keep your text (it is saved over theirs) or load \
                    theirs (yours is kept beside it to copy from)."
                .to_owned(),
            kind: ErrorKind::StaleEdit,
            note: Some(Box::new(current)),
        })
    }

    /// A read of a sealed note while the workspace is locked, with what can be shown of the note.
    pub(crate) fn locked(note: Note) -> ApiError {
        ApiError(ErrorBody {
            error: format!(
                "\u{201c}{}\u{201d} is sealed: unlock with the workspace's passphrase to read it.",
                note.note.title
            ),
            kind: ErrorKind::Locked,
            note: Some(Box::new(note)),
        })
    }

    /// Its kind.
    pub(crate) fn kind(&self) -> ErrorKind {
        self.0.kind
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.0.kind.status(), Json(self.0)).into_response()
    }
}

/// Core's refusals by their variant: a missing thing, a conflict, a stale save, an undo in the way, a sealed note
/// while locked; every other refusal of a guard or a check is a request the person can change (400, a wrong
/// passphrase too); the database and the file system fail (500).
impl From<quire_core::Error> for ApiError {
    fn from(e: quire_core::Error) -> ApiError {
        use quire_core::Error as E;
        let kind = match &e {
            E::NotFound(_) => ErrorKind::NotFound,
            E::Conflict(_) | E::NotebookTitleTaken(_) => ErrorKind::Conflict,
            E::ChangedSince(_) => ErrorKind::ChangedSince,
            E::StaleEdit { .. } => ErrorKind::StaleEdit,
            E::Locked { .. } => ErrorKind::Locked,
            // Damaged ciphertext is nothing the request can change.
            E::SealBroken { .. } => ErrorKind::Internal,
            e if e.is_caller_error() => ErrorKind::Invalid,
            _ => ErrorKind::Internal,
        };
        ApiError::new(kind, e.to_string())
    }
}

/// A read-only tool's failure by its kind: not found is 404, a conflict 409, a sealed note while locked 423, a
/// failure inside is 500, and anything else the request can change (400).
impl From<quire_tools::ToolError> for ApiError {
    fn from(e: quire_tools::ToolError) -> ApiError {
        let kind = match e.kind() {
            ToolErrorKind::NotFound => ErrorKind::NotFound,
            ToolErrorKind::Conflict => ErrorKind::Conflict,
            ToolErrorKind::Locked => ErrorKind::Locked,
            ToolErrorKind::Internal => ErrorKind::Internal,
            _ => ErrorKind::Invalid,
        };
        ApiError::new(kind, e.message())
    }
}

/// The agent's refusal of accepted edits: stale edits are a conflict, a protected note is refused, anything else
/// is a request to change.
impl From<quire_agent::Error> for ApiError {
    fn from(e: quire_agent::Error) -> ApiError {
        let kind = match &e {
            quire_agent::Error::Stale { .. } => ErrorKind::Conflict,
            quire_agent::Error::Protected { .. } => ErrorKind::Protected,
            _ => ErrorKind::Invalid,
        };
        ApiError::new(kind, e.to_string())
    }
}

/// A blocking task that panicked or was cancelled.
impl From<tokio::task::JoinError> for ApiError {
    fn from(e: tokio::task::JoinError) -> ApiError {
        ApiError::internal(e.to_string())
    }
}

/// A query string the handler cannot read (an unknown parameter, a number that is not one).
impl From<axum::extract::rejection::QueryRejection> for ApiError {
    fn from(e: axum::extract::rejection::QueryRejection) -> ApiError {
        ApiError::invalid(e.body_text())
    }
}
