//! Who calls a tool: the AI actor a call runs as, and the note open in the user's editor meanwhile.

use quire_core::Actor;
use quire_core::plugin_calls::PluginCall;

/// Who calls a tool: an AI actor, never the user. quire-core's guards apply to every one of them.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ToolActor {
    actor: Actor,
    in_editor: Option<String>,
    /// The plugin's call this write-back is part of (see [`ToolActor::plugin_writing_back`]).
    plugin_call: Option<PluginCall>,
}

impl ToolActor {
    fn new(actor: Actor) -> ToolActor {
        ToolActor {
            actor,
            in_editor: None,
            plugin_call: None,
        }
    }

    /// The in-app agent during one turn of a chat; all workspace writes of the turn form one change set.
    pub fn agent(chat: impl Into<String>, turn: u32) -> ToolActor {
        ToolActor::new(Actor::Agent {
            chat: chat.into(),
            turn,
        })
    }

    /// An MCP client, by the name it introduced itself with.
    pub fn mcp(client: impl Into<String>) -> ToolActor {
        ToolActor::new(Actor::Mcp { client: client.into() })
    }

    /// A plugin, by its id.
    pub fn plugin(id: impl Into<String>) -> ToolActor {
        ToolActor::new(Actor::Plugin { id: id.into() })
    }

    /// A plugin writing back through its grant while one of its calls runs (`call`): its writes are the call's (one
    /// change set in its name, or the calling turn's).
    pub fn plugin_writing_back(call: PluginCall) -> ToolActor {
        let mut actor = ToolActor::plugin(call.plugin.clone());
        actor.plugin_call = Some(call);
        actor
    }

    /// The plugin's call this actor writes as part of, if any.
    pub fn plugin_call(&self) -> Option<&PluginCall> {
        self.plugin_call.as_ref()
    }

    /// The same actor while `note_id` is open in the user's editor: every tool's write to that note's title or body
    /// is refused (quire-core's `OpenInEditor`), so its text changes only through edits the user previews.
    pub fn with_note_in_editor(mut self, note_id: impl Into<String>) -> ToolActor {
        self.in_editor = Some(note_id.into());
        self
    }

    /// The note open in the user's editor during this call, if any.
    pub fn note_in_editor(&self) -> Option<&str> {
        self.in_editor.as_deref()
    }

    /// The quire-core actor.
    pub fn actor(&self) -> &Actor {
        &self.actor
    }
}
