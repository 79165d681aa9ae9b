//! The entities of a workspace as plain values: notebooks, notes, tags, attributes, attachments, history, chats.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The id of the system notebook at the root of the notebook tree.
pub const ROOT_NOTEBOOK_ID: &str = "_root";

/// A point in time, stored as milliseconds since the Unix epoch (UTC) and shown as RFC 3339.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(pub i64);

impl Timestamp {
    /// The current time.
    pub fn now() -> Timestamp {
        let since_epoch = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or(0);
        Timestamp(i64::try_from(since_epoch).unwrap_or(i64::MAX))
    }

    /// Milliseconds since the Unix epoch.
    pub fn as_millis(self) -> i64 {
        self.0
    }

    /// The time as RFC 3339 text in UTC, with milliseconds: `2026-01-15T09:30:00.000Z`.
    pub fn to_rfc3339(self) -> String {
        let nanos = i128::from(self.0) * 1_000_000;
        match time::OffsetDateTime::from_unix_timestamp_nanos(nanos) {
            Ok(t) => {
                let format = time::macros::format_description!(
                    "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z"
                );
                t.format(&format).unwrap_or_else(|_| self.0.to_string())
            }
            Err(_) => self.0.to_string(),
        }
    }

    /// Parses RFC 3339 text (any offset) into a timestamp.
    pub fn parse_rfc3339(text: &str) -> Option<Timestamp> {
        let t = time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339).ok()?;
        i64::try_from(t.unix_timestamp_nanos() / 1_000_000).ok().map(Timestamp)
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_rfc3339())
    }
}

impl Serialize for Timestamp {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.to_rfc3339())
    }
}

#[cfg(feature = "schema")]
impl schemars::JsonSchema for Timestamp {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Timestamp".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "type": "string", "format": "date-time", "description": "RFC 3339, UTC" })
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Timestamp::parse_rfc3339(&text)
            .ok_or_else(|| serde::de::Error::custom(format!("'{text}' is not an RFC 3339 time")))
    }
}

/// Who makes a write. Every write names one; the guards apply to every actor but `User`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Actor {
    /// The person who owns the workspace, through the app or the CLI.
    User,
    /// The in-app agent, during one turn of one chat.
    Agent {
        /// The chat the turn belongs to.
        chat: String,
        /// The turn's number within the chat.
        turn: u32,
    },
    /// An external MCP client.
    Mcp {
        /// The client's name as it introduced itself.
        client: String,
    },
    /// A plugin tool.
    Plugin {
        /// The plugin's id.
        id: String,
    },
    /// `quire import`: notes brought in from files. Guarded like the AI actors (it cannot touch protected notes or
    /// set dangerous attributes), except that it may protect what it imports (never unprotect).
    Import {
        /// What was imported: the source folder or file.
        source: String,
    },
    /// Sync, writing what another device of the same person changed (see the `quire-sync` crate). It writes only
    /// through [`crate::Writer::apply_synced_note`] and [`crate::Writer::apply_synced_notebooks`], protected notes
    /// included (they arrive sealed; it holds no key to open them).
    Sync {
        /// The device the change came from: its name and the start of its id.
        device: String,
    },
}

impl Actor {
    /// Whether this actor is the user, the only actor the guards do not restrict.
    pub fn is_user(&self) -> bool {
        matches!(self, Actor::User)
    }

    /// The key under which this actor's writes are grouped into one change set.
    ///
    /// An agent turn spans several tool calls, so all calls of one turn share a change set;
    /// every other actor's `write` call is a change set of its own.
    pub(crate) fn grouping_key(&self) -> Option<String> {
        match self {
            Actor::Agent { chat, turn } => Some(format!("agent:{chat}:{turn}")),
            _ => None,
        }
    }
}

impl fmt::Display for Actor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Actor::User => f.write_str("user"),
            Actor::Agent { chat, turn } => write!(f, "agent (chat {chat}, turn {turn})"),
            Actor::Mcp { client } => write!(f, "mcp client {client}"),
            Actor::Plugin { id } => write!(f, "plugin {id}"),
            Actor::Import { source } => write!(f, "import from {source}"),
            Actor::Sync { device } => write!(f, "sync from device {device}"),
        }
    }
}

/// A notebook: a folder in the tree of notebooks under the system notebook `_root`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Notebook {
    /// Opaque id; ids of system notebooks start with `_`.
    pub id: String,
    /// The notebook's title.
    pub title: String,
    /// The parent notebook; `None` only for `_root`.
    pub parent_id: Option<String>,
    /// An optional icon (an emoji or an icon name).
    pub icon: Option<String>,
    /// Whether the notebook itself is marked protected: non-user actors cannot change it or anything inside it.
    pub is_protected: bool,
    /// Whether it is protected, itself or through a notebook that holds it: what the guards apply. Set by every
    /// read of a notebook; see [`crate::NotebookTree::is_protected`] for the same rule over the whole tree.
    #[serde(default)]
    pub effectively_protected: bool,
    /// When it was created.
    pub created: Timestamp,
    /// When it last changed.
    pub updated: Timestamp,
}

/// A note's metadata: everything but the body. Listings and search results carry this.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NoteSummary {
    /// Opaque id.
    pub id: String,
    /// The notebook that holds the note.
    pub notebook_id: String,
    /// The note's title.
    pub title: String,
    /// Whether the note is a to-do.
    pub is_todo: bool,
    /// When the to-do was completed, if it was.
    pub todo_completed: Option<Timestamp>,
    /// Whether the note is protected, itself or through one of its notebooks.
    pub is_protected: bool,
    /// When it was created.
    pub created: Timestamp,
    /// When it last changed.
    pub updated: Timestamp,
    /// When it was moved to the trash; `None` for a live note.
    pub deleted: Option<Timestamp>,
    /// The names of its tags, sorted.
    pub tags: Vec<String>,
}

/// A note with its Markdown body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Note {
    /// Everything but the body.
    #[serde(flatten)]
    pub summary: NoteSummary,
    /// The Markdown body.
    pub body: String,
}

/// A tag with the number of live notes that carry it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tag {
    /// Opaque id.
    pub id: String,
    /// The name, unique without regard to case.
    pub name: String,
    /// How many live (not trashed) notes carry it.
    pub note_count: u64,
}

/// The two kinds of attribute.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AttributeKind {
    /// A name with a text value.
    Label,
    /// A name pointing at another note.
    Relation,
}

impl AttributeKind {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            AttributeKind::Label => "label",
            AttributeKind::Relation => "relation",
        }
    }

    pub(crate) fn parse(text: &str) -> Option<AttributeKind> {
        match text {
            "label" => Some(AttributeKind::Label),
            "relation" => Some(AttributeKind::Relation),
            _ => None,
        }
    }
}

/// What a label's value holds: text, or a structured value written as JSON.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ValueType {
    /// Text, as written (every relation's value, and a label's unless said otherwise).
    #[default]
    Text,
    /// JSON text: `true`, `42`, `1.5`, `["a","b"]`, `{"k":"v"}`, `null` (front matter's booleans, numbers, lists
    /// and maps, kept as what they are).
    Json,
}

impl ValueType {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            ValueType::Text => "text",
            ValueType::Json => "json",
        }
    }

    pub(crate) fn parse(text: &str) -> ValueType {
        match text {
            "json" => ValueType::Json,
            _ => ValueType::Text,
        }
    }
}

/// A typed key/value on a note: a label (name, value) or a relation (name, target note).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attribute {
    /// Opaque id.
    pub id: String,
    /// The note that owns it.
    pub note_id: String,
    /// Label or relation.
    pub kind: AttributeKind,
    /// The attribute's name.
    pub name: String,
    /// For a label, its value (JSON text when `value_type` says so); for a relation, the target note's id.
    pub value: String,
    /// Whether `value` is text or JSON.
    #[serde(default)]
    pub value_type: ValueType,
    /// When it was created.
    pub created: Timestamp,
    /// When it last changed.
    pub updated: Timestamp,
}

impl Attribute {
    /// A structured label's value, parsed; `None` for text (and for JSON that does not parse, which the workspace
    /// never stores).
    pub fn json(&self) -> Option<serde_json::Value> {
        match self.value_type {
            ValueType::Json => serde_json::from_str(&self.value).ok(),
            ValueType::Text => None,
        }
    }
}

/// Every string of a JSON value (map keys left out), depth first.
pub(crate) fn strings_in(value: &serde_json::Value, out: &mut Vec<String>) {
    match value {
        serde_json::Value::String(s) => out.push(s.clone()),
        serde_json::Value::Array(items) => items.iter().for_each(|v| strings_in(v, out)),
        serde_json::Value::Object(map) => map.values().for_each(|v| strings_in(v, out)),
        _ => {}
    }
}

/// An attachment's metadata.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttachmentInfo {
    /// Opaque id.
    pub id: String,
    /// The note that owns it.
    pub note_id: String,
    /// Its title, usually the file name.
    pub title: String,
    /// Its media type.
    pub mime: String,
    /// Its size in bytes.
    pub size: u64,
    /// Whether text was extracted from it.
    pub has_text: bool,
    /// When it was added.
    pub created: Timestamp,
}

/// How the reading of attachments' text stands ([`crate::Reader::attachment_extraction`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExtractionCounts {
    /// Never tried yet.
    pub waiting: u64,
    /// Images and scans waiting for Tesseract.
    pub waiting_for_ocr: u64,
    /// With text.
    pub read: u64,
    /// That could not be read.
    pub failed: u64,
    /// Why the newest of those could not.
    pub last_failure: Option<String>,
}

/// A snapshot of a note's title and body taken before a write.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Revision {
    /// Sequence number, increasing.
    pub id: i64,
    /// The note it belongs to.
    pub note_id: String,
    /// The title before the write.
    pub title: String,
    /// The body before the write.
    pub body: String,
    /// Who made the write that this revision precedes.
    pub actor: Actor,
    /// The change set of that write.
    pub change_set_id: Option<String>,
    /// When it was taken.
    pub created: Timestamp,
}

/// The kinds of entity the change log records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum EntityKind {
    /// A notebook.
    Notebook,
    /// A note.
    Note,
    /// A tag.
    Tag,
    /// A link between a note and a tag.
    NoteTag,
    /// An attribute.
    Attribute,
    /// An attachment.
    Attachment,
}

impl EntityKind {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            EntityKind::Notebook => "notebook",
            EntityKind::Note => "note",
            EntityKind::Tag => "tag",
            EntityKind::NoteTag => "note_tag",
            EntityKind::Attribute => "attribute",
            EntityKind::Attachment => "attachment",
        }
    }

    pub(crate) fn parse(text: &str) -> Option<EntityKind> {
        [
            EntityKind::Notebook,
            EntityKind::Note,
            EntityKind::Tag,
            EntityKind::NoteTag,
            EntityKind::Attribute,
            EntityKind::Attachment,
        ]
        .into_iter()
        .find(|kind| kind.as_str() == text)
    }
}

/// What a change did to its entity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Operation {
    /// The entity was created.
    Create,
    /// The entity was changed.
    Update,
    /// The entity was removed for good.
    Delete,
}

impl Operation {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Operation::Create => "create",
            Operation::Update => "update",
            Operation::Delete => "delete",
        }
    }

    pub(crate) fn parse(text: &str) -> Option<Operation> {
        match text {
            "create" => Some(Operation::Create),
            "update" => Some(Operation::Update),
            "delete" => Some(Operation::Delete),
            _ => None,
        }
    }
}

/// One row of the append-only change log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Change {
    /// Sequence number, increasing.
    pub seq: i64,
    /// The change set it belongs to.
    pub change_set_id: String,
    /// The kind of entity.
    pub entity: EntityKind,
    /// The entity's id (for a note-tag link, `note_id/tag_id`).
    pub entity_id: String,
    /// What happened.
    pub operation: Operation,
    /// Who did it.
    pub actor: Actor,
    /// When.
    pub at: Timestamp,
}

/// A group of changes made by one actor call (or one agent turn), revertable as a whole.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangeSet {
    /// Opaque id.
    pub id: String,
    /// Who made it.
    pub actor: Actor,
    /// When it started.
    pub created: Timestamp,
    /// How many changes it holds.
    pub change_count: u64,
    /// When it was reverted, if it was.
    pub reverted: Option<Timestamp>,
    /// The change set this one undid, when it is an undo.
    pub undoes: Option<String>,
}

/// One message of a stored chat.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatMessage {
    /// `user`, `assistant` or `tool`.
    pub role: String,
    /// The message as the agent stores it (text, tool calls, tool results).
    pub content: serde_json::Value,
}

/// The tokens one turn of a stored chat used, as the model's provider counted them, and their estimated cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnUsage {
    /// The turn's number in the chat (1-based).
    pub turn: u32,
    /// The model that ran it (`provider:model`).
    pub model: String,
    /// Tokens sent, cached ones included.
    pub input_tokens: u64,
    /// Of those, tokens the provider read from its prompt cache.
    pub cached_input_tokens: u64,
    /// Of those, tokens the provider wrote to its prompt cache.
    pub cache_write_tokens: u64,
    /// Tokens generated.
    pub output_tokens: u64,
    /// The estimated cost, in the currency units of the model's prices; `None` when it had none.
    pub cost: Option<f64>,
}

/// A stored chat's usage summed over its turns ([`crate::Reader::chat_usage`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChatUsage {
    /// How many turns reached the model.
    pub turns: u64,
    /// Tokens sent, cached ones included.
    pub input_tokens: u64,
    /// Of those, tokens read from a prompt cache.
    pub cached_input_tokens: u64,
    /// Of those, tokens written to a prompt cache.
    pub cache_write_tokens: u64,
    /// Tokens generated.
    pub output_tokens: u64,
    /// The estimated cost of the turns that had prices; `None` when none had.
    pub cost: Option<f64>,
    /// How many turns had prices (when fewer than `turns`, `cost` leaves the others out).
    pub priced_turns: u64,
}

/// A stored conversation of the sidebar.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Chat {
    /// Opaque id.
    pub id: String,
    /// A short title.
    pub title: String,
    /// The note the chat was about, if any.
    pub note_id: Option<String>,
    /// The messages, oldest first.
    pub messages: Vec<ChatMessage>,
    /// When it was created.
    pub created: Timestamp,
    /// When it last changed.
    pub updated: Timestamp,
}
