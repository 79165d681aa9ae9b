//! Queries in Dataview's language over labels, inline fields, tags, notebooks, links and tasks: what they find,
//! that protection holds for actors other than the user, that derived tasks follow every write, and (a property
//! test) that SQL's narrowing never changes an answer.

use proptest::prelude::*;
use quire_core::query::{QueryOptions, QueryResult};
use quire_core::{Actor, NoteUpdate, Workspace, testing};

use crate::fixture::agent;

fn at(day: &str) -> QueryOptions {
    QueryOptions {
        now: Some(format!("{day}T09:00").parse().unwrap()),
        ..QueryOptions::default()
    }
}

fn run(ws: &Workspace, actor: &Actor, q: &str) -> QueryResult {
    ws.read(actor, |r| r.query_text(q, &at("2026-12-06"))).unwrap()
}

/// The titles of the rows, in order.
fn titles(res: &QueryResult) -> Vec<String> {
    res.rows
        .iter()
        .map(|r| r.note.as_ref().map(|n| n.title.clone()).unwrap_or_default())
        .collect()
}

fn books(ws: &Workspace) {
    testing::note("Dune", "Read in 2024.\nauthor:: Frank Herbert\n")
        .label("rating", "5")
        .tags(["book"])
        .create_in(ws)
        .unwrap();
    testing::note("Emma", "rating:: 3\nGenre: [genre:: novel]")
        .tags(["book/classic"])
        .create_in(ws)
        .unwrap();
    testing::note("Solaris", "#book and nothing rated")
        .create_in(ws)
        .unwrap();
    testing::note(
        "Groceries",
        "- [ ] eggs 📅 2026-12-07\n- [x] bread ✅ 2026-12-05\n- [ ] milk ⏫\n",
    )
    .create_in(ws)
    .unwrap();
}

#[test]
fn a_table_over_labels_and_inline_fields_filters_sorts_and_names_its_columns() {
    let ws = Workspace::open_in_memory().unwrap();
    books(&ws);
    let res = run(
        &ws,
        &Actor::User,
        "TABLE rating AS \"Stars\", author FROM #book WHERE rating >= 3 SORT rating DESC",
    );
    assert_eq!(res.headers, ["File", "Stars", "author"]);
    assert_eq!(
        titles(&res),
        ["Dune", "Emma"],
        "Solaris is a #book without a rating; #book/classic is below #book"
    );
    assert_eq!(res.rows[0].cells[0].to_json(), serde_json::json!(5));
    assert_eq!(res.rows[0].cells[1].display(), "Frank Herbert");
    assert_eq!(res.rows[1].cells[1].display(), "-", "Emma has no author");
    let list = run(&ws, &Actor::User, "LIST genre WHERE genre");
    assert_eq!(titles(&list), ["Emma"]);
    let not = run(&ws, &Actor::User, "LIST FROM #book AND -#book/classic");
    assert_eq!(titles(&not), ["Dune", "Solaris"]);
}

#[test]
fn tasks_are_found_by_state_and_due_date_and_follow_every_edit() {
    let ws = Workspace::open_in_memory().unwrap();
    books(&ws);
    let due_soon = "TASK WHERE !completed AND due <= date(today) + dur(7 days) AND due";
    let res = run(&ws, &Actor::User, due_soon);
    let texts: Vec<String> = res.rows.iter().map(|r| r.task.as_ref().unwrap().text.clone()).collect();
    assert_eq!(texts, ["eggs 📅 2026-12-07"]);
    assert_eq!(res.rows[0].task.as_ref().unwrap().line, 0);
    // Dataview's order puts null first: without `AND due`, undated open tasks are due "before" any date.
    let res = run(&ws, &Actor::User, "TASK WHERE !completed AND due <= date(today)");
    assert_eq!(res.rows.len(), 1, "milk has no due date");
    // The note changes: its tasks follow.
    let id = ws
        .read(&Actor::User, |r| {
            r.query_text("LIST WHERE file.name = \"Groceries\"", &at("2026-12-06"))
        })
        .unwrap()
        .rows[0]
        .note
        .clone()
        .unwrap()
        .id;
    ws.write(&Actor::User, |w| {
        w.update_note(
            &id,
            NoteUpdate {
                body: Some("- [x] eggs 📅 2026-12-07\n- [ ] jam 📅 2026-12-08 🔼\n".into()),
                ..NoteUpdate::default()
            },
        )
    })
    .unwrap();
    let res = run(&ws, &Actor::User, due_soon);
    let texts: Vec<String> = res.rows.iter().map(|r| r.task.as_ref().unwrap().text.clone()).collect();
    assert_eq!(texts, ["jam 📅 2026-12-08 🔼"]);
    assert_eq!(res.rows[0].task.as_ref().unwrap().priority, "medium");
    ws.write(&Actor::User, |w| w.trash_note(&id)).unwrap();
    assert!(
        run(&ws, &Actor::User, due_soon).rows.is_empty(),
        "a trashed note's tasks are gone"
    );
}

#[test]
fn group_by_and_flatten_work_on_rows() {
    let ws = Workspace::open_in_memory().unwrap();
    testing::note("A", "")
        .label("status", "open")
        .json_label("people", "[\"Ann\", \"Bo\"]")
        .create_in(&ws)
        .unwrap();
    testing::note("B", "").label("status", "open").create_in(&ws).unwrap();
    testing::note("C", "").label("status", "done").create_in(&ws).unwrap();
    let res = run(
        &ws,
        &Actor::User,
        "TABLE length(rows) AS n, rows.file.name AS notes GROUP BY status",
    );
    assert_eq!(res.headers, ["Group", "n", "notes"]);
    let groups: Vec<(String, String, String)> = res
        .rows
        .iter()
        .map(|r| {
            (
                r.group.as_ref().unwrap().display(),
                r.cells[0].display(),
                r.cells[1].display(),
            )
        })
        .collect();
    assert_eq!(
        groups,
        [
            ("done".into(), "1".into(), "C".into()),
            ("open".into(), "2".into(), "A, B".into())
        ]
    );
    let flat = run(
        &ws,
        &Actor::User,
        "TABLE WITHOUT ID person FLATTEN people AS person WHERE person",
    );
    let people: Vec<String> = flat.rows.iter().map(|r| r.cells[0].display()).collect();
    assert_eq!(people, ["Ann", "Bo"]);
}

#[test]
fn a_protected_note_shows_only_its_title_to_the_agent() {
    let ws = Workspace::open_in_memory().unwrap();
    books(&ws);
    testing::note("Diary", "mood:: low\n- [ ] call the doctor 📅 2026-12-07\n#book")
        .label("rating", "5")
        .protected()
        .create_in(&ws)
        .unwrap();
    let user = run(&ws, &Actor::User, "TABLE rating, mood WHERE rating = 5");
    assert_eq!(titles(&user), ["Diary", "Dune"]);
    let bot = run(&ws, &agent(), "TABLE rating, mood WHERE rating = 5");
    assert_eq!(titles(&bot), ["Dune"], "its fields are not the agent's to see");
    let all = run(&ws, &agent(), "TABLE rating, mood, file.tags");
    let diary = all
        .rows
        .iter()
        .find(|r| r.note.as_ref().unwrap().title == "Diary")
        .unwrap();
    assert!(
        diary.cells.iter().all(|c| c.display() == "-" || c.display().is_empty()),
        "{diary:?}"
    );
    assert!(
        run(&ws, &agent(), "TASK WHERE contains(text, \"doctor\")")
            .rows
            .is_empty()
    );
    assert_eq!(
        titles(&run(&ws, &agent(), "LIST FROM #book")),
        ["Dune", "Emma", "Solaris"]
    );
    assert_eq!(
        run(&ws, &Actor::User, "TASK WHERE contains(text, \"doctor\")")
            .rows
            .len(),
        1
    );
}

#[test]
fn a_query_that_does_not_read_says_where() {
    let ws = Workspace::open_in_memory().unwrap();
    for (q, says) in [
        ("TABEL rating", "starts with TABLE"),
        ("TABLE rating FROM", "FROM takes"),
        ("LIST WHERE (a", "expected `)`"),
        ("LIST LIMIT x", "whole number"),
        ("LIST WHERE nofunction(1)", "no function is called nofunction"),
        ("LIST WHERE \"open", "not closed"),
    ] {
        let err = ws.read(&Actor::User, |r| r.query_text(q, &QueryOptions::default()));
        if q.contains("nofunction") {
            // No note: nothing failed; with one note, every row fails and the query says so.
            testing::note("n", "").create_in(&ws).unwrap();
            let err = ws
                .read(&Actor::User, |r| r.query_text(q, &QueryOptions::default()))
                .unwrap_err();
            assert!(err.to_string().contains(says), "{q}: {err}");
            continue;
        }
        let err = err.unwrap_err().to_string();
        assert!(err.contains(says), "{q}: {err}");
    }
}

/// A random note: its tag, rating label, score field, protection and tasks (done, due day).
type RandomNote = (u8, Option<u8>, Option<u8>, bool, Vec<(bool, Option<u8>)>);

/// A small workspace of random notes: labels, inline fields, tags and tasks.
fn arbitrary_notes() -> impl Strategy<Value = Vec<RandomNote>> {
    prop::collection::vec(
        (
            0u8..4,
            prop::option::of(0u8..6),
            prop::option::of(0u8..6),
            any::<bool>(),
            prop::collection::vec((any::<bool>(), prop::option::of(0u8..20)), 0..4),
        ),
        1..12,
    )
}

fn arbitrary_where() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        (0u8..6).prop_map(|n| format!("rating = {n}")),
        (0u8..6).prop_map(|n| format!("rating >= {n}")),
        (0u8..6).prop_map(|n| format!("rating < {n}")),
        (0u8..6).prop_map(|n| format!("{n} < score")),
        Just("rating".to_owned()),
        Just("!score".to_owned()),
        Just("contains(file.tags, \"#t1\")".to_owned()),
        Just("score != null".to_owned()),
        Just("status = \"open\"".to_owned()),
        Just("\"done\" = status".to_owned()),
        (0u8..6).prop_map(|n| format!("{n} = score")),
    ];
    leaf.prop_recursive(2, 6, 2, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a}) AND ({b})")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a}) OR ({b})")),
            inner.prop_map(|a| format!("!({a})")),
        ]
    })
}

fn arbitrary_task_where() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("completed".to_owned()),
        Just("!completed".to_owned()),
        Just("due".to_owned()),
        (0i64..20, 0u8..5).prop_map(|(d, op)| {
            let op = ["<", "<=", "=", ">", ">="][op as usize];
            format!("due {op} date(2026-12-01) + dur({d} days)")
        }),
        (0i64..20).prop_map(|d| format!("date(today) + dur({d} days) >= due")),
    ];
    prop::collection::vec(leaf, 1..4).prop_map(|l| l.join(" AND "))
}

fn make(notes: &[RandomNote]) -> Workspace {
    let ws = Workspace::open_in_memory().unwrap();
    for (i, (tag, rating, score, protected, tasks)) in notes.iter().enumerate() {
        let mut body = String::new();
        if let Some(s) = score {
            body.push_str(&format!("score:: {s}\n"));
        }
        for (done, due) in tasks {
            body.push_str(&format!("- [{}] task", if *done { "x" } else { " " }));
            if let Some(d) = due {
                body.push_str(&format!(" 📅 2026-12-{:02}", d + 1));
            }
            body.push('\n');
        }
        let mut note = testing::note(format!("n{i}"), body).tags([format!("t{tag}")]);
        if let Some(r) = rating {
            // Text, JSON and odd spacing: typed the same way.
            note = match r % 3 {
                0 => note.label("rating", &r.to_string()),
                1 => note.json_label("rating", &format!("{r}.0")),
                _ => note.label("rating", &format!(" {r} ")),
            };
        }
        note = match tag {
            0 => note.label("status", "open"),
            1 => note.json_label("status", "\" done\""),
            2 => note.label("status", "opened"),
            _ => note,
        };
        if *protected {
            note = note.protected();
        }
        note.create_in(&ws).unwrap();
    }
    ws
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// SQL's narrowing never changes an answer: every query gives the rows a run without it gives, for the user
    /// and for the agent.
    #[test]
    fn narrowing_in_sql_never_changes_the_rows(notes in arbitrary_notes(), page in arbitrary_where(), task in arbitrary_task_where()) {
        let ws = make(&notes);
        for actor in [Actor::User, agent()] {
            for q in [format!("TABLE rating, score WHERE {page}"), format!("TASK WHERE {task}")] {
                let fast = ws.read(&actor, |r| r.query_text(&q, &at("2026-12-06"))).unwrap();
                let naive = ws
                    .read(&actor, |r| r.query_text(&q, &QueryOptions { exhaustive: true, ..at("2026-12-06") }))
                    .unwrap();
                prop_assert_eq!(&fast, &naive, "{}", q);
            }
        }
    }
}

/// `file.size` is the only part of a row read from the note's body; a query reads it only when it can see it, and
/// every way of seeing it gives the body's length.
#[test]
fn file_size_is_read_whenever_a_query_can_see_it() {
    let ws = Workspace::open_in_memory().unwrap();
    let body = "- [ ] call Ada 📅 2026-12-07\nnotes: ünï\n";
    testing::note("Sized", body).create_in(&ws).unwrap();
    let size = serde_json::json!(body.len());
    let cell = |q: &str| run(&ws, &Actor::User, q).rows[0].cells[0].to_json();
    assert_eq!(cell("TABLE file.size"), size);
    assert_eq!(cell("TABLE FILE.Size"), size, "names in any case");
    assert_eq!(cell("TABLE file")["size"], size, "file whole");
    assert_eq!(
        cell("TABLE rows.file.size GROUP BY file.folder"),
        serde_json::json!([body.len()])
    );
    let tasks = run(&ws, &Actor::User, "TASK WHERE !completed AND file.size > 10");
    assert_eq!(tasks.rows.len(), 1, "a task query that names the size reads it");
    let tasks = run(&ws, &Actor::User, "TASK WHERE !completed AND due <= date(2026-12-08)");
    assert_eq!(tasks.rows.len(), 1);
}

fn toggle(note_id: &str, line: usize, done: bool) -> quire_core::TaskToggle {
    quire_core::TaskToggle {
        note_id: note_id.to_owned(),
        line,
        done,
        today: Some("2026-12-06".parse().unwrap()),
        ..Default::default()
    }
}

#[test]
fn completing_a_task_changes_its_line_in_one_undoable_change_and_a_recurring_one_comes_again() {
    let ws = Workspace::open_in_memory().unwrap();
    let id = testing::note(
        "Home",
        "# Chores\n- [ ] Water plants 📅 2026-12-05 🔁 every week\n- [ ] Call Ann\n",
    )
    .create_in(&ws)
    .unwrap();
    let (done, set) = ws
        .write(&agent(), |w| {
            let done = w.set_task_done(&toggle(&id, 1, true))?;
            Ok::<_, quire_core::Error>((done, w.change_set_id().map(str::to_owned)))
        })
        .unwrap();
    assert_eq!(done.next.as_deref(), Some("Water plants 📅 2026-12-12 🔁 every week"));
    assert_eq!(done.line, 2);
    let body = ws.read(&Actor::User, |r| r.note(&id)).unwrap().body;
    assert_eq!(
        body,
        "# Chores\n- [ ] Water plants 📅 2026-12-12 🔁 every week\n\
         - [x] Water plants 📅 2026-12-05 🔁 every week ✅ 2026-12-06\n- [ ] Call Ann\n"
    );
    let open = run(&ws, &Actor::User, "TASK WHERE !completed");
    assert_eq!(open.rows.len(), 2);
    // A stale line number is refused, saying what the line holds now.
    let stale = quire_core::TaskToggle {
        expect_text: Some("Call Ann".into()),
        ..toggle(&id, 2, true)
    };
    let err = ws
        .write(&Actor::User, |w| w.set_task_done(&stale))
        .unwrap_err()
        .to_string();
    assert!(err.contains("changed since it was read"), "{err}");
    // Undone whole, with the agent's revision.
    ws.write(&Actor::User, |w| w.revert_change_set(&set.unwrap())).unwrap();
    let body = ws.read(&Actor::User, |r| r.note(&id)).unwrap().body;
    assert!(body.starts_with("# Chores\n- [ ] Water plants 📅 2026-12-05"), "{body}");
    // Open again: the done date goes.
    ws.write(&Actor::User, |w| w.set_task_done(&toggle(&id, 2, true)))
        .unwrap();
    ws.write(&Actor::User, |w| w.set_task_done(&toggle(&id, 2, false)))
        .unwrap();
    let body = ws.read(&Actor::User, |r| r.note(&id)).unwrap().body;
    assert!(body.ends_with("- [ ] Call Ann\n"), "{body}");
}

#[test]
fn the_agent_cannot_complete_a_task_in_a_protected_note() {
    let ws = Workspace::open_in_memory().unwrap();
    let id = testing::note("Diary", "- [ ] secret errand\n")
        .protected()
        .create_in(&ws)
        .unwrap();
    let err = ws
        .write(&agent(), |w| w.set_task_done(&toggle(&id, 0, true)))
        .unwrap_err();
    assert!(
        matches!(
            err,
            quire_core::Error::ProtectedContent | quire_core::Error::Protected(_)
        ),
        "{err:?}"
    );
    let body = ws.read(&Actor::User, |r| r.note(&id)).unwrap().body;
    assert_eq!(body, "- [ ] secret errand\n");
}

#[test]
fn a_save_that_changes_prose_keeps_the_derived_rows_and_a_changed_hashtag_is_seen() {
    let ws = Workspace::open_in_memory().unwrap();
    let id = testing::note("N", "#Idea first\n- [ ] one 📅 2026-12-07\n")
        .create_in(&ws)
        .unwrap();
    let save = |body: &str| {
        ws.write(&Actor::User, |w| {
            w.update_note(
                &id,
                NoteUpdate {
                    body: Some(body.into()),
                    ..NoteUpdate::default()
                },
            )
        })
        .unwrap();
    };
    save("#Idea first, more prose\n- [ ] one 📅 2026-12-07\n");
    let tasks = run(&ws, &Actor::User, "TASK");
    assert_eq!(tasks.rows.len(), 1);
    assert_eq!(
        run(&ws, &Actor::User, "TABLE file.etags").rows[0].cells[0].display(),
        "#Idea"
    );
    save("#idea first, more prose\n- [ ] one 📅 2026-12-07\n- [ ] two\n");
    assert_eq!(
        run(&ws, &Actor::User, "TABLE file.etags").rows[0].cells[0].display(),
        "#idea"
    );
    assert_eq!(run(&ws, &Actor::User, "TASK").rows.len(), 2);
}

#[test]
fn hostile_queries_and_task_lines_get_an_answer_or_an_error_never_a_crash() {
    let ws = Workspace::open_in_memory().unwrap();
    let id = testing::note("N", "x:: 9999999999999999999 days 1 day\n- [ ] 家賃 ✅ 2026年1月5日\n- [ ] y 📅 2026年1月5日 🔁 every month\n- [ ] z 📅 2026-12-01 🔁 every 8000000 days\n")
        .create_in(&ws)
        .unwrap();
    let deep = format!("LIST WHERE {}true", "!".repeat(100_000));
    let nested = format!("LIST WHERE {}1{}", "(".repeat(5_000), ")".repeat(5_000));
    let long = format!("LIST WHERE \"{}\"", "a".repeat(30_000));
    for q in [deep.as_str(), nested.as_str(), long.as_str()] {
        let err = ws
            .read(&Actor::User, |r| r.query_text(q, &QueryOptions::default()))
            .unwrap_err();
        assert!(err.to_string().contains("the query does not read"), "{err}");
    }
    let huge = run(
        &ws,
        &Actor::User,
        "TABLE x, \"x\" * 10000 * 10000 * 10000, -(dur(1 day) * -100000000000000000000000000)",
    );
    assert_eq!(huge.rows.len(), 1);
    assert!(
        !huge.warnings.is_empty(),
        "the text too long to make is refused: {huge:?}"
    );
    for line in 1..4 {
        ws.write(&Actor::User, |w| w.set_task_done(&toggle(&id, line, true)))
            .unwrap();
    }
    ws.write(&Actor::User, |w| w.set_task_done(&toggle(&id, 1, false)))
        .unwrap();
}

#[test]
fn narrowing_keeps_what_the_evaluator_keeps_and_reveals_nothing_protected() {
    let ws = Workspace::open_in_memory().unwrap();
    testing::note(
        "Plan",
        "due_date:: 2026-01-01\n- [ ] odd 📅 2026-02-30\n[[Nowhere]] [[Other]]",
    )
    .create_in(&ws)
    .unwrap();
    testing::note("Other", "").create_in(&ws).unwrap();
    assert_eq!(titles(&run(&ws, &Actor::User, "LIST WHERE due_date")), ["Plan"]);
    // 2026-02-30 is no date: null, which comes before every date.
    assert_eq!(
        run(&ws, &Actor::User, "TASK WHERE due <= date(2026-02-01)").rows.len(),
        1
    );
    // An unresolved link does not empty a negated outgoing().
    assert_eq!(
        titles(&run(&ws, &Actor::User, "LIST FROM -outgoing([[Plan]])")),
        ["Plan"]
    );
    // Whether a protected note's hidden value matches changes nothing the agent sees.
    let answer = |salary: &str| {
        let ws = Workspace::open_in_memory().unwrap();
        testing::note("Pay", format!("salary:: {salary}"))
            .protected()
            .create_in(&ws)
            .unwrap();
        testing::note("Open", "salary:: 1").create_in(&ws).unwrap();
        let q = "LIST WHERE (\"a\" - 1) AND salary = 120000";
        format!("{:?}", ws.read(&agent(), |r| r.query_text(q, &QueryOptions::default())))
    };
    assert_eq!(answer("120000"), answer("90000"));
    // Front matter's tags read as a field.
    testing::note("Tagged", "").tags(["book"]).create_in(&ws).unwrap();
    assert_eq!(
        titles(&run(&ws, &Actor::User, "LIST WHERE contains(tags, \"book\")")),
        ["Tagged"]
    );
}
