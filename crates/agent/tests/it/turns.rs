//! The loop, table by table: replies, the step limit, unoffered tools, bad arguments, parallel calls, tool errors,
//! approval, cancellation, selection scope, change sets and the stable system prompt.

use quire_agent::{AgentEvent, AutoApprove, MAX_STEPS, Message, NoteContext, TranscriptEntry, apply_edits};
use quire_core::{Actor, Page};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::scripted::{Fixture, Step, call};

/// Every tool call id of the turn is answered exactly once, in the message that follows.
fn answered_once(messages: &[Message]) {
    for (i, message) in messages.iter().enumerate() {
        if let Message::Assistant { tool_calls, .. } = message {
            let answers: Vec<&str> = messages[i + 1..]
                .iter()
                .take_while(|m| matches!(m, Message::Tool { .. }))
                .filter_map(|m| match m {
                    Message::Tool { call_id, .. } => Some(call_id.as_str()),
                    _ => None,
                })
                .collect();
            let ids: Vec<&str> = tool_calls.iter().map(|c| c.id.as_str()).collect();
            assert_eq!(answers, ids, "each call answered once, in order");
        }
    }
}

fn outputs(transcript: &[TranscriptEntry]) -> Vec<(String, Value)> {
    transcript
        .iter()
        .filter_map(|e| match e {
            TranscriptEntry::ToolCall { name, output, .. } => Some((name.clone(), output.clone())),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_plain_reply() {
    let fx = Fixture::new();
    let (result, model) = fx.simple(&NoteContext::none(), vec![Step::Text("Hello!")]).await;
    let outcome = result.unwrap();
    assert_eq!(
        (outcome.reply.as_str(), outcome.steps, outcome.edits.len()),
        ("Hello!", 1, 0)
    );
    assert_eq!(model.requests.lock().unwrap().len(), 1);
    assert_eq!(outcome.messages.len(), 2, "the user's message and the reply");
}

#[tokio::test]
async fn the_step_limit_stops_the_loop_and_keeps_what_the_turn_did() {
    let fx = Fixture::new();
    let steps = (0..20)
        .map(|_| Step::Calls(vec![call("list_tags", json!({}))]))
        .collect();
    let (result, model) = fx.simple(&NoteContext::none(), steps).await;
    let error = result.unwrap_err();
    assert!(matches!(error.kind, quire_agent::Error::StepLimit { .. }), "{error:?}");
    assert_eq!(
        model.requests.lock().unwrap().len(),
        MAX_STEPS,
        "never more than {MAX_STEPS} model calls"
    );
    assert_eq!(outputs(&error.outcome.transcript).len(), MAX_STEPS);
    answered_once(&error.outcome.messages);
    assert_eq!(error.to_string(), "the model was still calling tools after 8 steps");
}

#[tokio::test]
async fn unoffered_tools_are_never_run() {
    let fx = Fixture::new();
    // With a selection, only edit_selection may edit the note; append_to_note is not offered.
    let context = NoteContext::focused(fx.plain.clone(), "Packing list", "- shoes\n- tent\n").with_selection(2, 7);
    let steps = vec![
        Step::Calls(vec![
            call("append_to_note", json!({"text": "- socks"})),
            call("drop_database", json!({})),
        ]),
        Step::Text("Sorry."),
    ];
    let (result, _) = fx.simple(&context, steps).await;
    let outcome = result.unwrap();
    assert!(outcome.edits.is_empty(), "nothing was run");
    let results = outputs(&outcome.transcript);
    let error = results[0].1["error"].as_str().unwrap();
    assert!(
        error.starts_with("The tool 'append_to_note' is not available in this turn, so it was not run. You may use: "),
        "{error}"
    );
    assert!(error.contains("edit_selection") && error.contains("search_notes") && !error.contains("append_to_note,"));
    assert!(
        results[1].1["error"]
            .as_str()
            .unwrap()
            .starts_with("The tool 'drop_database' is not available")
    );
    answered_once(&outcome.messages);
}

#[tokio::test]
async fn bad_arguments_and_tool_errors_go_back_to_the_model() {
    let fx = Fixture::new();
    let steps = vec![
        Step::Calls(vec![
            ("read_note", "{not json".to_owned()),
            call("read_note", json!({"note_id": fx.secret})),
            call("read_note", json!({"note_id": 7})),
        ]),
        Step::Text("I could not read them."),
    ];
    let (result, model) = fx.simple(&NoteContext::none(), steps).await;
    let outcome = result.unwrap();
    let results = outputs(&outcome.transcript);
    assert!(
        results[0].1["error"]
            .as_str()
            .unwrap()
            .starts_with("The arguments of read_note are not valid JSON")
    );
    assert_eq!(
        results[1].1,
        json!({"error": "Note is protected; its content cannot be read"})
    );
    assert!(
        results[2].1["error"]
            .as_str()
            .unwrap()
            .starts_with("Invalid arguments for read_note: `note_id`")
    );
    assert_eq!(outcome.reply, "I could not read them.");
    // The second request carries the three results, each marked as an error.
    let second = &model.requests.lock().unwrap()[1];
    let errors = second
        .messages
        .iter()
        .filter(|m| matches!(m, Message::Tool { is_error: true, .. }))
        .count();
    assert_eq!(errors, 3);
}

#[tokio::test]
async fn parallel_calls_are_answered_in_order_and_writes_form_one_change_set() {
    let fx = Fixture::new();
    let steps = vec![
        Step::Calls(vec![
            call("search_notes", json!({"query": "tent"})),
            call("list_tags", json!({})),
            call("create_note", json!({"title": "Socks", "body": "wool"})),
            call("read_note", json!({"note_id": fx.plain})),
            call("update_note", json!({"note_id": fx.plain, "append": "- socks"})),
        ]),
        Step::Text("Done."),
    ];
    let (result, _) = fx.simple(&NoteContext::none(), steps).await;
    let outcome = result.unwrap();
    answered_once(&outcome.messages);
    let names: Vec<String> = outputs(&outcome.transcript).into_iter().map(|(n, _)| n).collect();
    assert_eq!(
        names,
        ["search_notes", "list_tags", "create_note", "read_note", "update_note"]
    );
    let results = outputs(&outcome.transcript);
    assert_eq!(results[0].1["total"], 1);
    assert_eq!(results[3].1["body"], "- shoes\n- tent\n", "read before the later write");
    let changes = fx.ws.read(&Actor::User, |r| r.changes(None, Page::first(50))).unwrap();
    let agent = Actor::Agent {
        chat: "chat-1".into(),
        turn: 1,
    };
    let sets: std::collections::BTreeSet<_> = changes
        .items
        .iter()
        .filter(|c| c.actor == agent)
        .map(|c| c.change_set_id.clone())
        .collect();
    assert_eq!(sets.len(), 1);
    assert_eq!(outcome.change_set_id.as_ref(), sets.iter().next());
}

#[tokio::test]
async fn destructive_calls_wait_for_approval() {
    for approve in [true, false] {
        let fx = Fixture::new();
        let steps = vec![
            Step::Calls(vec![call("delete_note", json!({"note_id": fx.plain}))]),
            Step::Text("ok"),
        ];
        let (result, _, events) = fx
            .run(
                &NoteContext::none(),
                steps,
                &AutoApprove(approve),
                CancellationToken::new(),
            )
            .await;
        let outcome = result.unwrap();
        assert!(
            events
                .iter()
                .any(|e| matches!(e, AgentEvent::ApprovalNeeded { request } if request.tool == "delete_note"))
        );
        let trashed = fx
            .ws
            .read(&Actor::User, |r| r.note_summary(&fx.plain))
            .unwrap()
            .deleted
            .is_some();
        assert_eq!(trashed, approve);
        let output = &outputs(&outcome.transcript)[0].1;
        if approve {
            assert_eq!(output["in_trash"], true);
        } else {
            // AutoApprove asks nobody, so the model hears that the call needs an approval this chat cannot give.
            assert_eq!(
                output["error"],
                "delete_note needs the user's approval, which this chat cannot ask for, so it was not run. Do not \
                 try it again; go on without it and tell the user what you would have done."
            );
        }
    }
}

#[tokio::test]
async fn cancellation_stops_the_turn_and_undoes_its_writes() {
    let fx = Fixture::new();
    let cancel = CancellationToken::new();
    let steps = vec![
        Step::Calls(vec![call("create_note", json!({"title": "Half made"}))]),
        Step::Hang(cancel.clone()),
    ];
    let (result, model, _) = fx.run(&NoteContext::none(), steps, &AutoApprove(false), cancel).await;
    let error = result.unwrap_err();
    assert!(matches!(error.kind, quire_agent::Error::Cancelled), "{error:?}");
    assert_eq!(model.requests.lock().unwrap().len(), 2);
    let found = fx
        .ws
        .read(&Actor::User, |r| r.search("title:half", Default::default()))
        .unwrap()
        .total;
    assert_eq!(found, 0, "the created note was reverted");
    assert_eq!(error.outcome.change_set_id, None);

    // An edit proposed before the cancel is not offered either (ux finding 7), whoever runs the turn.
    let cancel = CancellationToken::new();
    let focused = NoteContext::focused(fx.plain.clone(), "Packing list", "- shoes\n");
    let steps = vec![
        Step::Calls(vec![call(
            "insert_after_anchor",
            json!({"anchor": "- shoes", "text": "\n- socks"}),
        )]),
        Step::Hang(cancel.clone()),
    ];
    let (result, _, _) = fx.run(&focused, steps, &AutoApprove(false), cancel).await;
    let error = result.unwrap_err();
    assert!(matches!(error.kind, quire_agent::Error::Cancelled), "{error:?}");
    assert!(error.outcome.edits.is_empty(), "{:?}", error.outcome.edits);
}

#[tokio::test]
async fn an_interrupted_turn_stops_and_keeps_its_writes_in_its_change_set() {
    let fx = Fixture::new();
    let steps = vec![
        Step::Calls(vec![call("create_note", json!({"title": "Half made"}))]),
        Step::Hang(fx.interrupt.clone()),
    ];
    let (result, _, _) = fx
        .run(
            &NoteContext::none(),
            steps,
            &AutoApprove(false),
            CancellationToken::new(),
        )
        .await;
    let error = result.unwrap_err();
    assert!(matches!(error.kind, quire_agent::Error::Interrupted), "{error:?}");
    let found = fx
        .ws
        .read(&Actor::User, |r| r.search("title:half", Default::default()))
        .unwrap()
        .total;
    assert_eq!(found, 1, "the created note stays");
    let set = error.outcome.change_set_id.expect("the turn's change set");
    let (_, report) = quire_core::changes::undo_change_set(&fx.ws, &set).unwrap();
    assert_eq!(report.undone_changes, 1, "and the history can take it back");
}

#[tokio::test]
async fn session_edits_apply_in_order_and_stay_inside_the_selection() {
    let fx = Fixture::new();
    let body = "- shoes\n- tent\n";
    let focused = NoteContext::focused(fx.plain.clone(), "Packing list", body);
    let steps = vec![
        Step::Calls(vec![
            call("insert_after_anchor", json!({"anchor": "- tent", "text": "\n- socks"})),
            call("insert_after_anchor", json!({"anchor": "- socks", "text": "\n- hat"})),
            call("rewrite_paragraph", json!({"anchor": "- shoes", "text": "- boots"})),
        ]),
        Step::Text("Added socks and a hat."),
    ];
    let (result, _) = fx.simple(&focused, steps).await;
    let outcome = result.unwrap();
    assert_eq!(
        apply_edits(body, &outcome.edits).unwrap(),
        "- boots\n- tent\n- socks\n- hat\n"
    );
    let stored = fx.ws.read(&Actor::User, |r| r.note(&fx.plain)).unwrap().body;
    assert_eq!(stored, body, "session edits never touch the workspace");

    let selected = focused.clone().with_selection(2, 7);
    let steps = vec![
        Step::Calls(vec![call("edit_selection", json!({"text": "sandals"}))]),
        Step::Text("ok"),
    ];
    let (result, _) = fx.simple(&selected, steps).await;
    assert_eq!(
        apply_edits(body, &result.unwrap().edits).unwrap(),
        "- sandals\n- tent\n"
    );
}

#[tokio::test]
async fn model_failures_end_the_turn_with_the_status() {
    let fx = Fixture::new();
    let (result, _) = fx
        .simple(
            &NoteContext::none(),
            vec![Step::Calls(vec![call("list_tags", json!({}))]), Step::Fail(529)],
        )
        .await;
    let error = result.unwrap_err();
    assert_eq!(error.to_string(), "scripted returned HTTP 529: overloaded");
    assert_eq!(outputs(&error.outcome.transcript).len(), 1);
}

#[tokio::test]
async fn the_system_prompt_is_byte_identical_across_steps() {
    let fx = Fixture::new();
    let context = NoteContext::focused(fx.plain.clone(), "Packing list", "- shoes\n- tent\n");
    let steps = vec![
        Step::Calls(vec![call("list_tags", json!({}))]),
        Step::Calls(vec![call("list_tags", json!({}))]),
        Step::Text("ok"),
    ];
    let (_, model) = fx.simple(&context, steps).await;
    let requests = model.requests.lock().unwrap();
    assert_eq!(requests.len(), 3);
    assert!(
        requests
            .iter()
            .all(|r| r.system == requests[0].system && r.tools == requests[0].tools)
    );
    assert!(requests[0].system.contains("Title: Packing list") && requests[0].system.contains("- tent"));
}

#[tokio::test]
async fn a_protected_note_in_focus_never_reaches_the_model() {
    let fx = Fixture::new();
    // A context built by hand (as a careless consumer might, reading as the user): the turn still refuses it.
    let body = fx.ws.read(&Actor::User, |r| r.note(&fx.secret)).unwrap().body;
    let context = NoteContext::focused(fx.secret.clone(), "Secret", body);
    let (result, model) = fx
        .simple(
            &context,
            vec![Step::Calls(vec![call("append_to_note", json!({"text": "x"}))])],
        )
        .await;
    let error = result.unwrap_err();
    assert!(matches!(error.kind, quire_agent::Error::Protected { .. }), "{error:?}");
    assert!(error.to_string().contains("is protected"), "{error}");
    assert!(model.requests.lock().unwrap().is_empty(), "no request was sent");
    // focus_note refuses it up front, naming it.
    let refused = quire_agent::focus_note(&fx.ws, &fx.secret).unwrap_err();
    assert!(matches!(refused, quire_agent::Error::Protected { .. }), "{refused:?}");
}

#[test]
fn accepted_edits_never_land_in_a_protected_note() {
    let fx = Fixture::new();
    let body = fx.ws.read(&Actor::User, |r| r.note(&fx.secret)).unwrap().body;
    let edits = [quire_agent::Edit {
        tool: "append_to_note".into(),
        start: body.chars().count(),
        end: body.chars().count(),
        text: "rewritten by AI".into(),
    }];
    let refused = quire_agent::accept_edits(
        &fx.ws,
        quire_agent::AcceptRequest {
            note_id: &fx.secret,
            base: &body,
            edits: &edits,
            turn: None,
        },
    )
    .unwrap_err();
    assert!(matches!(refused, quire_agent::Error::Protected { .. }), "{refused:?}");
    assert_eq!(fx.ws.read(&Actor::User, |r| r.note(&fx.secret)).unwrap().body, body);
    // The same edit on a plain note is one user write recorded in the turn's change set, after a revision.
    let plain = fx.ws.read(&Actor::User, |r| r.note(&fx.plain)).unwrap().body;
    let turn = Actor::Agent {
        chat: "c".into(),
        turn: 1,
    };
    let accepted = quire_agent::accept_edits(
        &fx.ws,
        quire_agent::AcceptRequest {
            note_id: &fx.plain,
            base: &plain,
            edits: &[quire_agent::Edit {
                tool: "append_to_note".into(),
                start: plain.chars().count(),
                end: plain.chars().count(),
                text: "\nmore".into(),
            }],
            turn: Some(&turn),
        },
    )
    .unwrap();
    assert!(!accepted.rebased, "the note had not changed");
    let set = accepted.change_set_id.unwrap();
    let open = fx
        .ws
        .read(&Actor::User, |r| r.open_change_set_of(&turn))
        .unwrap()
        .unwrap();
    assert_eq!(open.id, set, "recorded in the turn's change set");
    let revisions = fx.ws.read(&Actor::User, |r| r.revisions(&fx.plain)).unwrap();
    assert_eq!(revisions[0].body, plain);
    fx.ws.write(&Actor::User, |w| w.revert_change_set(&set)).unwrap();
    assert_eq!(
        fx.ws.read(&Actor::User, |r| r.note(&fx.plain)).unwrap().body,
        plain,
        "undone with the turn"
    );
}

#[tokio::test]
async fn tool_events_carry_arguments_results_and_render_specs() {
    let fx = Fixture::new();
    fx.registry
        .register(
            quire_tools::PluginTool::read_only(
                "shout",
                "Shout",
                "Returns the text upper-cased.",
                json!({"type": "object", "properties": {"text": {"type": "string", "description": "Text."}}}),
                |call| {
                    Box::pin(async move {
                        Ok(json!({"text": call.args["text"].as_str().unwrap_or("").to_uppercase()}).into())
                    })
                },
            )
            .with_render(|_, output| quire_tools::RenderSpec::Text {
                text: output["text"].as_str().unwrap_or("").to_owned(),
            }),
        )
        .unwrap();
    let steps = vec![
        Step::Calls(vec![call("shout", json!({"text": "hi"})), call("list_tags", json!({}))]),
        Step::Text("done"),
    ];
    let (result, _, events) = fx
        .run(
            &NoteContext::none(),
            steps,
            &AutoApprove(false),
            CancellationToken::new(),
        )
        .await;
    result.unwrap();
    let started: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolStarted { arguments, .. } => Some(arguments.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(started, [r#"{"text":"hi"}"#, "{}"]);
    let finished: Vec<(&str, &Value, Option<&quire_tools::RenderSpec>)> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolFinished {
                name, output, render, ..
            } => Some((name.as_str(), output, render.as_ref())),
            _ => None,
        })
        .collect();
    assert_eq!(finished[0].1, &json!({"text": "HI"}));
    assert_eq!(
        finished[0].2,
        Some(&quire_tools::RenderSpec::Text { text: "HI".into() })
    );
    assert_eq!(
        (finished[1].0, finished[1].2),
        ("list_tags", None),
        "built-in tools have no render spec"
    );
}
