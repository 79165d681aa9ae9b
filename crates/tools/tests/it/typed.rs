//! Typed calls from Rust: every tool's input and output are public types, and a failure carries its kind.

use quire_core::Workspace;
use quire_tools::builtin::{CreateNote, ListNotebooks, ListNotes, ReadNote, SearchNotes, UpdateNote};
use quire_tools::notes::{create_note, list_notes, read_note, search_notes, update_note};
use quire_tools::{ToolActor, ToolErrorKind, ToolRegistry};
use serde_json::json;

use crate::fixture::Fixture;

fn mcp() -> ToolActor {
    ToolActor::mcp("tests")
}

#[test]
fn a_typed_call_returns_the_same_output_as_a_call_by_name() {
    let f = Fixture::new();
    let typed = f
        .tools
        .call_typed::<ReadNote>(
            &f.ws,
            &mcp(),
            read_note::Input {
                note_id: f.plain.clone(),
                ..Default::default()
            },
        )
        .unwrap();
    let by_name = f.call("read_note", json!({"note_id": f.plain}));
    assert_eq!(serde_json::to_value(&typed).unwrap(), by_name);
    assert_eq!(typed.note.title, "Roadmap");
    assert!(typed.body.contains("Ship search in March."));

    let page = f
        .tools
        .call_typed::<ListNotes>(
            &f.ws,
            &mcp(),
            list_notes::Input {
                notebook_id: Some(f.projects.clone()),
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(page.page.items.len() as u64, page.page.total);
    assert_eq!(page.page.items[0].notebook_path, "Work/Projects");

    let hits = f
        .tools
        .call_typed::<SearchNotes>(
            &f.ws,
            &mcp(),
            search_notes::Input {
                query: "search".into(),
                ..Default::default()
            },
        )
        .unwrap();
    assert!(hits.items.iter().any(|hit| hit.note.note_id == f.plain));

    let tree = f
        .tools
        .call_typed::<ListNotebooks>(&f.ws, &mcp(), Default::default())
        .unwrap();
    assert!(tree.page.items.iter().any(|n| n.notebook.path == "Work/Projects"));
}

#[test]
fn a_typed_write_runs_with_the_callers_guards() {
    let f = Fixture::new();
    let created = f
        .tools
        .call_typed::<CreateNote>(
            &f.ws,
            &mcp(),
            create_note::Input {
                title: "Typed".into(),
                body: "made from Rust".into(),
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(created.title, "Typed");

    let refused = f
        .tools
        .call_typed::<UpdateNote>(
            &f.ws,
            &mcp(),
            update_note::Input {
                note_id: f.secret.clone(),
                body: Some("overwritten".into()),
                ..Default::default()
            },
        )
        .unwrap_err();
    assert_eq!(refused.kind(), ToolErrorKind::Protected);
}

#[test]
fn each_failure_has_a_kind() {
    let f = Fixture::new();
    let kind_of = |name: &str, args| {
        f.tools
            .call(&f.ws, &mcp(), name, args)
            .unwrap()
            .error()
            .map(|e| e.kind())
    };
    assert_eq!(
        kind_of("read_note", json!({"note_id": "nope"})),
        Some(ToolErrorKind::NotFound)
    );
    assert_eq!(
        kind_of("read_note", json!({"note_id": f.secret})),
        Some(ToolErrorKind::Protected)
    );
    assert_eq!(kind_of("read_note", json!({"nope": 1})), Some(ToolErrorKind::Invalid));
    assert_eq!(
        kind_of("search_notes", json!({"query": "title:"})),
        Some(ToolErrorKind::Invalid)
    );
    assert_eq!(kind_of("read_note", json!({"note_id": f.plain})), None);
}

#[test]
fn the_user_reads_protected_content_through_a_typed_read() {
    let f = Fixture::new();
    let note = ToolRegistry::builtin()
        .read_as_user_typed::<ReadNote>(
            &f.ws,
            read_note::Input {
                note_id: f.secret.clone(),
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(note.body, "my secret thoughts about rubies");
    let missing = ToolRegistry::builtin()
        .read_as_user_typed::<ReadNote>(
            &Workspace::open_in_memory().unwrap(),
            read_note::Input {
                note_id: "nope".into(),
                ..Default::default()
            },
        )
        .unwrap_err();
    assert_eq!(missing.kind(), ToolErrorKind::NotFound);
}
