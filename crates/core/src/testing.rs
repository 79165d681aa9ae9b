//! Builders for the workspaces tests make, and the sample workspace the core and tool tests share.
//!
//! Compiled only with the `testing` feature, which the workspace's crates enable under `[dev-dependencies]`, so
//! none of this reaches a release build. Everything here goes through [`Writer`]'s public methods: a builder is
//! shorthand for the calls a test would otherwise spell out, never a way around the guards.
//!
//! - [`note`] starts a [`NoteBuilder`]: where the note goes, its tags, to-do state, labels and protection, then
//!   [`NoteBuilder::create`] inside a write (or [`NoteBuilder::create_in`], a write of its own) gives its id.
//! - [`notebook`] makes the notebooks of a path such as `Work/Projects` and gives the last one's id.
//! - [`Sample`] is the small workspace most tests start from: a notebook tree, a protected notebook, plain,
//!   protected, tagged, to-do and trashed notes, labels, a relation and attachments, each by a named id.
//! - [`redact_ids`] hides generated ids from snapshots.
//!
//! ```
//! use quire_core::testing::{self, Sample};
//! use quire_core::{Actor, Error, Workspace};
//!
//! let ws = Workspace::open_in_memory()?;
//! let roadmap = ws.write(&Actor::User, |w| {
//!     let projects = testing::notebook(w, "Work/Projects")?;
//!     testing::note("Roadmap", "# Roadmap\n\nShip in March.\n")
//!         .notebook(&projects)
//!         .tags(["planning"])
//!         .label("status", "draft")
//!         .create(w)
//! })?;
//! let note = ws.read(&Actor::User, |r| r.note(&roadmap))?;
//! assert_eq!(note.summary.tags, ["planning"]);
//!
//! let sample = Sample::new();
//! let client = Actor::Mcp { client: "inspector".into() };
//! let refused = sample.ws.write(&client, |w| w.trash_note(&sample.secret));
//! assert_eq!(refused.unwrap_err().to_string(), "Note is protected and cannot be modified");
//! # Ok::<(), Error>(())
//! ```

use crate::entity::{Actor, AttributeKind, ROOT_NOTEBOOK_ID, Timestamp};
use crate::error::{Error, Result};
use crate::read::Page;
use crate::workspace::Workspace;
use crate::write::{NewAttachment, NewNote, NewNotebook, Writer};

/// Starts a note with a title and a Markdown body, in the root notebook until [`NoteBuilder::notebook`] says
/// otherwise.
pub fn note(title: impl Into<String>, body: impl Into<String>) -> NoteBuilder {
    NoteBuilder {
        new: NewNote::new(title, body),
        labels: Vec::new(),
        protected: false,
    }
}

/// The notebooks of `path` (`Work/Projects`) below the top level, found or created as
/// [`Writer::create_notebook_path`] does; the id of the last one.
pub fn notebook(w: &mut Writer<'_>, path: &str) -> Result<String> {
    Ok(w.create_notebook_path(None, path)?.notebook.id)
}

/// A note still to be created; see [`note`].
#[derive(Debug, Clone)]
#[must_use = "a note builder does nothing until `create` is called"]
pub struct NoteBuilder {
    new: NewNote,
    labels: Vec<(String, String, bool)>,
    protected: bool,
}

impl NoteBuilder {
    /// Puts the note in this notebook.
    pub fn notebook(mut self, id: &str) -> NoteBuilder {
        self.new.notebook_id = Some(id.to_owned());
        self
    }

    /// Adds tags, created when missing.
    pub fn tags<I, S>(mut self, tags: I) -> NoteBuilder
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.new.tags.extend(tags.into_iter().map(Into::into));
        self
    }

    /// Makes the note a to-do.
    pub fn todo(mut self) -> NoteBuilder {
        self.new.is_todo = true;
        self
    }

    /// Protects the note once it is made (the user's right; another actor's write refuses it).
    pub fn protected(mut self) -> NoteBuilder {
        self.protected = true;
        self
    }

    /// Sets a label on the note.
    pub fn label(mut self, name: &str, value: &str) -> NoteBuilder {
        self.labels.push((name.to_owned(), value.to_owned(), false));
        self
    }

    /// Sets a label with a JSON value (a list, a number: what front matter gives).
    pub fn json_label(mut self, name: &str, json: &str) -> NoteBuilder {
        self.labels.push((name.to_owned(), json.to_owned(), true));
        self
    }

    /// Records these creation and update times instead of now, as an import does.
    pub fn dated(mut self, created: Timestamp, updated: Timestamp) -> NoteBuilder {
        self.new.created = Some(created);
        self.new.updated = Some(updated);
        self
    }

    /// Creates the note inside a write, then its labels, then its protection; its id.
    pub fn create(self, w: &mut Writer<'_>) -> Result<String> {
        let id = w.create_note(self.new)?.summary.id;
        for (name, value, json) in &self.labels {
            if *json {
                w.set_json_label(&id, name, value)?;
            } else {
                w.set_attribute(&id, AttributeKind::Label, name, value)?;
            }
        }
        if self.protected {
            w.set_note_protected(&id, true)?;
        }
        Ok(id)
    }

    /// Creates the note as the user, in a write of its own; its id.
    pub fn create_in(self, ws: &Workspace) -> Result<String> {
        ws.write(&Actor::User, |w| self.create(w))
    }
}

/// The sample workspace, in memory, and the id of everything in it.
///
/// Work holds Projects (the one notebook with an icon, 📁); Vault is protected. Roadmap (in Projects, tagged
/// `planning`, labelled `status: draft`, with the attachment `plan.pdf` whose text the search indexes) is the plain
/// note; Buy ink (a to-do in Work) relates to it under `for`. Diary is a protected note in the top notebook, with a
/// label and an attachment of its own; Vault inventory (in the protected notebook) and Diary both mention rubies;
/// Old idea is in the trash.
#[derive(Clone)]
pub struct Sample {
    /// The workspace.
    pub ws: Workspace,
    /// The notebook Work.
    pub work: String,
    /// The notebook Work/Projects.
    pub projects: String,
    /// The protected notebook Vault.
    pub vault: String,
    /// Roadmap, the plain note in Projects.
    pub plain: String,
    /// Diary, the protected note.
    pub secret: String,
    /// Vault inventory, a note in the protected notebook.
    pub in_vault: String,
    /// Buy ink, the to-do in Work.
    pub todo: String,
    /// Roadmap's attachment `plan.pdf`.
    pub attachment: String,
    /// Roadmap's label `status`.
    pub label: String,
    /// Old idea, in the trash.
    pub trashed: String,
    /// Diary's attachment `letter.txt`.
    pub secret_attachment: String,
    /// Diary's label `mood`.
    pub secret_label: String,
}

impl Sample {
    /// Builds the sample in a fresh in-memory workspace.
    #[expect(
        clippy::expect_used,
        reason = "a fixture that cannot be built should stop the test right there"
    )]
    pub fn new() -> Sample {
        let ws = Workspace::open_in_memory().expect("open an in-memory workspace");
        Sample::build(ws).expect("build the sample workspace")
    }

    /// Builds the sample into `ws`, as the user, in one write.
    pub fn build(ws: Workspace) -> Result<Sample> {
        ws.write(&Actor::User, |w| {
            let work = notebook(w, "Work")?;
            // The one notebook with an icon, so that reads show one.
            let projects = w
                .create_notebook(NewNotebook {
                    title: "Projects".into(),
                    parent_id: Some(work.clone()),
                    icon: Some("📁".into()),
                })?
                .id;
            let vault = notebook(w, "Vault")?;
            let in_vault = note("Vault inventory", "gold bars and rubies")
                .notebook(&vault)
                .create(w)?;
            w.set_notebook_protected(&vault, true)?;
            let plain = note(
                "Roadmap",
                "# Roadmap\n\nShip search in March.\n\n## Risks\n\nScope creep.\n",
            )
            .notebook(&projects)
            .tags(["planning"])
            .create(w)?;
            let plan = file("plan.pdf", "application/pdf", &[1, 2, 3], "Milestones: beta in May.");
            let attachment = w.add_attachment(&plain, plan)?.id;
            let label = w.set_attribute(&plain, AttributeKind::Label, "status", "draft")?.id;
            let secret = note("Diary", "my secret thoughts about rubies").create(w)?;
            let letter = file("letter.txt", "text/plain", b"dear", "dear diary");
            let secret_attachment = w.add_attachment(&secret, letter)?.id;
            w.set_note_protected(&secret, true)?;
            let secret_label = w.set_attribute(&secret, AttributeKind::Label, "mood", "calm")?.id;
            let todo = note("Buy ink", "black").notebook(&work).todo().create(w)?;
            w.set_attribute(&todo, AttributeKind::Relation, "for", &plain)?;
            let trashed = note("Old idea", "obsolete").create(w)?;
            w.trash_note(&trashed)?;
            Ok::<_, Error>(Sample {
                ws: ws.clone(),
                work,
                projects,
                vault,
                plain,
                secret,
                in_vault,
                todo,
                attachment,
                label,
                trashed,
                secret_attachment,
                secret_label,
            })
        })
    }

    /// Everything about the protected note, the protected notebook with its note, and the top notebook, read as the
    /// user: properties compare it before and after operations that must leave those alone.
    pub fn protected_state(&self) -> Result<String> {
        self.ws.read(&Actor::User, |r| {
            let mut out = String::new();
            for id in [&self.secret, &self.in_vault] {
                let (note, attributes, attachments) = (r.note(id)?, r.attributes(id)?, r.attachments(id)?);
                out.push_str(&format!("{note:?}\n{attributes:?}\n{attachments:?}\n"));
            }
            for id in [ROOT_NOTEBOOK_ID, self.vault.as_str()] {
                out.push_str(&format!("{:?}\n", r.notebook(id)?));
            }
            let in_vault = r.notes_in_notebook(&self.vault, Page::first(100))?;
            out.push_str(&format!("{in_vault:?}\n"));
            Ok(out)
        })
    }
}

impl Default for Sample {
    fn default() -> Sample {
        Sample::new()
    }
}

/// `text` with every id the workspace generates (32 lower-case hex digits) replaced by `[id]`, so that a snapshot
/// stays the same from run to run.
pub fn redact_ids(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let run = chars[i..]
            .iter()
            .take_while(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
            .count();
        if run == 32 {
            out.push_str("[id]");
        } else {
            out.extend(&chars[i..i + run.max(1)]);
        }
        i += run.max(1);
    }
    out
}

/// An attachment with the text search finds in it.
fn file(title: &str, mime: &str, data: &[u8], text: &str) -> NewAttachment {
    NewAttachment {
        title: title.into(),
        mime: mime.into(),
        data: data.to_vec(),
        text: Some(text.into()),
    }
}
