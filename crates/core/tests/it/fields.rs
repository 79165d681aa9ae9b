//! Setting a field from a view: the value is written where the note keeps it (an inline field's line, or a label),
//! the rest of the note as it was; a query reads the new value; what a view may not set is refused.

use quire_core::query::QueryOptions;
use quire_core::{Actor, FieldWritten, Workspace, testing};

use crate::fixture::agent;

fn body(ws: &Workspace, id: &str) -> String {
    ws.read(&Actor::User, |r| r.note(id)).unwrap().body
}

#[test]
fn a_field_is_written_on_its_own_line_in_its_bracket_or_as_a_label() {
    let ws = Workspace::open_in_memory().unwrap();
    let id = testing::note(
        "Dune",
        "# Dune\n- **Status**:: reading\nA book [rating:: 3] (pages:: 412), see [[Arrakis]].\n```\nstatus:: code\n```\n",
    )
    .label("Genre", "sf")
    .create_in(&ws)
    .unwrap();
    let set = |name: &str, value: &str| ws.write(&Actor::User, |w| w.set_note_field(&id, name, value));

    assert_eq!(set("status", "done").unwrap(), FieldWritten::Line { line: 1 });
    assert_eq!(set("Rating", " 5 ").unwrap(), FieldWritten::Line { line: 2 });
    assert_eq!(set("pages", "400").unwrap(), FieldWritten::Line { line: 2 });
    assert_eq!(
        body(&ws, &id),
        "# Dune\n- **Status**:: done\nA book [rating:: 5] (pages:: 400), see [[Arrakis]].\n```\nstatus:: code\n```\n"
    );
    assert_eq!(
        set("genre", "classic").unwrap(),
        FieldWritten::Label { name: "Genre".into() }
    );
    assert_eq!(
        set("Year", "1965").unwrap(),
        FieldWritten::Label { name: "Year".into() }
    );

    let table = ws
        .read(&Actor::User, |r| {
            r.query_text("TABLE status, rating, genre, year, file.name", &QueryOptions::default())
        })
        .unwrap();
    let cells: Vec<String> = table.rows[0].cells.iter().map(|v| v.display()).collect();
    assert_eq!(cells, ["done", "5", "classic", "1965", "Dune"]);
    // The view learns which columns it may write back.
    assert_eq!(
        table.fields,
        [
            None,
            Some("status".into()),
            Some("rating".into()),
            Some("genre".into()),
            Some("year".into()),
            None
        ]
    );
}

#[test]
fn what_a_view_may_not_set_is_refused_and_nothing_changes() {
    let ws = Workspace::open_in_memory().unwrap();
    let id = testing::note("Plan", "status:: open\n").create_in(&ws).unwrap();
    for (name, value) in [("file", "x"), ("file.name", "x"), ("  ", "x"), ("status", "two\nlines")] {
        let err = ws
            .write(&Actor::User, |w| w.set_note_field(&id, name, value))
            .unwrap_err();
        assert!(matches!(err, quire_core::Error::Invalid(_)), "{name}: {err}");
    }
    let before = ws.read(&Actor::User, |r| r.note_summary(&id)).unwrap().updated;
    std::thread::sleep(std::time::Duration::from_millis(5));
    ws.write(&Actor::User, |w| w.set_note_field(&id, "status", "open"))
        .unwrap();
    assert_eq!(body(&ws, &id), "status:: open\n");
    let after = ws.read(&Actor::User, |r| r.note_summary(&id)).unwrap().updated;
    assert_eq!(before, after, "a value set to what it was writes nothing");

    ws.write(&Actor::User, |w| w.set_note_protected(&id, true)).unwrap();
    let err = ws
        .write(&agent(), |w| w.set_note_field(&id, "status", "hacked"))
        .unwrap_err();
    assert!(err.to_string().contains("protected"), "{err}");
    assert_eq!(body(&ws, &id), "status:: open\n");
}

#[test]
fn a_grouped_query_names_the_field_its_board_moves_cards_by() {
    let ws = Workspace::open_in_memory().unwrap();
    testing::note("A", "status:: todo\n").create_in(&ws).unwrap();
    testing::note("B", "status:: todo\n").create_in(&ws).unwrap();
    testing::note("C", "status:: done\n").create_in(&ws).unwrap();
    let res = ws
        .read(&Actor::User, |r| {
            r.query_text(
                "TABLE length(rows) AS n WHERE status GROUP BY status SORT status",
                &QueryOptions::default(),
            )
        })
        .unwrap();
    assert_eq!(res.group_field.as_deref(), Some("status"));
    let members: Vec<Vec<String>> = res
        .rows
        .iter()
        .map(|g| {
            g.children
                .iter()
                .map(|c| c.note.as_ref().unwrap().title.clone())
                .collect()
        })
        .collect();
    assert_eq!(members.len(), 2);
    assert_eq!(members.iter().map(Vec::len).sum::<usize>(), 3);
    assert!(res.fields.is_empty(), "a grouped table's cells are the group's");
    // A name FLATTEN binds is the row's own: not a field of the note to write back.
    let flat = ws
        .read(&Actor::User, |r| {
            r.query_text("TABLE s, status FLATTEN status AS s", &QueryOptions::default())
        })
        .unwrap();
    assert_eq!(flat.fields, [None, None, Some("status".into())]);
}

#[test]
fn a_note_with_query_blocks_is_a_saved_view_run_with_this_as_the_note() {
    let ws = Workspace::open_in_memory().unwrap();
    testing::note("Dune", "rating:: 5\n")
        .tags(["book"])
        .create_in(&ws)
        .unwrap();
    let body = "target:: 4\n```dataview\nLIST WHERE rating >= this.target\n```\n```query board\nTABLE rating GROUP BY rating\n```\n```dataviewjs\ndv.list()\n```\n~~~query nonsense\nTABLE WHERE (\n~~~\n";
    let view = testing::note("Top books", body).create_in(&ws).unwrap();
    let saved = quire_core::query::saved_queries(body);
    let shapes: Vec<(&str, Option<&str>)> = saved.iter().map(|s| (s.query.as_str(), s.view.as_deref())).collect();
    assert_eq!(
        shapes,
        [
            ("LIST WHERE rating >= this.target", None),
            ("TABLE rating GROUP BY rating", Some("board")),
            ("TABLE WHERE (", None),
        ]
    );
    let runs = ws
        .read(&Actor::User, |r| r.run_view(&view, &QueryOptions::default()))
        .unwrap();
    assert_eq!(runs.len(), 3);
    let first = runs[0].result.as_ref().unwrap();
    assert_eq!(first.rows.len(), 1, "this.target is the view note's own field");
    assert!(runs[1].result.is_some());
    assert!(
        runs[2].error.as_deref().unwrap().contains("expected"),
        "{:?}",
        runs[2].error
    );

    // An agent cannot run a protected note's saved view: its text is the queries.
    ws.write(&Actor::User, |w| w.set_note_protected(&view, true)).unwrap();
    let refused = ws.read(&agent(), |r| r.run_view(&view, &QueryOptions::default()));
    assert!(
        matches!(refused, Err(quire_core::Error::ProtectedContent)),
        "{refused:?}"
    );
}

#[test]
fn a_scoped_reader_cannot_name_a_note_outside_its_scope_as_this() {
    let ws = Workspace::open_in_memory().unwrap();
    let (inside, outside) = ws
        .write(&Actor::User, |w| {
            let a = w.create_notebook_path(None, "Shared")?.notebook.id;
            let b = w.create_notebook_path(None, "Private")?.notebook.id;
            Ok::<_, quire_core::Error>((a, b))
        })
        .unwrap();
    let secret = testing::note("Salary", "amount:: 90000\n")
        .notebook(&outside)
        .create_in(&ws)
        .unwrap();
    testing::note("Public", "x:: 1\n")
        .notebook(&inside)
        .create_in(&ws)
        .unwrap();
    let scoped = ws.scoped(quire_core::Scope::notebooks([inside]));
    let options = QueryOptions {
        this_note: Some(secret),
        ..QueryOptions::default()
    };
    let refused = scoped.read(&agent(), |r| r.query_text("LIST this.amount", &options));
    assert!(matches!(refused, Err(quire_core::Error::NotFound(_))), "{refused:?}");
}

#[test]
fn from_a_page_not_written_yet_finds_the_notes_that_link_to_it_as_each_reader_may_see_them() {
    let ws = Workspace::open_in_memory().unwrap();
    testing::note("Dune", "by [[Frank Herbert]]").create_in(&ws).unwrap();
    let secret = testing::note("Diary", "met [[Frank Herbert]] today")
        .create_in(&ws)
        .unwrap();
    testing::note("Other", "[[Frank]] and [[Herbert]]")
        .create_in(&ws)
        .unwrap();
    ws.write(&Actor::User, |w| w.set_note_protected(&secret, true)).unwrap();
    let titles = |actor: &Actor| -> Vec<String> {
        ws.read(actor, |r| {
            r.query_text("LIST FROM [[Frank Herbert]] SORT file.name", &QueryOptions::default())
        })
        .unwrap()
        .rows
        .into_iter()
        .map(|r| r.note.unwrap().title)
        .collect()
    };
    assert_eq!(titles(&Actor::User), ["Diary", "Dune"]);
    assert_eq!(
        titles(&agent()),
        ["Dune"],
        "a protected note's links are not the agent's to search"
    );
}
