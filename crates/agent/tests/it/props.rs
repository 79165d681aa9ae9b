//! Properties over random model scripts: never more than 8 model calls, every tool call id answered once, no
//! unoffered tool ever run, and with a selection no edit outside it.

use proptest::prelude::*;
use quire_agent::{MAX_STEPS, Message, NoteContext, TranscriptEntry};
use serde_json::json;

use crate::scripted::{Fixture, Step};

fn step() -> impl Strategy<Value = Step> {
    let tool = prop_oneof![
        Just("edit_selection"),
        Just("append_to_note"),
        Just("insert_after_anchor"),
        Just("list_tags"),
        Just("read_note"),
        Just("create_note"),
        Just("no_such_tool"),
    ];
    let args = prop_oneof![
        Just(json!({"text": "X"}).to_string()),
        Just(json!({"anchor": "tent", "text": "Y"}).to_string()),
        Just(json!({"title": "Made by a script"}).to_string()),
        Just("{broken".to_owned()),
        Just(String::new()),
    ];
    prop_oneof![
        1 => Just(Step::Text("done")),
        4 => prop::collection::vec((tool, args), 1..4).prop_map(Step::Calls),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    #[test]
    fn random_scripts_keep_the_invariants(steps in prop::collection::vec(step(), 1..12), select in any::<bool>()) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let fx = Fixture::new();
        let body = "- shoes\n- tent\n";
        let mut context = NoteContext::focused(fx.plain.clone(), "Packing list", body);
        if select {
            context = context.with_selection(2, 7);
        }
        let (result, model) = runtime.block_on(fx.simple(&context, steps));
        prop_assert!(model.requests.lock().unwrap().len() <= MAX_STEPS);
        let outcome = match result { Ok(o) => o, Err(e) => e.outcome };
        let mut asked = Vec::new();
        let mut answered = Vec::new();
        for message in &outcome.messages {
            match message {
                Message::Assistant { tool_calls, .. } => asked.extend(tool_calls.iter().map(|c| c.id.clone())),
                Message::Tool { call_id, .. } => answered.push(call_id.clone()),
                Message::User { .. } => {}
            }
        }
        prop_assert_eq!(&asked, &answered);
        for entry in &outcome.transcript {
            if let TranscriptEntry::ToolCall { name, tier, is_error, .. } = entry {
                let offered = !(name == "no_such_tool" || (select && ["append_to_note", "insert_after_anchor"].contains(&name.as_str()))
                    || (!select && name == "edit_selection"));
                if !offered {
                    prop_assert!(tier.is_none() && *is_error, "{} ran although not offered", name);
                }
            }
        }
        if select {
            let edited = quire_agent::apply_edits(body, &outcome.edits).unwrap();
            prop_assert!(edited.starts_with("- ") && edited.ends_with("\n- tent\n"), "an edit left the selection: {:?}", edited);
        }
    }
}
