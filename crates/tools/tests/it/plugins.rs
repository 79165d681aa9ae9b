//! Plugin tools: registration, collisions, change notifications, failures that cost only their own call, loaders.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use quire_core::Actor;
use quire_tools::{Effect, Error, ListItem, PluginTool, RenderSpec, ToolActor, ToolError, ToolOrigin, ToolRegistry};
use serde_json::{Value, json};

use crate::fixture::Fixture;

fn schema() -> Value {
    json!({"type": "object", "properties": {"text": {"type": "string", "description": "Some text."}}})
}

fn echo(name: &str) -> PluginTool {
    PluginTool::read_only(
        name,
        "Echo text",
        "Returns the text it is given, upper-cased.",
        schema(),
        |call| {
            Box::pin(async move {
                let text = call.args["text"]
                    .as_str()
                    .ok_or_else(|| ToolError::new("text is required"))?
                    .to_uppercase();
                Ok(json!({ "text": text, "actor": call.caller.actor().to_string() }).into())
            })
        },
    )
}

#[test]
fn plugin_tools_join_the_list_and_the_call_path() {
    let fx = Fixture::new();
    let mut changes = fx.tools.subscribe();
    fx.tools
        .register(echo("echo_text").with_output_schema(json!({"type": "object"})))
        .unwrap();
    assert!(changes.has_changed().unwrap(), "subscribers hear about a new tool");
    changes.mark_unchanged();
    let info = fx.tools.get("echo_text").unwrap();
    assert_eq!(
        (info.origin, info.effect, info.title.as_str()),
        (ToolOrigin::Plugin, Effect::ReadOnly, "Echo text")
    );
    let names = fx.tools.names();
    assert!(
        names.windows(2).all(|w| w[0] < w[1]) && names.contains(&"echo_text".to_owned()),
        "sorted with the rest"
    );

    let result = fx
        .tools
        .call(&fx.ws, &ToolActor::plugin("p1"), "echo_text", json!({"text": "hi"}))
        .unwrap();
    assert_eq!(result.value, json!({"text": "HI", "actor": "plugin p1"}));
    let failed = fx
        .tools
        .call(&fx.ws, &ToolActor::mcp("c"), "echo_text", json!({}))
        .unwrap();
    assert_eq!(failed.value, json!({"error": "text is required"}));
    let not_object = fx
        .tools
        .call(&fx.ws, &ToolActor::mcp("c"), "echo_text", json!([1]))
        .unwrap();
    assert_eq!(
        not_object.value,
        json!({"error": "Invalid arguments for echo_text: expected a JSON object of named arguments."})
    );

    assert!(fx.tools.unregister("echo_text"));
    assert!(changes.has_changed().unwrap());
    assert!(!fx.tools.unregister("echo_text"));
    assert!(matches!(
        fx.tools.call(&fx.ws, &ToolActor::mcp("c"), "echo_text", json!({})),
        Err(Error::UnknownTool { .. })
    ));
    assert!(!fx.tools.unregister("read_note"), "built-in tools stay");
}

#[test]
fn collisions_and_bad_declarations_are_refused() {
    let tools = ToolRegistry::builtin();
    assert_eq!(
        tools.register(echo("read_note")).unwrap_err().to_string(),
        "A tool named 'read_note' already exists; choose another name."
    );
    tools.register(echo("echo_text")).unwrap();
    assert!(matches!(tools.register(echo("echo_text")), Err(Error::NameTaken(_))));
    assert_eq!(
        tools.register(echo("has space")).unwrap_err().to_string(),
        "Invalid tool declaration: 'has space' is not a valid tool name: use 1 to 128 of A-Z a-z 0-9 _ - ."
    );
    assert!(matches!(
        tools.register(echo(&"x".repeat(129))),
        Err(Error::InvalidTool(_))
    ));
    let array_input = PluginTool::read_only("t", "T", "d", json!({"type": "array"}), |_| {
        Box::pin(async { Ok(json!({}).into()) })
    });
    assert!(matches!(tools.register(array_input), Err(Error::InvalidTool(_))));
}

#[test]
fn a_crashing_plugin_costs_only_its_own_call() {
    let fx = Fixture::new();
    let crash = PluginTool::mutating("crash_now", "Crash now", "Panics.", schema(), |_| {
        Box::pin(async { panic!("plugin bug") })
    });
    fx.tools.register(crash).unwrap();
    let result = fx
        .tools
        .call(&fx.ws, &ToolActor::plugin("p"), "crash_now", json!({}))
        .unwrap();
    assert_eq!(
        result.value["error"],
        "The tool crash_now failed unexpectedly (plugin bug); nothing it started was saved. This is a bug, not something to retry with other arguments."
    );
    let lying = PluginTool::read_only("lying_tool", "Lie", "Says ok but carries an error.", schema(), |_| {
        Box::pin(async { Ok(json!({"error": "disk full"}).into()) })
    });
    fx.tools.register(lying).unwrap();
    let result = fx
        .tools
        .call(&fx.ws, &ToolActor::plugin("p"), "lying_tool", json!({}))
        .unwrap();
    assert!(result.is_error, "an error key makes it an error");
    assert!(
        !fx.tools
            .call(&fx.ws, &ToolActor::mcp("c"), "list_tags", json!({}))
            .unwrap()
            .is_error,
        "the registry still works"
    );
}

#[test]
fn plugins_write_through_the_guards() {
    let fx = Fixture::new();
    let secret = fx.secret.clone();
    let writer = PluginTool::destructive(
        "trash_secret",
        "Trash secret",
        "Tries to trash a protected note.",
        schema(),
        move |call| {
            let secret = secret.clone();
            Box::pin(async move {
                call.workspace
                    .write(|w| w.trash_note(&secret))
                    .map(|_| json!({"ok": true}).into())
                    .map_err(ToolError::from)
            })
        },
    );
    fx.tools.register(writer).unwrap();
    let result = fx
        .tools
        .call(&fx.ws, &ToolActor::plugin("p"), "trash_secret", json!({}))
        .unwrap();
    assert_eq!(
        result.value,
        json!({"error": "Note is protected and cannot be modified"})
    );
}

#[test]
fn render_specs() {
    let tools = ToolRegistry::builtin();
    tools
        .register(echo("echo_text").with_render(|input, output| RenderSpec::List {
            items: vec![ListItem {
                title: output["text"].as_str().unwrap_or("").into(),
                subtitle: input["text"].as_str().map(Into::into),
                thumbnail: None,
            }],
        }))
        .unwrap();
    let spec = tools
        .render("echo_text", &json!({"text": "hi"}), &json!({"text": "HI"}))
        .unwrap();
    assert_eq!(
        serde_json::to_value(spec).unwrap(),
        json!({"kind": "list", "items": [{"title": "HI", "subtitle": "hi", "thumbnail": null}]})
    );
    assert_eq!(tools.render("read_note", &json!({}), &json!({})), None);
}

#[test]
fn loaders_run_once_on_first_use() {
    let tools = ToolRegistry::builtin();
    let runs = Arc::new(AtomicUsize::new(0));
    let counter = runs.clone();
    tools.register_loader(move || {
        counter.fetch_add(1, Ordering::SeqCst);
        vec![echo("heavy_tool")]
    });
    assert_eq!(runs.load(Ordering::SeqCst), 0, "registering a loader costs nothing");
    assert!(tools.names().contains(&"heavy_tool".to_owned()));
    assert!(tools.get("heavy_tool").is_some());
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test(flavor = "current_thread")]
async fn plugin_tools_are_awaited_from_async_code() {
    let fx = Fixture::new();
    let slow = PluginTool::read_only("slow_echo", "Echo slowly", "Sleeps, then echoes.", schema(), |call| {
        Box::pin(async move {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            Ok(json!({"text": call.args["text"]}).into())
        })
    });
    fx.tools.register(slow).unwrap();
    let result = fx
        .tools
        .call_async(&fx.ws, &ToolActor::mcp("c"), "slow_echo", json!({"text": "x"}))
        .await
        .unwrap();
    assert_eq!(result.value, json!({"text": "x"}));
}

#[test]
fn a_writing_plugin_writes_as_itself_and_one_call_is_one_change_set() {
    let fx = Fixture::new();
    let two_notes = PluginTool::mutating(
        "file_two_notes",
        "File two notes",
        "Creates two notes.",
        schema(),
        |call| {
            Box::pin(async move {
                // Two transactions, one change set: undoing the call undoes both.
                call.workspace
                    .write(|w| w.create_note(quire_core::NewNote::new("First", "one")))
                    .map_err(ToolError::from)?;
                call.workspace
                    .write(|w| w.create_note(quire_core::NewNote::new("Second", "two")))
                    .map_err(ToolError::from)?;
                Ok(json!({"change_set_id": call.workspace.change_set_id()}).into())
            })
        },
    );
    fx.tools.register(two_notes).unwrap();
    let result = fx
        .tools
        .call(&fx.ws, &ToolActor::mcp("client"), "file_two_notes", json!({}))
        .unwrap();
    assert!(!result.is_error, "{}", result.value);
    let set_id = result.value["change_set_id"].as_str().unwrap().to_owned();
    let set = fx.ws.read(&Actor::User, |r| r.change_set(&set_id)).unwrap();
    assert_eq!(
        set.actor,
        Actor::Plugin {
            id: "file_two_notes".into()
        }
    );
    let changes = fx.ws.read(&Actor::User, |r| r.changes_in_set(&set_id)).unwrap();
    assert_eq!(changes.len(), 2, "both notes are in the call's change set: {changes:?}");
    fx.ws.write(&Actor::User, |w| w.revert_change_set(&set_id)).unwrap();
    let found = fx
        .ws
        .read(&Actor::User, |r| {
            r.search("First OR Second any:1", quire_core::SearchOptions::default())
        })
        .unwrap();
    assert_eq!(found.total, 0, "undoing the call removed both notes");
}

#[test]
fn a_read_only_plugin_reads_as_itself() {
    let fx = Fixture::new();
    let secret = fx.secret.clone();
    let peek = PluginTool::read_only(
        "peek_secret",
        "Peek",
        "Reads a protected note.",
        schema(),
        move |call| {
            let secret = secret.clone();
            Box::pin(async move {
                let note = call.workspace.read(|r| r.note(&secret)).map_err(ToolError::from)?;
                Ok(json!({"body": note.body}).into())
            })
        },
    );
    fx.tools.register(peek).unwrap();
    let result = fx
        .tools
        .call(&fx.ws, &ToolActor::mcp("client"), "peek_secret", json!({}))
        .unwrap();
    assert_eq!(
        result.value,
        json!({"error": "Note is protected; its content cannot be read"})
    );
}

#[test]
fn a_plugin_cannot_write_the_text_of_the_note_in_the_editor() {
    let fx = Fixture::new();
    let rewrite = PluginTool::mutating("rewrite_note", "Rewrite", "Rewrites a note.", schema(), |call| {
        Box::pin(async move {
            let id = call.args["text"].as_str().unwrap_or_default().to_owned();
            call.workspace
                .write(|w| {
                    w.update_note(
                        &id,
                        quire_core::NoteUpdate {
                            body: Some("rewritten".into()),
                            ..Default::default()
                        },
                    )
                })
                .map_err(ToolError::from)?;
            Ok(json!({}).into())
        })
    });
    fx.tools.register(rewrite).unwrap();
    let actor = ToolActor::agent("chat", 1).with_note_in_editor(fx.plain.clone());
    let result = fx
        .tools
        .call(&fx.ws, &actor, "rewrite_note", json!({"text": fx.plain}))
        .unwrap();
    assert!(
        result
            .error_message()
            .unwrap()
            .starts_with("This note is open in the user's editor"),
        "{}",
        result.value
    );
    let other = fx
        .tools
        .call(&fx.ws, &actor, "rewrite_note", json!({"text": fx.todo}))
        .unwrap();
    assert!(!other.is_error, "other notes stay writable: {}", other.value);
}

#[test]
fn lists_during_loading_wait_for_the_loaders() {
    let tools = Arc::new(ToolRegistry::builtin());
    tools.register_loader(|| {
        std::thread::sleep(std::time::Duration::from_millis(300));
        vec![echo("slow_to_load")]
    });
    let fx = Fixture::new();
    let handles: Vec<_> = (0..6)
        .map(|i| {
            let tools = tools.clone();
            let ws = fx.ws.clone();
            std::thread::spawn(move || {
                if i % 2 == 0 {
                    tools.names().contains(&"slow_to_load".to_owned())
                } else {
                    let result = tools
                        .call(&ws, &ToolActor::mcp("c"), "slow_to_load", json!({"text": "hi"}))
                        .map(|r| r.value);
                    result.is_ok_and(|v| v["text"] == "HI")
                }
            })
        })
        .collect();
    for handle in handles {
        assert!(
            handle.join().unwrap(),
            "a list or call during loading missed the loader's tool"
        );
    }
}

#[test]
fn a_plugin_called_by_an_agent_turn_writes_into_the_turns_change_set() {
    let fx = Fixture::new();
    let note = PluginTool::mutating("file_note", "File a note", "Creates a note.", schema(), |call| {
        Box::pin(async move {
            call.workspace
                .write(|w| w.create_note(quire_core::NewNote::new("Filed by a plugin", "x")))
                .map_err(ToolError::from)?;
            Ok(json!({}).into())
        })
    });
    fx.tools.register(note).unwrap();
    let turn = ToolActor::agent("chat-7", 2);
    fx.tools
        .call(&fx.ws, &turn, "create_note", json!({"title": "Filed by the agent"}))
        .unwrap();
    let result = fx.tools.call(&fx.ws, &turn, "file_note", json!({})).unwrap();
    assert!(!result.is_error, "{}", result.value);
    let set = fx
        .ws
        .read(&Actor::User, |r| r.open_change_set_of(turn.actor()))
        .unwrap()
        .unwrap();
    let changes = fx.ws.read(&Actor::User, |r| r.changes_in_set(&set.id)).unwrap();
    let actors: Vec<String> = changes.iter().map(|c| c.actor.to_string()).collect();
    assert!(
        actors.contains(&"plugin file_note".to_owned()) && actors.iter().any(|a| a.starts_with("agent")),
        "one change set for the whole turn, each change under its own actor: {actors:?}"
    );
    fx.ws.write(&Actor::User, |w| w.revert_change_set(&set.id)).unwrap();
    let found = fx
        .ws
        .read(&Actor::User, |r| {
            r.search("filed", quire_core::SearchOptions::default())
        })
        .unwrap();
    assert_eq!(found.total, 0, "undoing the turn undid the plugin's note too");
}
