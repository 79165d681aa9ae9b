//! Protection means the title only: generated workspaces with protected notes and notebooks, read through every
//! read-only tool and every MCP read path (resources, prompts, completions) by an MCP client, never show a protected
//! note's body, labels, relations or the tags only protected notes carry.
#![expect(clippy::unwrap_used, reason = "tests stop where they fail")]

use std::collections::BTreeSet;
use std::sync::Arc;

use proptest::prelude::*;
use quire_core::{Actor, AttributeKind, NewNotebook, Workspace, testing};
use quire_mcp::{QuireServer, ServerOptions};
use quire_test_support::mcp::{Client, Era, connect_in_process};
use quire_tools::ToolRegistry;
use rmcp::model::{CallToolRequestParams, ClientConfig, GetPromptRequestParams, ReadResourceRequestParams};
use serde_json::{Map, Value, json};

/// One generated note: where it lives and what it carries.
#[derive(Debug, Clone)]
struct NoteSpec {
    /// Index into the notebooks, or the top level.
    notebook: Option<prop::sample::Index>,
    protected: bool,
    shared_tag: bool,
    relation_to: Option<prop::sample::Index>,
    link_to: Option<prop::sample::Index>,
}

#[derive(Debug, Clone)]
struct Spec {
    /// Each notebook's parent (an earlier notebook, or the top level) and its own protection.
    notebooks: Vec<(Option<prop::sample::Index>, bool)>,
    notes: Vec<NoteSpec>,
}

fn spec() -> impl Strategy<Value = Spec> {
    let notebooks = prop::collection::vec((prop::option::of(any::<prop::sample::Index>()), any::<bool>()), 0..4);
    let note = (
        prop::option::of(any::<prop::sample::Index>()),
        any::<bool>(),
        any::<bool>(),
        prop::option::of(any::<prop::sample::Index>()),
        prop::option::of(any::<prop::sample::Index>()),
    )
        .prop_map(|(notebook, protected, shared_tag, relation_to, link_to)| NoteSpec {
            notebook,
            protected,
            shared_tag,
            relation_to,
            link_to,
        });
    (notebooks, prop::collection::vec(note, 1..7)).prop_map(|(notebooks, notes)| Spec { notebooks, notes })
}

/// The workspace a spec describes, with what an MCP client must never see.
struct Built {
    ws: Workspace,
    notes: Vec<String>,
    notebooks: Vec<String>,
    /// Strings that may appear in no answer: protected notes' body words, label names and values, and the tags
    /// only protected notes carry.
    secrets: BTreeSet<String>,
    /// The tags only protected notes carry: a search or list filtered by one finds nothing.
    secret_tags: BTreeSet<String>,
    /// Every tag name.
    tags: BTreeSet<String>,
    /// The ids of the protected notes.
    protected_notes: BTreeSet<String>,
    /// How many live unprotected notes carry the shared tag.
    shared_visible: u64,
}

fn build(spec: &Spec) -> Built {
    let ws = Workspace::open_in_memory().unwrap();
    let mut notebooks: Vec<String> = Vec::new();
    let mut protected_books: Vec<bool> = Vec::new();
    let mut notes = Vec::new();
    ws.write(&Actor::User, |w| {
        for (i, (parent, protected)) in spec.notebooks.iter().enumerate() {
            let parent = parent.filter(|_| i > 0).map(|p| p.index(i));
            let book = w.create_notebook(NewNotebook {
                title: format!("Book{i}"),
                parent_id: parent.map(|p| notebooks[p].clone()),
                ..Default::default()
            })?;
            if *protected {
                w.set_notebook_protected(&book.id, true)?;
            }
            protected_books.push(*protected || parent.is_some_and(|p| protected_books[p]));
            notebooks.push(book.id);
        }
        for (i, note) in spec.notes.iter().enumerate() {
            let notebook = note
                .notebook
                .filter(|_| !notebooks.is_empty())
                .map(|n| n.index(notebooks.len()));
            let mut tags = vec![format!("zqtag{i}x")];
            if note.shared_tag {
                tags.push("shared".to_owned());
            }
            let link = note
                .link_to
                .map(|l| format!(" See [[Note{}]].", l.index(spec.notes.len())))
                .unwrap_or_default();
            let mut created =
                testing::note(format!("Note{i}"), format!("The words zqbody{i}x are here.{link}")).tags(tags);
            if let Some(n) = notebook {
                created = created.notebook(&notebooks[n]);
            }
            notes.push((created.create(w)?, notebook));
        }
        for (i, note) in spec.notes.iter().enumerate() {
            let id = notes[i].0.clone();
            w.set_attribute(&id, AttributeKind::Label, &format!("zqkey{i}x"), &format!("zqlval{i}x"))?;
            if let Some(target) = note.relation_to {
                let target = notes[target.index(notes.len())].0.clone();
                if target != id {
                    w.set_attribute(&id, AttributeKind::Relation, &format!("zqrel{i}x"), &target)?;
                }
            }
            if note.protected {
                w.set_note_protected(&id, true)?;
            }
        }
        Ok::<_, quire_core::Error>(())
    })
    .unwrap();
    let mut built = Built {
        ws,
        notes: notes.iter().map(|n| n.0.clone()).collect(),
        notebooks,
        secrets: BTreeSet::new(),
        secret_tags: BTreeSet::new(),
        tags: BTreeSet::new(),
        protected_notes: BTreeSet::new(),
        shared_visible: 0,
    };
    let mut shared_hidden = false;
    for (i, (note, (id, notebook))) in spec.notes.iter().zip(&notes).enumerate() {
        let protected = note.protected || notebook.is_some_and(|n| protected_books[n]);
        built.tags.insert(format!("zqtag{i}x"));
        if protected {
            built.protected_notes.insert(id.clone());
            built.secrets.extend([
                format!("zqbody{i}x"),
                format!("zqkey{i}x"),
                format!("zqlval{i}x"),
                format!("zqrel{i}x"),
                format!("zqtag{i}x"),
            ]);
            built.secret_tags.insert(format!("zqtag{i}x"));
            shared_hidden |= note.shared_tag;
        } else if note.shared_tag {
            built.shared_visible += 1;
        }
    }
    if spec.notes.iter().any(|n| n.shared_tag) {
        built.tags.insert("shared".to_owned());
        if shared_hidden && built.shared_visible == 0 {
            built.secrets.insert("shared".to_owned());
            built.secret_tags.insert("shared".to_owned());
        }
    }
    built
}

async fn connect(ws: &Workspace) -> Client {
    let server = QuireServer::new(ws.clone(), Arc::new(ToolRegistry::builtin()), ServerOptions::default());
    connect_in_process(server, ClientConfig::default(), Era::Legacy).await
}

/// One answer, checked: it names no secret once the arguments (which a server may echo) are taken out, and an answer
/// to a filter by a tag only protected notes carry names no protected note.
fn check(built: &Built, what: &str, args: &[String], answer: &str) -> Result<(), TestCaseError> {
    let mut text = answer.to_owned();
    for arg in args {
        let bare = arg.trim_start_matches("tag:").trim_start_matches('#');
        text = text.replace(arg.as_str(), "").replace(bare, "");
    }
    for secret in &built.secrets {
        prop_assert!(
            !text.contains(secret.as_str()),
            "{what} {args:?} shows {secret}: {answer}"
        );
    }
    if args
        .iter()
        .any(|a| built.secret_tags.iter().any(|t| a.ends_with(t.as_str())))
    {
        for id in &built.protected_notes {
            prop_assert!(
                !text.contains(id.as_str()),
                "{what} {args:?} finds protected note {id}: {answer}"
            );
        }
    }
    Ok(())
}

/// The argument values to try for a property of a tool's input.
fn values_for(built: &Built, property: &str) -> Vec<Value> {
    let words = || {
        built
            .secrets
            .iter()
            .chain(&built.tags)
            .flat_map(|s| [json!(s), json!(format!("tag:{s}")), json!(format!("#{s}"))])
            .chain([json!("Note"), json!("zq*")])
            .collect::<Vec<_>>()
    };
    match property {
        "note_id" | "id" => built.notes.iter().map(|n| json!(n)).collect(),
        "notebook_id" | "notebook" => built.notebooks.iter().map(|n| json!(n)).collect(),
        "tag" => built.tags.iter().map(|t| json!(t)).collect(),
        "query" => words(),
        _ => Vec::new(),
    }
}

async fn read_everything(built: &Built) -> Result<(), TestCaseError> {
    let client = connect(&built.ws).await;
    let tools = client.list_all_tools().await.unwrap();
    for tool in tools {
        let read_only = tool.annotations.as_ref().and_then(|a| a.read_only_hint) == Some(true);
        if !read_only {
            continue;
        }
        let schema = Value::Object((*tool.input_schema).clone());
        let properties: Vec<String> = schema["properties"]
            .as_object()
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default();
        let mut calls: Vec<Map<String, Value>> = vec![Map::new()];
        for property in &properties {
            for value in values_for(built, property) {
                calls.push([(property.clone(), value)].into_iter().collect());
            }
        }
        for args in calls {
            let shown: Vec<String> = args.values().filter_map(|v| v.as_str().map(str::to_owned)).collect();
            let answer = client
                .call_tool(CallToolRequestParams::new(tool.name.to_string()).with_arguments(args.clone()))
                .await;
            check(built, &tool.name, &shown, &format!("{answer:?}"))?;
        }
    }
    let resources = client.list_all_resources().await.unwrap();
    check(built, "resources/list", &[], &format!("{resources:?}"))?;
    let uris = built
        .notes
        .iter()
        .map(|n| format!("quire://note/{n}"))
        .chain(built.notebooks.iter().map(|n| format!("quire://notebook/{n}")))
        .chain(["quire://notebook/_root".to_owned()]);
    for uri in uris {
        let read = client.read_resource(ReadResourceRequestParams::new(uri.clone())).await;
        check(built, "resources/read", &[uri], &format!("{read:?}"))?;
    }
    let prompts = client.list_all_prompts().await.unwrap();
    for prompt in prompts {
        for argument in prompt.arguments.clone().unwrap_or_default() {
            for typed in ["", "N", "z", "zq", "s", "B"] {
                let completed = client.complete_prompt_simple(&prompt.name, &argument.name, typed).await;
                check(built, "completion/complete", &[], &format!("{completed:?}"))?;
            }
            let values = built.notes.iter().chain(&built.tags).chain(&built.notebooks);
            for value in values {
                let args: Map<String, Value> = [(argument.name.clone(), json!(value))].into_iter().collect();
                let got = client
                    .get_prompt(GetPromptRequestParams::new(prompt.name.clone()).with_arguments(args))
                    .await;
                check(built, &prompt.name, std::slice::from_ref(value), &format!("{got:?}"))?;
            }
        }
        let got = client
            .get_prompt(GetPromptRequestParams::new(prompt.name.clone()))
            .await;
        check(built, &prompt.name, &[], &format!("{got:?}"))?;
    }
    let ids = client.complete_resource_simple("quire://note/{id}", "id", "").await;
    check(built, "completion/complete", &[], &format!("{ids:?}"))?;

    // list_tags counts only the notes whose tags the client may see.
    let tags = client.call_tool(CallToolRequestParams::new("list_tags")).await.unwrap();
    let tags = tags.structured_content.unwrap_or_default();
    let shared = tags["tags"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|t| t["name"] == "shared")
        .map_or(0, |t| t["note_count"].as_u64().unwrap_or(0));
    prop_assert_eq!(shared, built.shared_visible, "{}", tags);
    let _ = client.cancel().await;
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn an_mcp_client_sees_a_protected_note_by_its_title_only(spec in spec()) {
        let built = build(&spec);
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(read_everything(&built))?;
    }
}
