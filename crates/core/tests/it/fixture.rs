//! A small fixture workspace shared by the tests: a notebook tree, plain, protected and tagged notes.

use quire_core::{Actor, AttributeKind, Error, NewNote, NewNotebook, Workspace};

pub(crate) struct Fixture {
    pub(crate) ws: Workspace,
    pub(crate) work: String,
    pub(crate) projects: String,
    pub(crate) vault: String,
    pub(crate) plain: String,
    pub(crate) secret: String,
    pub(crate) in_vault: String,
    pub(crate) todo: String,
    /// The protected note's label.
    pub(crate) secret_label: String,
}

pub(crate) fn agent() -> Actor {
    Actor::Agent {
        chat: "c1".into(),
        turn: 1,
    }
}

pub(crate) fn mcp() -> Actor {
    Actor::Mcp {
        client: "test-client".into(),
    }
}

impl Fixture {
    pub(crate) fn new() -> Fixture {
        let ws = Workspace::open_in_memory().expect("open in memory");
        ws.write(&Actor::User, |w| {
            let work = w
                .create_notebook(NewNotebook {
                    title: "Work".into(),
                    ..Default::default()
                })?
                .id;
            let projects = w
                .create_notebook(NewNotebook {
                    title: "Projects".into(),
                    parent_id: Some(work.clone()),
                    icon: None,
                })?
                .id;
            let vault = w
                .create_notebook(NewNotebook {
                    title: "Vault".into(),
                    ..Default::default()
                })?
                .id;
            let in_vault = w
                .create_note(NewNote {
                    notebook_id: Some(vault.clone()),
                    ..NewNote::new("Vault inventory", "gold bars and rubies")
                })?
                .summary
                .id;
            w.set_notebook_protected(&vault, true)?;
            let plain = w
                .create_note(NewNote {
                    notebook_id: Some(projects.clone()),
                    tags: vec!["planning".into()],
                    ..NewNote::new("Roadmap", "# Roadmap\n\nShip the search engine in March.\n")
                })?
                .summary
                .id;
            let secret = w
                .create_note(NewNote::new("Diary", "my secret thoughts about rubies"))?
                .summary
                .id;
            w.set_note_protected(&secret, true)?;
            let secret_label = w.set_attribute(&secret, AttributeKind::Label, "mood", "calm")?.id;
            let todo = w
                .create_note(NewNote {
                    notebook_id: Some(work.clone()),
                    is_todo: true,
                    ..NewNote::new("Buy printer ink", "black and cyan")
                })?
                .summary
                .id;
            Ok::<_, Error>(Fixture {
                ws: ws.clone(),
                work,
                projects,
                vault,
                plain,
                secret,
                in_vault,
                todo,
                secret_label,
            })
        })
        .expect("fixture")
    }

    /// A stable text dump of every row that matters, to compare before and after.
    pub(crate) fn dump(&self) -> String {
        dump(&self.ws)
    }
}

pub(crate) fn dump(ws: &Workspace) -> String {
    ws.read(&Actor::User, |r| {
        let mut out = String::new();
        for nb in r.notebooks()? {
            out.push_str(&format!("{nb:?}\n"));
            let page = r.notes_in_notebook(&nb.id, quire_core::Page::first(200))?;
            for n in page.items {
                let note = r.note(&n.id)?;
                out.push_str(&format!(
                    "  {note:?}\n  {:?}\n  {:?}\n",
                    r.attributes(&n.id)?,
                    r.attachments(&n.id)?
                ));
            }
        }
        for n in r.trashed_notes(quire_core::Page::first(200))?.items {
            out.push_str(&format!("trash {:?}\n", r.note(&n.id)?));
        }
        out.push_str(&format!("{:?}\n", r.tags()?));
        Ok::<_, Error>(out)
    })
    .expect("dump")
}
