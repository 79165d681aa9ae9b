//! A long focused note: the first request carries its outline and the part around the cursor, not the whole note;
//! edits of parts the model has not read are refused until it reads them; and the same editing tasks get done on a
//! long note as on a short one.

use quire_agent::{Edit, NoteContext, apply_edits};

use quire_core::{Actor, testing};
use serde_json::json;

use crate::scripted::{Fixture, Step, call};

/// A note of `sections` sections of 49 lines each (a heading, a blank line, 47 lines of text).
fn long_body(sections: usize) -> String {
    let mut body = String::new();
    for i in 0..sections {
        body.push_str(&format!("## Section {i}\n\n"));
        for j in 0..47 {
            body.push_str(&format!(
                "Line {i}.{j} of the plan, with enough words to make a real paragraph.\n"
            ));
        }
    }
    body
}

fn context(fx: &Fixture, title: &str, body: &str) -> (String, NoteContext) {
    let id = fx
        .ws
        .write(&Actor::User, |w| testing::note(title, body).create(w))
        .unwrap();
    let context = NoteContext::focused(id.clone(), title, body);
    (id, context)
}

/// The same tasks on a short and a long note: rewrite a line of a section found by its heading, append at the end.
/// On the long note the first rewrite is refused (that part was not read), the model reads the section from the
/// offset its heading has, and the rewrite then goes through.
#[tokio::test]
async fn the_same_edits_get_done_on_a_long_note_as_on_a_short_one() {
    for sections in [2, 102] {
        let fx = Fixture::new();
        let body = long_body(sections);
        let (id, context) = context(&fx, "Plan", &body);
        let target = sections - 1;
        let line = format!("Line {target}.10 of the plan, with enough words to make a real paragraph.");
        let heading_offset = body[..body.find(&format!("## Section {target}\n")).unwrap()]
            .chars()
            .count();
        let rewrite = call("rewrite_paragraph", json!({"anchor": line, "text": "Line rewritten."}));
        let append = call("append_to_note", json!({"text": "The end."}));
        let read = call("read_note", json!({"note_id": id, "offset": heading_offset}));
        let steps = vec![
            Step::Calls(vec![rewrite.clone()]),
            Step::Calls(vec![read]),
            Step::Calls(vec![rewrite]),
            Step::Calls(vec![append]),
            Step::Text("Done."),
        ];
        let (outcome, model) = fx.simple(&context, steps).await;
        let outcome = outcome.unwrap();
        let edits: Vec<&Edit> = outcome.edits.iter().collect();
        let tools: Vec<&str> = edits.iter().map(|e| e.tool.as_str()).collect();
        // Both get the rewrite and the append: the short note at the first try (its second rewrite finds the line
        // gone), the long one after reading the section.
        let results = serde_json::to_string(&model.requests.lock().unwrap().last().unwrap().messages).unwrap();
        let results: String = results
            .chars()
            .rev()
            .take(3000)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        assert_eq!(tools, ["rewrite_paragraph", "append_to_note"], "{sections}: {results}");
        let requests = model.requests.lock().unwrap();
        let first_tool_result = serde_json::to_string(&requests[1].messages).unwrap();
        if sections == 2 {
            assert!(!first_tool_result.contains("has not been read"), "{first_tool_result}");
        } else {
            assert!(
                first_tool_result.contains("has not been read in this turn")
                    && first_tool_result.contains(&format!("note_id {id}")),
                "{first_tool_result}"
            );
        }
        // Applied, the edits give the note with the line rewritten once and the end appended.
        let after = apply_edits(&body, &outcome.edits).unwrap();
        assert!(
            after.contains("Line rewritten.") && after.ends_with("The end."),
            "{}",
            &after[after.len() - 200..]
        );
        assert!(!after.contains(&line));
    }
}

/// The first request of a turn on a 5,000-line note stays small: the note's view is within its budget, with the
/// outline's headings and the lines around the cursor.
#[tokio::test]
async fn a_long_note_is_an_outline_and_the_part_around_the_cursor() {
    let fx = Fixture::new();
    let body = long_body(102);
    assert!(body.lines().count() >= 4_998);
    let (_, mut context) = context(&fx, "Plan", &body);
    let cursor = body[..body.find("Line 60.20 ").unwrap()].chars().count();
    context.note.as_mut().unwrap().cursor = Some(cursor);
    let system = quire_agent::system_prompt(&context);
    let tokens = quire_tools::estimate_tokens(&system);
    assert!(tokens < 3_000, "the system prompt takes {tokens} tokens");
    let at = system.find("The note is long").expect("a long note is not sent whole");
    assert!(
        system[at..].starts_with("The note is long (4998 lines"),
        "{}",
        &system[at..at + 300]
    );
    assert!(
        system.contains("## Section 0 (line 1, offset 0)"),
        "the outline starts at the top: {}",
        &system[at..at + 900]
    );
    assert!(system.contains("Line 60.20 of the plan"), "the cursor's line is shown");
    assert!(!system.contains("Line 1.5 of the plan"), "far parts are not");
    // A small note is still sent whole, and a budget can be set.
    let small = NoteContext::focused("n1", "Small", "One line.");
    assert!(quire_agent::system_prompt(&small).contains("<note>\nOne line.\n</note>"));
    let tight = NoteContext::focused("n1", "Small", long_body(1)).with_view_budget(100);
    assert!(quire_agent::system_prompt(&tight).contains("The note is long"));
}
