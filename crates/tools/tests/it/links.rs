//! Links in note bodies through the tools, as an MCP client sees them: backlinks with snippets (none for a
//! protected note), unresolved links with candidates in read_note, and a rename that updates the links.

use quire_core::{Actor, testing};
use serde_json::json;

use crate::fixture::Fixture;

fn add(fx: &Fixture, title: &str, body: &str) -> String {
    testing::note(title, body).create_in(&fx.ws).unwrap()
}

#[test]
fn backlinks_read_note_and_a_rename_see_body_links() {
    let fx = Fixture::new();
    let target = add(&fx, "Launch checklist", "1. test");
    let linking = add(
        &fx,
        "Weekly",
        "Before Friday, go through [[Launch checklist]] once more.",
    );
    let private = add(&fx, "Private diary", "Worried about [[Launch checklist]], honestly.");
    fx.ws
        .write(&Actor::User, |w| w.set_note_protected(&private, true))
        .unwrap();
    let both = add(&fx, "Hub", "[[Launch checklist]] and [[Missing page]] and [[Inbox]]");
    add(&fx, "Inbox", "a");
    add(&fx, "inbox", "b");

    let links = fx.call("get_backlinks", json!({"note_id": target}));
    let rows: Vec<(String, String, Option<String>)> = links["backlinks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b["title"].as_str().unwrap().to_owned(),
                b["kind"].as_str().unwrap().to_owned(),
                b["snippet"].as_str().map(str::to_owned),
            )
        })
        .collect();
    assert_eq!(rows.len(), 3, "{links}");
    assert_eq!(rows[0].0, "Hub");
    assert_eq!(
        rows[1],
        ("Private diary".to_owned(), "wikilink".to_owned(), None),
        "title only"
    );
    assert_eq!(rows[2].0, "Weekly");
    assert!(
        rows[2]
            .2
            .as_deref()
            .unwrap()
            .contains("go through [[Launch checklist]]")
    );
    assert!(!links.to_string().contains("Worried"), "no word of the protected body");

    let read = fx.call("read_note", json!({"note_id": both}));
    assert_eq!(
        read["unresolved_links"],
        json!([
            {"target": "Missing page", "candidates": []},
            {"target": "Inbox", "candidates": [
                {"note_id": read["unresolved_links"][1]["candidates"][0]["note_id"], "title": "Inbox", "notebook_path": ""},
                {"note_id": read["unresolved_links"][1]["candidates"][1]["note_id"], "title": "inbox", "notebook_path": ""},
            ]},
        ])
    );
    let plain = fx.call("read_note", json!({"note_id": linking}));
    assert!(
        plain.get("unresolved_links").is_none(),
        "absent when every link resolves"
    );

    let renamed = fx.call(
        "update_note",
        json!({"note_id": target, "title": "Release checklist", "update_links": true}),
    );
    assert_eq!(renamed["links_updated"].as_array().unwrap().len(), 2, "{renamed}");
    assert_eq!(
        renamed["links_not_updated"].as_array().unwrap().len(),
        1,
        "the protected note: {renamed}"
    );
    let weekly = fx.call("read_note", json!({"note_id": linking}));
    assert_eq!(
        weekly["body"],
        "Before Friday, go through [[Release checklist]] once more."
    );
}

/// A label that holds a structured value says so, with the value as itself; a link in a label is a backlink that
/// names its label.
#[test]
fn structured_labels_and_links_in_labels() {
    let fx = Fixture::new();
    let target = add(&fx, "Launch checklist", "1. test");
    let note = add(&fx, "Release", "");
    let set = fx.call(
        "set_attribute",
        json!({"note_id": note, "type": "label", "name": "cast", "value": "[\"[[Launch checklist]]\", 2]", "value_type": "json"}),
    );
    assert_eq!(
        (&set["value"], &set["value_type"]),
        (&json!(["[[Launch checklist]]", 2]), &json!("json"))
    );
    fx.call(
        "set_attribute",
        json!({"note_id": note, "type": "label", "name": "publish", "value": "true"}),
    );
    let labels = fx.call("get_attributes", json!({"note_id": note}));
    let shown: Vec<(&str, &serde_json::Value, Option<&str>)> = labels["attributes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["name"].as_str().unwrap(), &a["value"], a["value_type"].as_str()))
        .collect();
    assert_eq!(
        shown,
        [
            ("cast", &json!(["[[Launch checklist]]", 2]), Some("json")),
            ("publish", &json!("true"), None),
        ],
        "text is text, and says nothing more"
    );
    let refused = fx.call(
        "set_attribute",
        json!({"note_id": note, "type": "label", "name": "broken", "value": "[1,", "value_type": "json"}),
    );
    assert!(refused["error"].as_str().unwrap().contains("not JSON"), "{refused}");

    let links = fx.call("get_backlinks", json!({"note_id": target}));
    assert_eq!(links["total"], 1, "{links}");
    assert_eq!(links["backlinks"][0]["label"], "cast");
    assert_eq!(links["backlinks"][0]["kind"], "wikilink");
}
