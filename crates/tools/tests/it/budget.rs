//! Every tool's answer stays under about 4,000 tokens (counted with the `o200k_base` tokenizer) when it is fed the
//! largest inputs the workspace allows: titles and tag names at their length limits, deep notebook paths, a body of
//! megabytes with thousands of headings and links, hundreds of attachments, attributes and backlinks, pages of 100.

use quire_core::testing;
use quire_core::{Actor, AttributeKind, NewAttachment, NewNotebook, Workspace};
use quire_tools::{ToolActor, ToolRegistry};
use serde_json::{Value, json};

/// The ceiling the issue sets: "none can exceed about 4,000 tokens".
const MOST_TOKENS: usize = 4_000;

/// Text of `chars` characters that is hard on a tokenizer: English, CJK, code, hex ids, numbers and emoji.
fn hard_text(chars: usize, seed: usize) -> String {
    const PIECES: &[&str] = &[
        "the quarterly planning review ",
        "旅行の準備と予算の見直し。",
        "fn main() { let x = vec![1, 2, 3]; } ",
        "0a1b2c3d4e5f6a7b8c9d ",
        "2026-01-15T09:00:00Z 314159 ",
        "🎒🧭 ",
        "Überprüfung der Änderungen — ",
        "| a | b |\n",
    ];
    let mut out = String::new();
    let mut i = seed;
    let mut count = 0;
    while count < chars {
        let piece = PIECES[i % PIECES.len()];
        out.push_str(piece);
        count += piece.chars().count();
        i += 1;
    }
    out.chars().take(chars).collect()
}

fn title(seed: usize) -> String {
    // One line, at the length limit, unique.
    let mut t = format!("{seed} ");
    t.push_str(&hard_text(quire_core::MAX_TITLE_CHARS, seed).replace('\n', " "));
    t.chars()
        .take(quire_core::MAX_TITLE_CHARS)
        .collect::<String>()
        .trim()
        .to_owned()
}

fn tag(seed: usize) -> String {
    let mut t = format!("t{seed}-");
    t.push_str(&"é-x-0a1b".repeat(20));
    t.chars().take(quire_core::MAX_NAME_CHARS).collect()
}

struct Big {
    ws: Workspace,
    deep: String,
    big: String,
    small: String,
    attachment: String,
    attribute: String,
    namesake: String,
    escaped: String,
    tasks: String,
}

fn build() -> Big {
    let ws = Workspace::open_in_memory().unwrap();
    let tags: Vec<String> = (0..80).map(tag).collect();
    // First the notes search by meaning returns, indexed; the big note and its attachment text come after, so
    // that the test does not spend its time embedding megabytes.
    let (deep, mut smalls) = ws
        .write(&Actor::User, |w| {
            let mut parent = None;
            for depth in 0..8 {
                let nb = w.create_notebook(NewNotebook {
                    title: title(10_000 + depth),
                    parent_id: parent.clone(),
                    icon: Some("📁".into()),
                })?;
                parent = Some(nb.id);
            }
            let deep = parent.clone().unwrap();
            for i in 0..150 {
                w.create_notebook(NewNotebook {
                    title: title(20_000 + i),
                    parent_id: Some(deep.clone()),
                    ..Default::default()
                })?;
            }
            // Notes that link to the big one, each with a long title, every tag and a body that names it.
            let mut smalls = Vec::new();
            for i in 0..120 {
                let body = format!(
                    "common {} [[{}]] {}",
                    hard_text(2_000, i),
                    title(1),
                    hard_text(2_000, i + 1)
                );
                let note = testing::note(title(100 + i), &body)
                    .notebook(&deep)
                    .tags(tags.clone())
                    .create(w)?;
                smalls.push(note);
            }
            for name in ["Namesake", "Namesake"] {
                testing::note(name, "common").notebook(&deep).create(w)?;
            }
            Ok::<_, quire_core::Error>((deep, smalls))
        })
        .unwrap();
    ws.index_pending(usize::MAX).unwrap();
    let (big, attachment, attribute, namesake, escaped, tasks) = ws
        .write(&Actor::User, |w| {
            // The note everything points at: a body of megabytes, headings, unresolved links, attachments.
            let mut body = String::new();
            for i in 0..3_000 {
                // Half the headings at level 1, so that even the top level alone is too long for the outline.
                let hashes = if i % 2 == 0 { "#" } else { "##" };
                body.push_str(&format!(
                    "\n{hashes} {}\n\n",
                    title(i).chars().take(200).collect::<String>()
                ));
                body.push_str(&format!("[[missing {} {i}]] [[Namesake]] ", hard_text(300, i)));
                body.push_str(&hard_text(400, i));
            }
            let big = testing::note(title(1), &body)
                .notebook(&deep)
                .tags(tags.clone())
                .create(w)?;
            let mut attachment = String::new();
            for i in 0..200 {
                let a = w.add_attachment(
                    &big,
                    NewAttachment {
                        title: format!("{}.pdf", title(30_000 + i).chars().take(250).collect::<String>()),
                        mime: "application/pdf".into(),
                        data: vec![b'%'; 16],
                        text: (i == 0).then(|| hard_text(1_000_000, 7)),
                    },
                )?;
                if i == 0 {
                    attachment = a.id;
                }
            }
            for small in &smalls {
                w.set_attribute(small, AttributeKind::Relation, "see", &big)?;
            }
            let mut attribute = String::new();
            for i in 0..300 {
                attribute = w
                    .set_attribute(&big, AttributeKind::Label, &format!("key{i}"), &hard_text(5_000, i))?
                    .id;
            }
            let namesake = testing::note("Renamed soon", "common").create(w)?;
            // Characters JSON escapes: each costs more than itself once sent.
            let escaped = testing::note("Escapes", "\"\\\u{1}\t".repeat(100_000)).create(w)?;
            // Hundreds of long tasks with due dates and inline fields, for the query and task tools.
            let mut tasks = String::new();
            for i in 0..400 {
                tasks.push_str(&format!(
                    "- [ ] {} 📅 2026-12-{:02} [owner:: {}]\n",
                    hard_text(2_000, i).replace('\n', " "),
                    i % 28 + 1,
                    title(i)
                ));
            }
            let tasks = testing::note(title(2), &tasks)
                .notebook(&deep)
                .tags(tags.clone())
                .create(w)?;
            Ok::<_, quire_core::Error>((big, attachment, attribute, namesake, escaped, tasks))
        })
        .unwrap();
    Big {
        ws,
        deep,
        big,
        small: smalls.pop().unwrap(),
        attachment,
        attribute,
        namesake,
        escaped,
        tasks,
    }
}

#[test]
fn no_answer_exceeds_about_4000_tokens() {
    let fx = build();
    let tools = ToolRegistry::builtin();
    let bpe = tiktoken_rs::o200k_base().unwrap();
    let many_tags: Vec<String> = (100..200).map(tag).collect();
    let calls: Vec<(&str, Value)> = vec![
        ("search_notes", json!({"query": "common", "limit": 100})),
        (
            "semantic_search_notes",
            json!({"query": "quarterly planning review", "limit": 100}),
        ),
        (
            "semantic_search_notes",
            json!({"like_note_id": fx.small, "limit": 100, "relevance": "loose"}),
        ),
        ("list_notes", json!({"notebook_id": fx.deep, "limit": 100})),
        ("list_notes", json!({"tag": tag(3), "limit": 100})),
        ("list_notebooks", json!({})),
        ("list_tags", json!({"limit": 100})),
        ("get_backlinks", json!({"note_id": fx.big, "limit": 100})),
        ("get_attributes", json!({"note_id": fx.big})),
        ("read_note", json!({"note_id": fx.big, "max_chars": 100_000})),
        (
            "read_note",
            json!({"note_id": fx.big, "offset": 500_000, "max_chars": 100_000}),
        ),
        ("read_note", json!({"note_id": fx.escaped})),
        (
            "semantic_search_notes",
            json!({"query": "quarterly planning review", "limit": 100, "offset": 40}),
        ),
        (
            "read_attachment",
            json!({"attachment_id": fx.attachment, "max_chars": 100_000}),
        ),
        ("recent_changes", json!({"limit": 100})),
        (
            "query_notes",
            json!({"query": "TABLE file.outlinks, file.inlinks, file.tags, file.frontmatter, key1 FROM \"\" SORT file.size DESC", "limit": 100}),
        ),
        ("query_notes", json!({"query": "TASK WHERE !completed", "limit": 100})),
        (
            "query_notes",
            json!({"query": "LIST rows.owner GROUP BY file.folder", "limit": 100}),
        ),
        (
            "list_tasks",
            json!({"state": "all", "due_before": "2030-01-01", "limit": 100}),
        ),
        ("complete_task", json!({"note_id": fx.tasks, "line": 3})),
        (
            "create_note",
            json!({"title": title(7), "body": hard_text(100_000, 3), "notebook_id": fx.deep, "tags": many_tags}),
        ),
        (
            "update_note",
            json!({"note_id": fx.small, "append": hard_text(10_000, 2)}),
        ),
        ("manage_tags", json!({"note_id": fx.small, "add": many_tags})),
        (
            "set_attribute",
            json!({"note_id": fx.small, "type": "label", "name": "long", "value": hard_text(100_000, 4)}),
        ),
        (
            "delete_attribute",
            json!({"note_id": fx.big, "attribute_id": fx.attribute}),
        ),
        ("create_notebook", json!({"title": title(8), "parent_id": fx.deep})),
        ("rename_notebook", json!({"notebook_id": fx.deep, "title": title(9)})),
        ("move_notebook", json!({"notebook_id": fx.deep, "parent_id": "_root"})),
        ("move_note", json!({"note_id": fx.small, "notebook_id": "_root"})),
        ("delete_note", json!({"note_id": fx.small})),
        ("restore_note", json!({"note_id": fx.small})),
        // A rename that rewrites the links of 120 notes.
        (
            "update_note",
            json!({"note_id": fx.big, "title": title(11), "update_links": true}),
        ),
        ("update_note", json!({"note_id": fx.namesake, "title": "Namesake"})),
    ];
    let mut called = std::collections::BTreeSet::new();
    let mut report = Vec::new();
    for (name, args) in calls {
        let out = tools.call(&fx.ws, &ToolActor::mcp("budget"), name, args).unwrap();
        assert!(!out.is_error, "{name} failed: {}", out.value);
        let text = serde_json::to_string(&out.value).unwrap();
        let tokens = bpe.encode_ordinary(&text).len();
        report.push(format!("{name}: {tokens} tokens, {} characters", text.chars().count()));
        assert!(
            tokens <= MOST_TOKENS,
            "{name}: {tokens} tokens: {}",
            &text[..2_000.min(text.len())]
        );
        called.insert(name);
    }
    eprintln!("{}", report.join("\n"));
    let every: std::collections::BTreeSet<String> = tools.list().into_iter().map(|t| t.name).collect();
    let missing: Vec<&String> = every.iter().filter(|n| !called.contains(n.as_str())).collect();
    assert!(
        missing.is_empty(),
        "tools not fed their largest inputs here: {missing:?}"
    );
    pages_cut_for_size_continue_where_they_stopped(&fx, &tools);
}

/// (Part of the test above, which builds the large workspace once.)
fn pages_cut_for_size_continue_where_they_stopped(fx: &Big, tools: &ToolRegistry) {
    let call = |name: &str, args: Value| tools.call(&fx.ws, &ToolActor::mcp("budget"), name, args).unwrap().value;
    // The notebook's 122 notes come in pages that the size cut ends early; offset plus the notes returned goes on,
    // and every note is listed once.
    let mut seen = std::collections::BTreeSet::new();
    let mut offset = 0;
    let mut total;
    loop {
        let page = call(
            "list_notes",
            json!({"notebook_id": fx.deep, "limit": 100, "offset": offset}),
        );
        total = page["total"].as_u64().unwrap();
        let notes = page["notes"].as_array().unwrap();
        assert!(!notes.is_empty());
        assert!(notes.len() < 100, "a page of long titles is cut for size");
        for n in notes {
            assert!(seen.insert(n["note_id"].as_str().unwrap().to_owned()));
            assert!(n["title"].as_str().unwrap().chars().count() <= 300);
            if n["title"] != json!("Namesake") {
                assert!(n["more_tags"].as_u64().unwrap() > 0, "80 long tags do not all fit");
            }
        }
        offset += notes.len();
        if page["has_more"] == json!(false) {
            break;
        }
    }
    assert!(total > 120);
    assert_eq!(seen.len() as u64, total);
    // The big note's outline keeps its shallow levels, and its attachments are counted beyond those listed; its
    // title is whole (a model writes links and renames from it); shortened label values say so.
    let out = call("read_note", json!({"note_id": fx.big}));
    assert_eq!(out["outline_is_partial"], json!(true));
    let outline = out["outline"].as_array().unwrap();
    assert!(!outline.is_empty() && outline.iter().all(|h| h["level"] == json!(1)));
    assert!(out["more_attachments"].as_u64().unwrap() > 0);
    assert_eq!(
        out["title"].as_str().unwrap().chars().count(),
        quire_core::MAX_TITLE_CHARS
    );
    let out = call("get_attributes", json!({"note_id": fx.big}));
    assert_eq!(out["attributes"][0]["value_is_shortened"], json!(true));
    // Search by meaning pages like the others: the second page starts where the first ended, without repeats.
    let first = call(
        "semantic_search_notes",
        json!({"query": "quarterly planning review", "limit": 100}),
    );
    let got = first["results"].as_array().unwrap().len();
    assert_eq!(first["has_more"], json!(true));
    let second = call(
        "semantic_search_notes",
        json!({"query": "quarterly planning review", "limit": 100, "offset": got}),
    );
    assert_eq!(second["offset"], json!(got));
    let ids = |page: &Value| -> Vec<String> {
        page["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["note_id"].as_str().unwrap().to_owned())
            .collect()
    };
    assert!(ids(&second).iter().all(|id| !ids(&first).contains(id)));
    // The user's own reads (the web app, the command line) are not held to the budget.
    let out = tools
        .read_as_user(&fx.ws, "read_note", json!({"note_id": fx.big, "max_chars": 100_000}))
        .unwrap()
        .value;
    assert_eq!(out["body"].as_str().unwrap().chars().count(), 100_000);
    assert_eq!(
        out["title"].as_str().unwrap().chars().count(),
        quire_core::MAX_TITLE_CHARS
    );
    assert_eq!(out["tags"].as_array().unwrap().len(), 80);
    assert_eq!(out["attachments"].as_array().unwrap().len(), 200);
    assert!(out.get("outline_is_partial").is_none() && out.get("more_tags").is_none());
    // A long body reads in slices that join up to the whole body.
    let body = hard_text(120_000, 5);
    let id = testing::note("Long", &body).create_in(&fx.ws).unwrap();
    let mut read = String::new();
    let mut offset = 0;
    let mut calls = 0;
    loop {
        let out = call("read_note", json!({"note_id": id, "offset": offset}));
        read.push_str(out["body"].as_str().unwrap());
        calls += 1;
        match out["next_offset"].as_u64() {
            Some(next) => offset = next,
            None => break,
        }
    }
    assert_eq!(read, body);
    assert!(calls > 10, "{calls} slices");
}
