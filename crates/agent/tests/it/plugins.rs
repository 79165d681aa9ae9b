//! Plugin tools in the loop: deferred behind `find_tools` past the prompt budget, a chat that leaves a plugin out,
//! approval of a plugin's writing tools when its configuration asks, and media passed to the UI beside the result.

use quire_agent::{
    AgentEvent, AutoApprove, FIND_TOOLS, NoteContext, TOOL_TOKENS, Tier, ToolPolicy, TranscriptEntry, build_tool_offer,
    estimate_tokens, search_deferred,
};
use quire_tools::{ContentItem, PluginTool, ToolRegistry};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::scripted::{Fixture, Step, call};

/// A read-only plugin tool answering `{"echo": <args>}` with an image beside it.
fn tool(plugin: &str, name: &str, description: &str) -> PluginTool {
    PluginTool::read_only(
        format!("{plugin}__{name}"),
        name,
        description,
        json!({"type": "object", "properties": {"q": {"type": "string", "description": "What to look for."}}}),
        |call| {
            Box::pin(async move {
                Ok(
                    quire_tools::PluginOutput::from(json!({"echo": call.args})).with_content(vec![
                        ContentItem::Image {
                            data: "AAAA".into(),
                            mime_type: "image/png".into(),
                        },
                    ]),
                )
            })
        },
    )
    .in_plugin(plugin)
}

/// The built-in tools and `count` plugin tools of the weather plugin.
fn registry(count: usize) -> ToolRegistry {
    let registry = ToolRegistry::builtin();
    for i in 0..count {
        let name = if i == 0 {
            "forecast".to_owned()
        } else {
            format!("station_{i}")
        };
        let description = if i == 0 {
            "Gives the weather forecast of a city for the next days.".to_owned()
        } else {
            format!("Reads the measures of weather station number {i}, with its history over the last month.")
        };
        registry.register(tool("weather", &name, &description)).unwrap();
    }
    registry
}

#[test]
fn a_few_plugin_tools_are_offered_at_once_and_many_wait_for_find_tools() {
    let policy = ToolPolicy::default();
    // A few plugin tools fit: they are offered at once, before the query and task tools (which wait for
    // find_tools when the first request would pass the budget).
    let few = build_tool_offer(&NoteContext::none(), &registry(2), &policy);
    assert!(few.deferred.iter().all(|t| t.plugin.is_none()), "{:?}", few.deferred);
    assert!(few.offered.iter().any(|t| t.spec.name == "weather__forecast"));
    assert!(few.offered.iter().any(|t| t.spec.name == "weather__station_1"));
    let offered: usize = few.offered.iter().map(|t| estimate_tokens(&t.spec)).sum();
    assert!(offered <= TOOL_TOKENS, "{offered}");

    // Many: what fits is offered, the rest waits; find_tools names the plugin.
    let many = build_tool_offer(&NoteContext::none(), &registry(60), &policy);
    let weather = |tools: &[quire_agent::OfferedTool]| tools.iter().filter(|t| t.plugin.is_some()).count();
    assert_eq!(weather(&many.offered) + weather(&many.deferred), 60);
    assert!(weather(&many.deferred) > 50, "{}", weather(&many.deferred));
    let find = many.offered.iter().find(|t| t.spec.name == FIND_TOOLS).unwrap();
    assert_eq!(find.tier, Tier::Search);
    assert!(find.spec.description.contains("weather"), "{}", find.spec.description);
    assert!(find.spec.description.contains("tasks"), "{}", find.spec.description);
    let offered: usize = many.offered.iter().map(|t| estimate_tokens(&t.spec)).sum();
    assert!(offered <= TOOL_TOKENS, "{offered}");
    let found = search_deferred(&many.deferred, "station number 59", 5);
    assert_eq!(found[0].spec.name, "weather__station_59");
    let found = search_deferred(&many.deferred, "tasks due this week", 5);
    assert_eq!(found[0].spec.name, "list_tasks");
    assert!(search_deferred(&many.deferred, "zzz", 5).is_empty());

    let off = ToolPolicy {
        plugins_off: ["weather".to_owned()].into(),
        ..ToolPolicy::default()
    };
    let without = build_tool_offer(&NoteContext::none(), &registry(60), &off);
    assert!(without.deferred.iter().all(|t| t.plugin.is_none()));
    assert!(!without.offered.iter().any(|t| t.plugin.is_some()));
}

#[tokio::test]
async fn a_deferred_tool_runs_only_after_find_tools_loaded_it() {
    let mut fx = Fixture::new();
    fx.registry = registry(60);
    let steps = vec![
        Step::Calls(vec![call("weather__station_59", json!({"q": "Lyon"}))]),
        Step::Calls(vec![call(FIND_TOOLS, json!({"query": "station number 59"}))]),
        Step::Calls(vec![call("weather__station_59", json!({"q": "Lyon"}))]),
        Step::Text("Sunny."),
    ];
    let (result, model, events) = fx
        .run(
            &NoteContext::none(),
            steps,
            &AutoApprove(false),
            CancellationToken::new(),
        )
        .await;
    let outcome = result.unwrap();
    let outputs: Vec<_> = outcome
        .transcript
        .iter()
        .filter_map(|e| match e {
            TranscriptEntry::ToolCall { output, .. } => Some(output.clone()),
            _ => None,
        })
        .collect();
    let refused = outputs[0]["error"].as_str().unwrap();
    assert!(refused.contains("Call find_tools first to load it"), "{refused}");
    assert_eq!(outputs[1]["found"][0]["name"], "weather__station_59");
    assert_eq!(outputs[2]["echo"]["q"], "Lyon");
    let requests = model.requests.lock().unwrap();
    assert!(!requests[1].tools.iter().any(|t| t.name == "weather__station_59"));
    assert!(
        requests[2].tools.iter().any(|t| t.name == "weather__station_59"),
        "loaded for the next step"
    );
    // The image went to the UI with the result; the model read the output object only.
    let media = events.iter().find_map(|e| match e {
        AgentEvent::ToolFinished { name, content, .. } if name == "weather__station_59" && !content.is_empty() => {
            Some(content.clone())
        }
        _ => None,
    });
    assert_eq!(media.unwrap().len(), 1);
}

#[tokio::test]
async fn a_plugin_that_asks_before_writes_waits_for_approval() {
    for approve in [true, false] {
        let mut fx = Fixture::new();
        fx.registry = ToolRegistry::builtin();
        let save = PluginTool::mutating(
            "notes-sync__save",
            "Save",
            "Saves a line outside quire.",
            json!({"type": "object", "properties": {}}),
            |_| Box::pin(async { Ok(json!({"saved": true}).into()) }),
        )
        .in_plugin("notes-sync")
        .asking_first(true);
        fx.registry.register(save).unwrap();
        let steps = vec![Step::Calls(vec![call("notes-sync__save", json!({}))]), Step::Text("ok")];
        let (result, _, events) = fx
            .run(
                &NoteContext::none(),
                steps,
                &AutoApprove(approve),
                CancellationToken::new(),
            )
            .await;
        assert!(events.iter().any(|e| matches!(e, AgentEvent::ApprovalNeeded { .. })));
        let outcome = result.unwrap();
        let saved = outcome
            .transcript
            .iter()
            .any(|e| matches!(e, TranscriptEntry::ToolCall { output, .. } if output["saved"] == true));
        assert_eq!(saved, approve);
    }
}

#[tokio::test]
async fn stop_does_not_wait_for_a_slow_plugin_call() {
    let mut fx = Fixture::new();
    fx.registry = ToolRegistry::builtin();
    // The call stops the turn once it has started (not after a guessed delay, which a slow machine outruns), then
    // waits an hour.
    let cancel = CancellationToken::new();
    let stopper = cancel.clone();
    let slow = PluginTool::read_only(
        "slow__wait",
        "Wait",
        "Waits a long time.",
        json!({"type": "object", "properties": {}}),
        move |_| {
            let stopper = stopper.clone();
            Box::pin(async move {
                stopper.cancel();
                tokio::time::sleep(std::time::Duration::from_secs(3600)).await;
                Ok(json!({}).into())
            })
        },
    )
    .in_plugin("slow");
    fx.registry.register(slow).unwrap();
    let steps = vec![Step::Calls(vec![call("slow__wait", json!({}))]), Step::Text("never")];
    let started = std::time::Instant::now();
    let (result, _, _) = fx.run(&NoteContext::none(), steps, &AutoApprove(false), cancel).await;
    assert!(matches!(result.unwrap_err().kind, quire_agent::Error::Cancelled));
    assert!(
        started.elapsed() < std::time::Duration::from_secs(60),
        "the turn stopped without the call's end"
    );
}
