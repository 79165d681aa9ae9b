//! The fixture workspace for tool tests, and helpers to call tools and redact ids and times.

use quire_core::{Actor, AttributeKind, Error, NewAttachment, NewNote, NewNotebook, Workspace};
use quire_tools::{ToolActor, ToolRegistry};
use serde_json::{Value, json};

pub(crate) struct Fixture {
    pub(crate) ws: Workspace,
    pub(crate) tools: ToolRegistry,
    pub(crate) work: String,
    pub(crate) projects: String,
    pub(crate) vault: String,
    pub(crate) plain: String,
    pub(crate) secret: String,
    pub(crate) in_vault: String,
    pub(crate) todo: String,
    pub(crate) attachment: String,
    pub(crate) label: String,
    pub(crate) trashed: String,
    pub(crate) secret_attachment: String,
    pub(crate) secret_label: String,
}

impl Fixture {
    pub(crate) fn new() -> Fixture {
        let ws = Workspace::open_in_memory().unwrap();
        let ids = ws
            .write(&Actor::User, |w| {
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
                        icon: Some("📁".into()),
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
                        ..NewNote::new("Vault inventory", "gold bars")
                    })?
                    .summary
                    .id;
                w.set_notebook_protected(&vault, true)?;
                let plain = w
                    .create_note(NewNote {
                        notebook_id: Some(projects.clone()),
                        tags: vec!["planning".into()],
                        ..NewNote::new(
                            "Roadmap",
                            "# Roadmap\n\nShip search in March.\n\n## Risks\n\nScope creep.\n",
                        )
                    })?
                    .summary
                    .id;
                let attachment = w
                    .add_attachment(
                        &plain,
                        NewAttachment {
                            title: "plan.pdf".into(),
                            mime: "application/pdf".into(),
                            data: vec![1, 2, 3],
                            text: Some("Milestones: beta in May.".into()),
                        },
                    )?
                    .id;
                let label = w.set_attribute(&plain, AttributeKind::Label, "status", "draft")?.id;
                let secret = w.create_note(NewNote::new("Diary", "secret thoughts"))?.summary.id;
                let secret_attachment = w
                    .add_attachment(
                        &secret,
                        NewAttachment {
                            title: "letter.txt".into(),
                            mime: "text/plain".into(),
                            data: b"dear".to_vec(),
                            text: Some("dear diary".into()),
                        },
                    )?
                    .id;
                w.set_note_protected(&secret, true)?;
                let secret_label = w.set_attribute(&secret, AttributeKind::Label, "mood", "calm")?.id;
                let todo = w
                    .create_note(NewNote {
                        notebook_id: Some(work.clone()),
                        is_todo: true,
                        ..NewNote::new("Buy ink", "black")
                    })?
                    .summary
                    .id;
                w.set_attribute(&todo, AttributeKind::Relation, "for", &plain)?;
                let trashed = w.create_note(NewNote::new("Old idea", "obsolete"))?.summary.id;
                w.trash_note(&trashed)?;
                Ok::<_, Error>((
                    (work, projects, vault, plain, secret),
                    (in_vault, todo, attachment, label, trashed),
                    (secret_attachment, secret_label),
                ))
            })
            .unwrap();
        let (
            (work, projects, vault, plain, secret),
            (in_vault, todo, attachment, label, trashed),
            (secret_attachment, secret_label),
        ) = ids;
        Fixture {
            ws,
            tools: ToolRegistry::builtin(),
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
        }
    }

    /// Calls a tool as an MCP client; panics on an unknown tool.
    pub(crate) fn call(&self, name: &str, args: Value) -> Value {
        self.tools
            .call(&self.ws, &ToolActor::mcp("tests"), name, args)
            .unwrap()
            .value
    }

    /// Replaces `{name}` placeholders in a JSON template with fixture ids.
    pub(crate) fn args(&self, template: Value) -> Value {
        let text = template.to_string();
        let text = [
            ("{work}", &self.work),
            ("{projects}", &self.projects),
            ("{vault}", &self.vault),
            ("{plain}", &self.plain),
            ("{secret}", &self.secret),
            ("{in_vault}", &self.in_vault),
            ("{todo}", &self.todo),
            ("{attachment}", &self.attachment),
            ("{label}", &self.label),
            ("{trashed}", &self.trashed),
            ("{secret_attachment}", &self.secret_attachment),
            ("{secret_label}", &self.secret_label),
        ]
        .iter()
        .fold(text, |t, (k, v)| t.replace(k, v));
        serde_json::from_str(&text).unwrap()
    }
}

/// Replaces generated ids (32 hex digits) with `[id]` and times with `[time]`, wherever they appear.
pub(crate) fn redact(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    let is_time = matches!(k.as_str(), "created" | "updated" | "at" | "todo_completed");
                    let v = if is_time && v.is_string() {
                        json!("[time]")
                    } else {
                        redact(v)
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(redact).collect()),
        Value::String(s) => Value::String(redact_ids(s)),
        other => other.clone(),
    }
}

fn redact_ids(text: &str) -> String {
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
            i += 32;
        } else if run > 0 {
            out.extend(&chars[i..i + run]);
            i += run;
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    out
}
