//! The types the UI's TypeScript is generated from (`cargo xtask codegen` writes `crates/web/ui/src/generated.ts`):
//! every answer of the API, its error body, and the events of its two streams.

use quire_agent::AgentEvent;
use quire_tools::ToolRegistry;
use serde::Serialize;

use crate::api::{
    AddedAttachment, ChangeNews, ChatHistory, ChatList, ConflictResolved, CreatedNotebook, Deleted, History,
    LockInitialized, LockState, Note, NoteLinks, NotebookChanged, ReviewDecision, ReviewList, RevisionList, SavedNote,
    Settings, SyncConflictView, SyncSettings, TrashState, Undone,
};
use crate::error::ErrorBody;
use crate::{NewModel, SemanticSettings, TurnDone, TurnStarted};

/// One server-sent event of a chat turn (`POST /api/turns`), as its event name and its JSON data: `started` first,
/// then an `agent` event for each thing the agent does, then `done` with the outcome (`null` when the turn ended
/// without one).
#[derive(Debug, Serialize, schemars::JsonSchema)]
#[serde(tag = "event", content = "data", rename_all = "snake_case")]
pub enum TurnEvent {
    /// The turn's and the chat's ids.
    Started(TurnStarted),
    /// Something the agent did or asks.
    Agent(AgentEvent),
    /// How the turn ended.
    Done(Option<TurnDone>),
}

/// The JSON Schemas of what the API and its event streams send, each with the name of the TypeScript type that
/// `cargo xtask codegen` generates from it for the UI (`crates/web/ui/src/generated.ts`): the tools' outputs the API
/// returns as they are, the agent's events and edits, and the API's own answers. A type that another one refers to
/// by a name given here is that type.
pub fn ui_schemas() -> Vec<(&'static str, serde_json::Value)> {
    let registry = ToolRegistry::builtin();
    let mut out = Vec::new();
    for (name, tool) in [
        ("NotePage", "list_notes"),
        ("NotebookList", "list_notebooks"),
        ("TagList", "list_tags"),
        ("SearchResults", "search_notes"),
        ("SemanticResults", "semantic_search_notes"),
        ("Backlinks", "get_backlinks"),
    ] {
        let schema = registry
            .get(tool)
            .and_then(|info| info.output_schema.as_deref().cloned())
            .unwrap_or(serde_json::Value::Null);
        out.push((name, schema));
    }
    out.extend([
        ("Note", sent::<Note>()),
        ("SavedNote", sent::<SavedNote>()),
        ("AddedAttachment", sent::<AddedAttachment>()),
        ("NoteLinks", sent::<NoteLinks>()),
        ("TrashState", sent::<TrashState>()),
        ("CreatedNotebook", sent::<CreatedNotebook>()),
        ("NotebookChanged", sent::<NotebookChanged>()),
        ("Deleted", sent::<Deleted>()),
        ("RevisionList", sent::<RevisionList>()),
        ("History", sent::<History>()),
        ("LedgerView", sent::<crate::api::LedgerView>()),
        ("AutomationList", sent::<crate::api::AutomationList>()),
        ("AgentList", sent::<crate::api::AgentList>()),
        ("AgentTested", sent::<crate::api::AgentTested>()),
        ("NewAgent", received::<crate::api::NewAgent>()),
        ("AutomationRun", sent::<quire_core::automation_runs::AutomationRun>()),
        ("Undone", sent::<Undone>()),
        ("ChatList", sent::<ChatList>()),
        ("ChatHistory", sent::<ChatHistory>()),
        ("ChangeNews", sent::<ChangeNews>()),
        ("ErrorBody", sent::<ErrorBody>()),
        ("AgentEvent", sent::<AgentEvent>()),
        ("Question", sent::<quire_agent::Question>()),
        ("WireEdit", received::<quire_agent::Edit>()),
        ("Accepted", sent::<quire_agent::Accepted>()),
        ("ChatMessage", sent::<quire_agent::Message>()),
        ("TurnStarted", sent::<TurnStarted>()),
        ("TurnDone", sent::<TurnDone>()),
        ("TurnEvent", sent::<TurnEvent>()),
        ("Settings", sent::<Settings>()),
        ("LockState", sent::<LockState>()),
        ("LockInitialized", sent::<LockInitialized>()),
        ("SyncSettings", sent::<SyncSettings>()),
        ("SyncConflictView", sent::<SyncConflictView>()),
        ("ConflictResolved", sent::<ConflictResolved>()),
        ("SyncView", sent::<quire_sync::background::SyncView>()),
        ("NewModel", received::<NewModel>()),
        ("SemanticSettings", sent::<SemanticSettings>()),
        ("PluginList", sent::<crate::PluginList>()),
        ("PluginView", sent::<crate::PluginView>()),
        ("NewPlugin", received::<crate::NewPlugin>()),
        ("ReviewList", sent::<ReviewList>()),
        ("ReviewSet", sent::<quire_core::review::ReviewSet>()),
        ("ReviewOutcome", sent::<quire_core::review::ReviewOutcome>()),
        ("ReviewDecision", received::<ReviewDecision>()),
        ("QueryResult", sent::<quire_core::query::QueryResult>()),
        ("QueryRequest", received::<crate::api::QueryRequest>()),
        ("TaskRequest", received::<crate::api::TaskRequest>()),
        ("TaskChanged", sent::<crate::api::TaskChanged>()),
        ("FieldRequest", received::<crate::api::FieldRequest>()),
        ("FieldWritten", sent::<quire_core::FieldWritten>()),
        ("TodayRequest", received::<crate::api::TodayRequest>()),
        ("OpenedNote", sent::<crate::api::OpenedNote>()),
        ("TemplateList", sent::<crate::api::TemplateList>()),
        ("FromTemplateRequest", received::<crate::api::FromTemplateRequest>()),
        ("DeviceList", sent::<crate::DeviceList>()),
        ("PairRequest", received::<crate::PairRequest>()),
        ("PairingCode", sent::<crate::PairingCode>()),
        ("OfflineSave", received::<crate::OfflineSave>()),
        ("OfflineSaved", sent::<crate::OfflineSaved>()),
    ]);
    out
}

/// The schema of what the server sends as `T`: a field that is always written is required, `null` or not.
fn sent<T: schemars::JsonSchema>() -> serde_json::Value {
    let generator = schemars::generate::SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator();
    generator.into_root_schema_for::<T>().to_value()
}

/// The schema of what the page sends as `T`: a field that may be left out is optional.
fn received<T: schemars::JsonSchema>() -> serde_json::Value {
    schemars::schema_for!(T).to_value()
}

#[cfg(test)]
mod tests {
    use super::TurnEvent;

    /// The stream writes each event's name and data separately; together they are a [`TurnEvent`].
    #[test]
    fn a_turn_event_is_its_name_and_its_data() {
        let done = serde_json::to_value(TurnEvent::Done(None)).unwrap();
        assert_eq!(done, serde_json::json!({ "event": "done", "data": null }));
    }
}
