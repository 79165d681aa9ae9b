//! Export then import into a fresh workspace gives the same notebooks, notes, bodies, tags, to-do state, times,
//! attributes, attachments and links, over generated workspaces (titles that clash by case or hold characters no
//! file system takes, links between notes and to attachments, relations, protected notes), as Markdown and as an
//! Obsidian vault.
#![expect(clippy::unwrap_used, reason = "test helpers stop the test where it failed")]

use std::collections::HashMap;

use proptest::prelude::*;
use quire_core::{Actor, AttributeKind, NewAttachment, NoteUpdate, Page, Timestamp, Workspace, testing};
use quire_import::{ExportFormat, ExportOptions, ImportOptions, export, import};

const TITLES: &[&str] = &[
    "Plan",
    "plan",
    "a/b: c?",
    "CON",
    "Ünïcode ✓",
    "Notes.md",
    "x",
    "  spaced  out  ",
    "#hash",
];
const WORDS: &[&str] = &[
    "alpha",
    "beta",
    "gamma",
    "delta",
    "---",
    "# Heading",
    "- item",
    "`code`",
    "[brackets]",
];

/// Label names, one of them a key quire's front matter reads itself.
const LABELS: &[&str] = &["status", "rating", "aliases", "title"];

#[derive(Debug, Clone)]
struct NoteSpec {
    title: usize,
    notebook: usize,
    words: Vec<usize>,
    /// Links to other notes (by index), as quire://note links.
    links: Vec<usize>,
    /// Wikilinks to other notes' titles.
    wikilinks: Vec<usize>,
    tags: Vec<usize>,
    todo: u8,
    label: Option<usize>,
    /// A relation to another note (by index).
    relation: Option<usize>,
    attachment: Option<Vec<u8>>,
    protected: bool,
}

fn note_spec() -> impl Strategy<Value = NoteSpec> {
    (
        0..TITLES.len(),
        0..4usize,
        prop::collection::vec(0..WORDS.len(), 0..6),
        prop::collection::vec(0..8usize, 0..3),
        prop::collection::vec(0..8usize, 0..2),
        prop::collection::vec(0..3usize, 0..3),
        0..3u8,
        prop::option::of(0..LABELS.len()),
        prop::option::of(0..8usize),
        prop::option::of(prop::collection::vec(any::<u8>(), 0..40)),
        prop::bool::weighted(0.2),
    )
        .prop_map(
            |(title, notebook, words, links, wikilinks, tags, todo, label, relation, attachment, protected)| NoteSpec {
                title,
                notebook,
                words,
                links,
                wikilinks,
                tags,
                todo,
                label,
                relation,
                attachment,
                protected,
            },
        )
}

/// Builds the workspace: notebooks Work, Work/Sub, Home (and the top), then the notes.
fn build(specs: &[NoteSpec]) -> Workspace {
    let ws = Workspace::open_in_memory().unwrap();
    ws.write(&Actor::User, |w| {
        let work = testing::notebook(w, "Work")?;
        let sub = testing::notebook(w, "Work/Sub: notes?")?;
        let home = testing::notebook(w, "home")?;
        let notebooks = [None, Some(work), Some(sub), Some(home)];
        let mut ids = Vec::new();
        let mut attachments = Vec::new();
        for (i, spec) in specs.iter().enumerate() {
            let mut note = testing::note(TITLES[spec.title], "")
                .tags(spec.tags.iter().map(|t| ["red", "blue/dark", "Green"][*t]))
                .dated(
                    Timestamp(1_700_000_000_000 + i as i64 * 1000),
                    Timestamp(1_700_000_500_000 + i as i64 * 1000),
                );
            if let Some(notebook) = &notebooks[spec.notebook] {
                note = note.notebook(notebook);
            }
            if spec.todo > 0 {
                note = note.todo();
            }
            if let Some(label) = spec.label {
                note = note.label(LABELS[label], "x, y");
            }
            let note = note.create(w)?;
            let attachment = match &spec.attachment {
                Some(data) => Some(
                    w.add_attachment(
                        &note,
                        NewAttachment {
                            title: "pic.png".into(),
                            mime: "image/png".into(),
                            data: data.clone(),
                            text: None,
                        },
                    )?
                    .id,
                ),
                None => None,
            };
            ids.push(note);
            attachments.push(attachment);
        }
        for (i, spec) in specs.iter().enumerate() {
            let mut body: Vec<String> = spec.words.iter().map(|w| WORDS[*w].to_owned()).collect();
            for target in spec.links.iter().filter(|t| **t < ids.len()) {
                body.push(format!("see [link {target}](quire://note/{})", ids[*target]));
            }
            for target in spec.wikilinks.iter().filter(|t| **t < ids.len()) {
                body.push(format!("[[{}]]", TITLES[specs[*target].title].trim()));
            }
            if let Some(id) = &attachments[i] {
                body.push(format!("![picture](quire://attachment/{id})"));
            }
            let completed = (spec.todo == 2).then_some(Some(Timestamp(1_700_000_900_000)));
            w.update_note(
                &ids[i],
                NoteUpdate {
                    body: Some(body.join("\n")),
                    todo_completed: completed,
                    ..Default::default()
                },
            )?;
            if let Some(target) = spec.relation.filter(|t| *t < ids.len()) {
                w.set_attribute(&ids[i], AttributeKind::Relation, "depends_on", &ids[target])?;
            }
            if spec.protected {
                w.set_note_protected(&ids[i], true)?;
            }
        }
        Ok::<_, quire_core::Error>(())
    })
    .unwrap();
    ws
}

/// Everything a note is, with ids replaced by what they point at, so two workspaces compare. `loose`: a link is
/// described by what it points at only, not how it is written (an Obsidian export writes `quire://` links as
/// wikilinks).
fn describe(ws: &Workspace, loose: bool) -> Vec<String> {
    ws.read(&Actor::User, |r| {
        let notes = r.all_notes(Page { offset: 0, limit: 100 })?.items;
        let place = |id: &str| -> String {
            r.note_summary(id)
                .map(|n| {
                    format!(
                        "{}/{}",
                        r.notebook_path(&n.notebook_id)
                            .map(|p| p
                                .iter()
                                .skip(1)
                                .map(|nb| nb.title.clone())
                                .collect::<Vec<_>>()
                                .join("/"))
                            .unwrap_or_default(),
                        n.title
                    )
                })
                .unwrap_or_else(|_| "?".into())
        };
        let mut attachment_of: HashMap<String, String> = HashMap::new();
        for n in &notes {
            for a in r.attachments(&n.id)? {
                let data = r.attachment_data(&a.id)?;
                attachment_of.insert(a.id.clone(), format!("{}:{}:{:?}", a.title, a.mime, data));
            }
        }
        let mut out = Vec::new();
        for n in &notes {
            let note = r.note(&n.id)?;
            let mut body = note.body.clone();
            let mut links = r.outgoing_links(&n.id)?;
            if loose {
                links.sort_by_key(|l| std::cmp::Reverse(l.byte));
                for link in &links {
                    body.replace_range(link.byte..link.byte + link.len, "LINK");
                }
                links.reverse();
            }
            for link in links {
                let shown = match (&link.note_id, &link.attachment_id) {
                    (Some(target), _) => place(target),
                    (_, Some(a)) => attachment_of.get(a).cloned().unwrap_or_default(),
                    _ => "unresolved".into(),
                };
                if loose {
                    body.push_str(&format!("\n-> {shown}"));
                } else {
                    body.push_str(&format!("\n-> {:?} {shown}", link.kind));
                }
            }
            for id in attachment_of.keys() {
                body = body.replace(id.as_str(), "ATTACHMENT");
            }
            for other in &notes {
                body = body.replace(other.id.as_str(), "NOTE");
            }
            let mut labels: Vec<String> = r
                .attributes(&n.id)?
                .into_iter()
                .map(|a| match a.kind {
                    AttributeKind::Relation => format!("{} -> {}", a.name, place(&a.value)),
                    // Aliases are names, whether written as text with commas or as a list (an import writes the
                    // list a vault has).
                    AttributeKind::Label if a.name == "aliases" => {
                        let names: Vec<String> = serde_json::from_str::<Vec<String>>(&a.value)
                            .unwrap_or_else(|_| a.value.split(',').map(|n| n.trim().to_owned()).collect());
                        format!("aliases={}", names.join("|"))
                    }
                    AttributeKind::Label => format!("{}={}", a.name, a.value),
                })
                .collect();
            labels.sort();
            let mut files: Vec<String> = r
                .attachments(&n.id)?
                .iter()
                .map(|a| attachment_of[&a.id].clone())
                .collect();
            files.sort();
            out.push(format!(
                "{} | tags {:?} | todo {} {:?} | protected {} | times {} {} | labels {:?} | files {:?}\n{}",
                place(&n.id),
                n.tags,
                n.is_todo,
                n.todo_completed,
                n.is_protected,
                n.created,
                n.updated,
                labels,
                files,
                body
            ));
        }
        for nb in r.notebooks()? {
            let path = r.notebook_path(&nb.id)?;
            let titles: Vec<String> = path.iter().skip(1).map(|p| p.title.clone()).collect();
            out.push(format!(
                "notebook {} protected {} icon {:?}",
                titles.join("/"),
                nb.is_protected,
                nb.icon
            ));
        }
        out.sort();
        Ok::<_, quire_core::Error>(out)
    })
    .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn export_then_import_gives_the_same_workspace(specs in prop::collection::vec(note_spec(), 1..8), obsidian: bool) {
        let original = build(&specs);
        let dir = tempfile::tempdir().unwrap();
        let format = if obsidian { ExportFormat::Obsidian } else { ExportFormat::Markdown };
        let report = export(
            &original,
            dir.path(),
            &ExportOptions { format, notebook: None, include_protected: true },
        )
        .unwrap();
        prop_assert_eq!(report.notes as usize, specs.len());
        let copy = Workspace::open_in_memory().unwrap();
        let imported = import(&copy, dir.path(), &ImportOptions::default(), &|_, _| {}).unwrap();
        prop_assert_eq!(imported.failed, 0, "{:#?}", imported);
        let before = describe(&original, obsidian);
        let after = describe(&copy, obsidian);
        prop_assert_eq!(before, after);
        // Exporting the copy gives the same files: names are stable.
        let again = tempfile::tempdir().unwrap();
        export(&copy, again.path(), &ExportOptions { format, include_protected: true, ..Default::default() }).unwrap();
        prop_assert_eq!(listing(dir.path()), listing(again.path()));
    }
}

fn listing(dir: &std::path::Path) -> Vec<String> {
    let mut out: Vec<String> = walk(dir)
        .into_iter()
        .map(|p| p.strip_prefix(dir).unwrap().display().to_string())
        .collect();
    out.sort();
    out
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}
