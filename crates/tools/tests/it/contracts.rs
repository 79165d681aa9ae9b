//! Every tool's contract: its happy path and each guard branch, as one snapshot per tool with the literal results.

use serde_json::{Value, json};

use crate::fixture::{Fixture, redact};

/// Runs each case on a fresh fixture and snapshots `[{case, args, result}]` under the tool's name.
fn check(tool: &str, cases: &[(&str, Value)]) {
    let mut rows = Vec::new();
    for (case, template) in cases {
        let fx = Fixture::new();
        fx.ws.index_pending(usize::MAX).expect("the semantic index builds");
        let args = fx.args(template.clone());
        let result = fx.call(tool, args.clone());
        let object = result.as_object().expect("every result is an object");
        if let Some(error) = object.get("error") {
            assert_eq!(
                object.len(),
                1,
                "{tool}/{case}: an error result is exactly {{\"error\": ...}}: {result}"
            );
            assert!(error.is_string(), "{tool}/{case}: the error is a message");
        }
        rows.push(json!({ "case": case, "args": redact(&args), "result": redact(&result) }));
    }
    insta::assert_json_snapshot!(tool, rows);
}

#[test]
fn search_notes() {
    check(
        "search_notes",
        &[
            ("words", json!({"query": "march"})),
            ("filters", json!({"query": "tag:planning notebook:work"})),
            ("paging", json!({"query": "-zzz", "limit": 2, "offset": 1})),
            ("protected notes match by title only", json!({"query": "diary"})),
            ("protected content is not searchable", json!({"query": "secret"})),
            (
                "trash included on request",
                json!({"query": "obsolete", "include_trashed": true}),
            ),
            ("alias q", json!({"q": "roadmap"})),
            (
                "words in an attachment name it and its page",
                json!({"query": "milestones"}),
            ),
            ("bad date", json!({"query": "created:someday"})),
            ("empty query", json!({"query": "  "})),
            ("missing query", json!({})),
            ("unknown argument", json!({"query": "x", "sort": "date"})),
        ],
    );
}

#[test]
fn semantic_search_notes() {
    check(
        "semantic_search_notes",
        &[
            (
                "by meaning",
                json!({"query": "when do we ship search", "relevance": "loose"}),
            ),
            ("like a note", json!({"like_note_id": "{plain}", "relevance": "loose"})),
            (
                "hybrid, in a notebook",
                json!({"query": "risks", "hybrid": true, "notebook_id": "{work}"}),
            ),
            (
                "with a tag",
                json!({"query": "search", "tag": "planning", "relevance": "loose"}),
            ),
            ("nothing close enough", json!({"query": "zebra", "relevance": "strict"})),
            ("like a protected note", json!({"like_note_id": "{secret}"})),
            ("neither query nor note", json!({})),
            ("both query and note", json!({"query": "x", "like_note_id": "{plain}"})),
            ("missing like note", json!({"like_note_id": "nope"})),
            ("bad relevance", json!({"query": "x", "relevance": "medium"})),
        ],
    );
}

#[test]
fn read_note() {
    check(
        "read_note",
        &[
            ("whole note", json!({"note_id": "{plain}"})),
            (
                "a slice, alias id",
                json!({"id": "{plain}", "offset": 2, "max_chars": 10}),
            ),
            ("offset past the end", json!({"note_id": "{plain}", "offset": 100000})),
            ("protected note", json!({"note_id": "{secret}"})),
            ("note in a protected notebook", json!({"note_id": "{in_vault}"})),
            ("missing note", json!({"note_id": "nope"})),
            ("wrong type", json!({"note_id": 5})),
            ("not an object", json!(["{plain}"])),
        ],
    );
}

#[test]
fn list_notebooks() {
    check(
        "list_notebooks",
        &[
            ("whole tree", json!({})),
            ("a sub-tree", json!({"parent_id": "{work}"})),
            ("missing notebook", json!({"parent_id": "nope"})),
        ],
    );
}

#[test]
fn list_notes() {
    check(
        "list_notes",
        &[
            ("a notebook", json!({"notebook_id": "{projects}"})),
            ("top level", json!({})),
            ("the trash", json!({"in_trash": true})),
            ("paged", json!({"limit": 1, "offset": 1})),
            ("a tag, in every notebook", json!({"tag": "PLANNING"})),
            ("a tag nobody uses", json!({"tag": "none"})),
            ("tag and notebook", json!({"tag": "planning", "notebook_id": "{work}"})),
            ("missing notebook", json!({"notebook_id": "nope"})),
            ("notebook and trash", json!({"notebook_id": "{work}", "in_trash": true})),
            ("top level by title", json!({"sort": "title"})),
            ("top level, last changed first", json!({"sort": "updated"})),
            ("a tag, newest first", json!({"tag": "planning", "sort": "created"})),
            ("an unknown order", json!({"sort": "size"})),
        ],
    );
}

#[test]
fn list_tags() {
    check(
        "list_tags",
        &[("all", json!({})), ("paged", json!({"limit": 1, "offset": 5}))],
    );
}

#[test]
fn get_attributes() {
    check(
        "get_attributes",
        &[
            ("labels", json!({"note_id": "{plain}"})),
            ("a relation", json!({"note_id": "{todo}"})),
            (
                "a protected note's attributes are withheld",
                json!({"note_id": "{secret}"}),
            ),
            ("missing note", json!({"note_id": "nope"})),
        ],
    );
}

#[test]
fn read_attachment() {
    check(
        "read_attachment",
        &[
            ("text", json!({"attachment_id": "{attachment}"})),
            (
                "slice",
                json!({"attachment_id": "{attachment}", "offset": 12, "max_chars": 4}),
            ),
            ("from page 1", json!({"attachment_id": "{attachment}", "page": 1})),
            (
                "past the last page",
                json!({"attachment_id": "{attachment}", "page": 2}),
            ),
            (
                "attachment of a protected note",
                json!({"attachment_id": "{secret_attachment}"}),
            ),
            ("missing attachment", json!({"attachment_id": "nope"})),
        ],
    );
}

#[test]
fn get_backlinks() {
    check(
        "get_backlinks",
        &[
            ("one relation", json!({"note_id": "{plain}"})),
            ("none", json!({"note_id": "{todo}"})),
            ("missing note", json!({"note_id": "nope"})),
        ],
    );
}

#[test]
fn recent_changes() {
    check(
        "recent_changes",
        &[
            ("newest", json!({"limit": 2})),
            ("since today", json!({"since": "day", "limit": 1, "offset": 1})),
            ("since a date far ahead", json!({"since": "2999-01-01T00:00:00Z"})),
            ("bad since", json!({"since": "yesterday"})),
        ],
    );
}

#[test]
fn create_note() {
    check(
        "create_note",
        &[
            (
                "in a notebook with tags",
                json!({"title": "Launch", "body": "Plan it.", "notebook_id": "{projects}", "tags": ["q2", "planning"]}),
            ),
            (
                "alias content, top level, to-do",
                json!({"title": "Call Bob", "content": "about the launch", "is_todo": true}),
            ),
            ("protected notebook", json!({"title": "x", "notebook_id": "{vault}"})),
            ("missing notebook", json!({"title": "x", "notebook_id": "nope"})),
            ("empty title", json!({"title": " "})),
            ("missing title", json!({"body": "x"})),
            ("tags not a list", json!({"title": "x", "tags": "a,b"})),
        ],
    );
}

#[test]
fn update_note() {
    check(
        "update_note",
        &[
            ("title", json!({"note_id": "{plain}", "title": "Roadmap 2026"})),
            ("replace body", json!({"note_id": "{plain}", "body": "new body"})),
            (
                "append and prepend",
                json!({"note_id": "{plain}", "append": "Appended.", "prepend": "Top line."}),
            ),
            (
                "edits",
                json!({"note_id": "{plain}", "edits": [{"find": "March", "replace": "April"}, {"find": "Scope creep.", "replace": "None."}]}),
            ),
            (
                "edit matches nothing",
                json!({"note_id": "{plain}", "edits": [{"find": "march", "replace": "x"}]}),
            ),
            (
                "second edit matches twice",
                json!({"note_id": "{plain}", "edits": [{"find": "Ship", "replace": "Deliver"}, {"find": "ch", "replace": "CH"}]}),
            ),
            (
                "edit sees the earlier edit",
                json!({"note_id": "{plain}", "edits": [{"find": "March", "replace": "May"}, {"find": "in May", "replace": "in June"}]}),
            ),
            (
                "identical find and replace",
                json!({"note_id": "{plain}", "edits": [{"find": "March", "replace": "March"}]}),
            ),
            ("no edits", json!({"note_id": "{plain}", "edits": []})),
            (
                "an empty find",
                json!({"note_id": "{plain}", "edits": [{"find": "", "replace": "x"}]}),
            ),
            (
                "body and edits",
                json!({"note_id": "{plain}", "body": "x", "edits": [{"find": "a", "replace": "b"}]}),
            ),
            ("nothing to change", json!({"note_id": "{plain}"})),
            ("complete a to-do", json!({"note_id": "{todo}", "completed": true})),
            (
                "complete a plain note",
                json!({"note_id": "{plain}", "completed": true}),
            ),
            ("protected note", json!({"note_id": "{secret}", "body": "x"})),
            ("trashed note", json!({"note_id": "{trashed}", "body": "x"})),
            ("missing note", json!({"note_id": "nope", "title": "x"})),
            (
                "edit without replace",
                json!({"note_id": "{plain}", "edits": [{"find": "March"}]}),
            ),
        ],
    );
}

#[test]
fn move_note() {
    check(
        "move_note",
        &[
            (
                "to another notebook",
                json!({"note_id": "{plain}", "notebook_id": "{work}"}),
            ),
            (
                "to the top level",
                json!({"note_id": "{plain}", "notebook_id": "_root"}),
            ),
            (
                "into a protected notebook",
                json!({"note_id": "{plain}", "notebook_id": "{vault}"}),
            ),
            ("missing notebook", json!({"note_id": "{plain}", "notebook_id": "nope"})),
            (
                "protected note",
                json!({"note_id": "{secret}", "notebook_id": "{work}"}),
            ),
            ("missing note", json!({"note_id": "nope", "notebook_id": "{work}"})),
        ],
    );
}

#[test]
fn delete_note() {
    check(
        "delete_note",
        &[
            ("to the trash", json!({"note_id": "{plain}"})),
            ("protected note", json!({"note_id": "{secret}"})),
            ("already in the trash", json!({"note_id": "{trashed}"})),
            ("missing note", json!({"note_id": "nope"})),
        ],
    );
}

#[test]
fn restore_note() {
    check(
        "restore_note",
        &[
            ("from the trash", json!({"note_id": "{trashed}"})),
            ("not in the trash", json!({"note_id": "{plain}"})),
            ("protected note", json!({"note_id": "{secret}"})),
            ("missing note", json!({"note_id": "nope"})),
        ],
    );
}

#[test]
fn manage_tags() {
    check(
        "manage_tags",
        &[
            (
                "add, one already there",
                json!({"note_id": "{plain}", "add": ["q2", "planning"], "remove": ["drafts"]}),
            ),
            (
                "remove, ignoring case",
                json!({"note_id": "{plain}", "remove": ["Planning"]}),
            ),
            ("nothing to change", json!({"note_id": "{plain}"})),
            (
                "same tag in both",
                json!({"note_id": "{plain}", "add": ["a"], "remove": ["A"]}),
            ),
            ("empty tag name", json!({"note_id": "{plain}", "add": [" "]})),
            ("protected note", json!({"note_id": "{secret}", "add": ["x"]})),
            ("missing note", json!({"note_id": "nope", "remove": ["x"]})),
        ],
    );
}

#[test]
fn create_notebook() {
    check(
        "create_notebook",
        &[
            (
                "inside another",
                json!({"title": "Q2", "parent_id": "{projects}", "icon": "🚀"}),
            ),
            ("top level", json!({"title": "Reading"})),
            (
                "inside a protected notebook",
                json!({"title": "x", "parent_id": "{vault}"}),
            ),
            ("missing parent", json!({"title": "x", "parent_id": "nope"})),
            ("empty title", json!({"title": ""})),
        ],
    );
}

#[test]
fn rename_notebook() {
    check(
        "rename_notebook",
        &[
            ("rename", json!({"notebook_id": "{projects}", "title": "Initiatives"})),
            ("system notebook", json!({"notebook_id": "_root", "title": "Mine"})),
            ("protected notebook", json!({"notebook_id": "{vault}", "title": "Open"})),
            ("missing notebook", json!({"notebook_id": "nope", "title": "x"})),
        ],
    );
}

#[test]
fn move_notebook() {
    check(
        "move_notebook",
        &[
            (
                "to the top level",
                json!({"notebook_id": "{projects}", "parent_id": "_root"}),
            ),
            (
                "into its own sub-notebook",
                json!({"notebook_id": "{work}", "parent_id": "{projects}"}),
            ),
            (
                "system notebook",
                json!({"notebook_id": "_root", "parent_id": "{work}"}),
            ),
            (
                "into a protected notebook",
                json!({"notebook_id": "{projects}", "parent_id": "{vault}"}),
            ),
            (
                "protected notebook",
                json!({"notebook_id": "{vault}", "parent_id": "{work}"}),
            ),
            (
                "missing target",
                json!({"notebook_id": "{projects}", "parent_id": "nope"}),
            ),
        ],
    );
}

#[test]
fn set_attribute() {
    check(
        "set_attribute",
        &[
            (
                "label",
                json!({"note_id": "{plain}", "type": "label", "name": "priority", "value": "high"}),
            ),
            (
                "replace a label",
                json!({"note_id": "{plain}", "type": "label", "name": "status", "value": "final"}),
            ),
            (
                "relation",
                json!({"note_id": "{plain}", "type": "relation", "name": "see", "value": "{todo}"}),
            ),
            (
                "dangerous name",
                json!({"note_id": "{plain}", "type": "label", "name": "run", "value": "frontendStartup"}),
            ),
            (
                "dangerous relation",
                json!({"note_id": "{plain}", "type": "relation", "name": "runOnNoteChange", "value": "{todo}"}),
            ),
            (
                "missing relation target",
                json!({"note_id": "{plain}", "type": "relation", "name": "see", "value": "nope"}),
            ),
            (
                "protected note",
                json!({"note_id": "{secret}", "type": "label", "name": "x", "value": "y"}),
            ),
            (
                "invalid name",
                json!({"note_id": "{plain}", "type": "label", "name": "two/words", "value": "y"}),
            ),
            (
                "name with spaces",
                json!({"note_id": "{plain}", "type": "label", "name": "due date", "value": "2024-05-01"}),
            ),
            (
                "json label",
                json!({"note_id": "{plain}", "type": "label", "name": "cast", "value": "[\"Ann\", \"Bo\"]", "value_type": "json"}),
            ),
            (
                "json relation",
                json!({"note_id": "{plain}", "type": "relation", "name": "see", "value": "{todo}", "value_type": "json"}),
            ),
            (
                "json that is not",
                json!({"note_id": "{plain}", "type": "label", "name": "cast", "value": "[Ann", "value_type": "json"}),
            ),
            (
                "unknown type",
                json!({"note_id": "{plain}", "type": "tag", "name": "x", "value": "y"}),
            ),
            (
                "missing note",
                json!({"note_id": "nope", "type": "label", "name": "x", "value": "y"}),
            ),
        ],
    );
}

#[test]
fn delete_attribute() {
    check(
        "delete_attribute",
        &[
            ("delete", json!({"note_id": "{plain}", "attribute_id": "{label}"})),
            (
                "another note's attribute",
                json!({"note_id": "{todo}", "attribute_id": "{label}"}),
            ),
            (
                "protected note",
                json!({"note_id": "{secret}", "attribute_id": "{secret_label}"}),
            ),
            (
                "missing attribute",
                json!({"note_id": "{plain}", "attribute_id": "nope"}),
            ),
            ("missing note", json!({"note_id": "nope", "attribute_id": "{label}"})),
        ],
    );
}

#[test]
fn long_notes_have_an_outline_and_pictures_have_no_text() {
    let fx = Fixture::new();
    let body = format!(
        "# Intro\n\n{}\n\n```\n# code, not a heading\n```\n\n## Details\n\nmore",
        "word ".repeat(900)
    );
    let (long, picture) = fx
        .ws
        .write(&quire_core::Actor::User, |w| {
            let long = quire_core::testing::note("Long", &body).create(w)?;
            let picture = w
                .add_attachment(
                    &long,
                    quire_core::NewAttachment {
                        title: "photo.png".into(),
                        mime: "image/png".into(),
                        data: vec![137, 80, 78, 71],
                        text: None,
                    },
                )?
                .id;
            Ok::<_, quire_core::Error>((long, picture))
        })
        .unwrap();
    let read = fx.call("read_note", json!({"note_id": long, "max_chars": 40}));
    let outline: Vec<(u64, &str)> = read["outline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| (h["level"].as_u64().unwrap(), h["text"].as_str().unwrap()))
        .collect();
    assert_eq!(outline, [(1, "Intro"), (2, "Details")]);
    assert_eq!(read["has_more"], true);
    let no_text = fx.call("read_attachment", json!({"attachment_id": picture}));
    assert_eq!(
        no_text,
        json!({"error": "The attachment 'photo.png' (image/png) has no readable text."})
    );
}

/// The query and task tools on a note with tasks: every filter of `list_tasks` and its refusals, grouped results with
/// their members, cells cut to size, and a task completed then opened again.
#[test]
fn query_and_task_tools() {
    let fx = Fixture::new();
    let created = fx.call(
        "create_note",
        json!({"title": "Chores", "tags": ["home"], "body": "- [ ] water 📅 2026-12-07\n- [x] sweep ✅ 2026-12-01\n- [ ] call\n"}),
    );
    let id = created["note_id"].as_str().unwrap().to_owned();
    let texts = |v: &Value| -> Vec<String> {
        v["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["text"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(
        texts(&fx.call("list_tasks", json!({}))),
        ["water 📅 2026-12-07", "call"]
    );
    assert_eq!(
        texts(&fx.call("list_tasks", json!({"state": "done"}))),
        ["sweep ✅ 2026-12-01"]
    );
    assert_eq!(
        texts(&fx.call("list_tasks", json!({"state": "all", "tag": "#home", "note_id": id}))).len(),
        3
    );
    let dated = fx.call(
        "list_tasks",
        json!({"due_before": "2026-12-31", "due_after": "today", "notebook": ""}),
    );
    assert!(texts(&dated).len() <= 1, "{dated}");
    for (args, says) in [
        (json!({"tag": "two words"}), "is not a tag name"),
        (json!({"due_before": "soon"}), "is not a date"),
    ] {
        let refused = fx.call("list_tasks", args);
        assert!(refused["error"].as_str().unwrap().contains(says), "{refused}");
    }
    let grouped = fx.call("query_notes", json!({"query": "TASK GROUP BY file.name"}));
    let chores = grouped["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["group"] == "Chores")
        .unwrap();
    assert_eq!(chores["members"].as_array().unwrap().len(), 3, "{grouped}");
    let lists = fx.call("query_notes", json!({"query": "LIST GROUP BY file.folder"}));
    assert!(
        lists["rows"][0]["members"].as_array().is_some_and(|m| !m.is_empty()),
        "{lists}"
    );
    let cut = fx.call(
        "query_notes",
        json!({"query": "TABLE WITHOUT ID list(1,2,3,4,5,6,7,8,9,10,11,12), {a: {b: {c: {d: 1}}}}, object(\"k1\",1,\"k2\",2,\"k3\",3,\"k4\",4,\"k5\",5,\"k6\",6,\"k7\",7,\"k8\",8,\"k9\",9,\"k10\",10,\"k11\",11) LIMIT 1"}),
    );
    let cells = &cut["rows"][0]["cells"];
    assert_eq!(cells[0].as_array().unwrap().last().unwrap(), "… 2 more", "{cut}");
    assert!(cells[1]["a"]["b"]["c"].is_string(), "{cut}");
    assert_eq!(cells[2]["…"], "1 more", "{cut}");
    let bad = fx.call("query_notes", json!({"query": "TABEL x"}));
    assert!(bad["error"].as_str().unwrap().contains("Dataview's language"), "{bad}");
    // A saved view: the note's first query block, with `this` the note.
    let view = fx.call(
        "create_note",
        json!({"title": "Home view", "body": "want:: home\n```dataview\nLIST WHERE contains(file.tags, \"#\" + this.want)\n```\n"}),
    );
    let view_id = view["note_id"].as_str().unwrap();
    let saved = fx.call("query_notes", json!({"note_id": view_id}));
    assert_eq!(saved["rows"][0]["title"], "Chores", "{saved}");
    let none = fx.call("query_notes", json!({"note_id": id}));
    assert!(
        none["error"].as_str().unwrap().contains("holds no saved query"),
        "{none}"
    );
    let empty = fx.call("query_notes", json!({"query": " "}));
    assert!(empty["error"].as_str().unwrap().contains("Give a query"), "{empty}");
    let done = fx.call(
        "complete_task",
        json!({"note_id": id, "line": 0, "text": "water 📅 2026-12-07"}),
    );
    assert_eq!(
        (done["completed"].as_bool(), done["changed"].as_bool()),
        (Some(true), Some(true)),
        "{done}"
    );
    let again = fx.call("complete_task", json!({"note_id": id, "line": 0, "done": false}));
    assert_eq!(again["text"], "water 📅 2026-12-07", "{again}");
}
