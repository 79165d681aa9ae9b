//! Prompts: ready-made requests a person picks from an AI client's menu (MCP `prompts/list` and `prompts/get`),
//! built from notes. Declared like plugin tools, with arguments that complete (note titles, notebook paths, tags).
//!
//! Prompts read the workspace as the caller (an MCP client): protected notes give their title only.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

use quire_core::{Actor, EntityKind, Note, NoteSummary, Page, Reader, SearchOptions, Timestamp, Workspace};
use serde_json::Value;

use crate::actor::ToolActor;
use crate::context::{BoxFuture, CallContext};
use crate::error::ToolError;
use crate::plugin::{ContentItem, PluginCall, Reads};

/// What a prompt argument completes to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Completes {
    /// Note titles (the prompt accepts a title or an id).
    Note,
    /// Notebook paths such as `Work/Projects`.
    Notebook,
    /// Tag names.
    Tag,
    /// A fixed list of values.
    Values(Vec<String>),
}

/// One argument of a prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptArgument {
    /// Its name.
    pub name: String,
    /// What to give, in a sentence.
    pub description: String,
    /// Whether it must be given.
    pub required: bool,
    /// What it completes to, if anything.
    pub completes: Option<Completes>,
}

impl PromptArgument {
    /// A required argument.
    pub fn required(name: &str, description: &str) -> PromptArgument {
        PromptArgument {
            name: name.into(),
            description: description.into(),
            required: true,
            completes: None,
        }
    }

    /// An optional argument.
    pub fn optional(name: &str, description: &str) -> PromptArgument {
        PromptArgument {
            required: false,
            ..PromptArgument::required(name, description)
        }
    }

    /// Completes to these values.
    pub fn completing(mut self, completes: Completes) -> PromptArgument {
        self.completes = Some(completes);
        self
    }
}

/// One message of a prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptMessage {
    /// `true` for the user's turn, `false` for the assistant's.
    pub from_user: bool,
    /// What it holds: text, an image or a sound, or an embedded resource.
    pub content: ContentItem,
}

impl PromptMessage {
    /// A user message of text.
    pub fn user_text(text: impl Into<String>) -> PromptMessage {
        PromptMessage {
            from_user: true,
            content: ContentItem::Text { text: text.into() },
        }
    }

    /// A user message embedding a note as a resource (`quire://note/ID`, Markdown).
    pub fn note(note: &Note) -> PromptMessage {
        PromptMessage {
            from_user: true,
            content: ContentItem::Resource {
                uri: format!("quire://note/{}", note.summary.id),
                mime_type: Some("text/markdown".into()),
                text: Some(format!("# {}\n\n{}", note.summary.title, note.body)),
                blob: None,
            },
        }
    }
}

/// What a prompt gives: an optional description and its messages.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PromptOutput {
    /// A description of this rendering.
    pub description: Option<String>,
    /// The messages.
    pub messages: Vec<PromptMessage>,
}

/// What a prompt handler returns.
pub type PromptFuture = BoxFuture<'static, Result<PromptOutput, ToolError>>;
type PromptHandler = Arc<dyn Fn(PluginCall<Reads>) -> PromptFuture + Send + Sync>;

/// A prompt.
#[derive(Clone)]
pub struct Prompt {
    /// Its name.
    pub name: String,
    /// Its title, for menus.
    pub title: String,
    /// What it does.
    pub description: String,
    /// Its arguments.
    pub arguments: Vec<PromptArgument>,
    handler: PromptHandler,
}

impl std::fmt::Debug for Prompt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prompt")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl Prompt {
    /// A prompt whose handler gets the arguments (as a JSON object of strings) and read access as the caller.
    pub fn new(
        name: &str,
        title: &str,
        description: &str,
        arguments: Vec<PromptArgument>,
        handler: impl Fn(PluginCall<Reads>) -> PromptFuture + Send + Sync + 'static,
    ) -> Prompt {
        Prompt {
            name: name.into(),
            title: title.into(),
            description: description.into(),
            arguments,
            handler: Arc::new(handler),
        }
    }
}

/// Why a prompt could not be got.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PromptError {
    /// No prompt has this name.
    #[error("Unknown prompt: {0}")]
    Unknown(String),
    /// A required argument is missing, or an argument is not a string.
    #[error("{0}")]
    InvalidArguments(String),
    /// The prompt failed (a note not found, the client could not answer, …).
    #[error("{0}")]
    Failed(String),
}

/// The prompts a server offers. Cheap to share; prompts can be added and removed while serving, and listeners hear
/// about it.
pub struct PromptRegistry {
    prompts: RwLock<BTreeMap<String, Prompt>>,
    changes: tokio::sync::watch::Sender<u64>,
}

impl std::fmt::Debug for PromptRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PromptRegistry").finish_non_exhaustive()
    }
}

impl Default for PromptRegistry {
    fn default() -> PromptRegistry {
        PromptRegistry::builtin()
    }
}

impl PromptRegistry {
    /// No prompts.
    pub fn empty() -> PromptRegistry {
        PromptRegistry {
            prompts: RwLock::new(BTreeMap::new()),
            changes: tokio::sync::watch::channel(0).0,
        }
    }

    /// quire's own prompts: summarise a note, what changed lately, notes related to a note, a draft from notes on a
    /// topic.
    pub fn builtin() -> PromptRegistry {
        let registry = PromptRegistry::empty();
        for prompt in builtin_prompts() {
            let _ = registry.register(prompt);
        }
        registry
    }

    /// Adds a prompt; refused when the name is taken.
    pub fn register(&self, prompt: Prompt) -> Result<(), PromptError> {
        let mut prompts = self.prompts.write().unwrap_or_else(|e| e.into_inner());
        if prompts.contains_key(&prompt.name) {
            return Err(PromptError::InvalidArguments(format!(
                "A prompt named {} exists already",
                prompt.name
            )));
        }
        prompts.insert(prompt.name.clone(), prompt);
        drop(prompts);
        self.changes.send_modify(|n| *n += 1);
        Ok(())
    }

    /// Removes a prompt; whether it was there.
    pub fn unregister(&self, name: &str) -> bool {
        let removed = self
            .prompts
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .remove(name)
            .is_some();
        if removed {
            self.changes.send_modify(|n| *n += 1);
        }
        removed
    }

    /// Every prompt, by name.
    pub fn list(&self) -> Vec<Prompt> {
        self.prompts
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .cloned()
            .collect()
    }

    /// A prompt by name.
    pub fn find(&self, name: &str) -> Option<Prompt> {
        self.prompts
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(name)
            .cloned()
    }

    /// Changes when prompts are added or removed.
    pub fn subscribe(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changes.subscribe()
    }

    /// Renders a prompt for `caller` with string arguments.
    pub async fn get(
        &self,
        ws: &Workspace,
        caller: &ToolActor,
        name: &str,
        args: &BTreeMap<String, String>,
        context: Option<Arc<dyn CallContext>>,
    ) -> Result<PromptOutput, PromptError> {
        let prompt = self.find(name).ok_or_else(|| PromptError::Unknown(name.to_owned()))?;
        if let Some(missing) = prompt
            .arguments
            .iter()
            .find(|a| a.required && args.get(&a.name).is_none_or(|v| v.trim().is_empty()))
        {
            return Err(PromptError::InvalidArguments(format!(
                "The argument {} is required: {}",
                missing.name, missing.description
            )));
        }
        let call = PluginCall {
            args: Value::Object(
                args.iter()
                    .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                    .collect(),
            ),
            caller: caller.clone(),
            workspace: Reads::new(ws.clone(), caller.actor().clone()),
            context,
        };
        (prompt.handler)(call)
            .await
            .map_err(|e| PromptError::Failed(e.to_string()))
    }

    /// Completions for an argument of a prompt, given what was typed: at most 100, best first, and the number of
    /// matches in all. An unknown prompt is an error; an argument that does not complete gives nothing.
    pub fn complete(
        &self,
        ws: &Workspace,
        caller: &ToolActor,
        prompt: &str,
        argument: &str,
        typed: &str,
    ) -> Result<(Vec<String>, usize), PromptError> {
        let prompt = self
            .find(prompt)
            .ok_or_else(|| PromptError::Unknown(prompt.to_owned()))?;
        let Some(completes) = prompt
            .arguments
            .into_iter()
            .find(|a| a.name == argument)
            .and_then(|a| a.completes)
        else {
            return Ok((Vec::new(), 0));
        };
        Ok(complete(ws, caller.actor(), &completes, typed))
    }
}

/// Completions of `typed` for a kind of value: prefix matches first, then other matches, ignoring case.
pub fn complete(ws: &Workspace, actor: &Actor, completes: &Completes, typed: &str) -> (Vec<String>, usize) {
    let candidates: Vec<String> = match completes {
        Completes::Values(values) => values.clone(),
        Completes::Tag => ws
            .read(actor, |r| r.tags())
            .map(|tags| tags.into_iter().map(|t| t.name).collect())
            .unwrap_or_default(),
        Completes::Notebook => ws
            .read(actor, |r| {
                let tree = r.notebook_tree()?;
                let mut paths: Vec<String> = tree
                    .iter()
                    .filter(|b| !b.id.starts_with('_'))
                    .map(|b| tree.path(&b.id))
                    .collect();
                paths.sort_by_key(|p| p.to_lowercase());
                Ok::<_, quire_core::Error>(paths)
            })
            .unwrap_or_default(),
        Completes::Note => ws
            .read(actor, |r| {
                let query = title_prefixes(typed);
                let hits = if query.is_empty() {
                    r.all_notes(Page { offset: 0, limit: 200 })?.items
                } else {
                    let options = SearchOptions {
                        page: Page { offset: 0, limit: 200 },
                        include_trashed: false,
                    };
                    r.search(&query, options)?.items.into_iter().map(|h| h.note).collect()
                };
                Ok::<_, quire_core::Error>(hits.into_iter().map(|n| n.title).collect())
            })
            .unwrap_or_default(),
    };
    rank(candidates, typed, !matches!(completes, Completes::Values(_)))
}

/// Prefix matches first, then other matches; sorted by name unless the candidates come in an order of their own.
fn rank(candidates: Vec<String>, typed: &str, sort: bool) -> (Vec<String>, usize) {
    let typed = typed.trim().to_lowercase();
    let mut prefix = Vec::new();
    let mut inside = Vec::new();
    for candidate in candidates {
        let lower = candidate.to_lowercase();
        if lower.starts_with(&typed) {
            prefix.push(candidate);
        } else if lower.contains(&typed) {
            inside.push(candidate);
        }
    }
    if sort {
        prefix.sort_by_key(|c| c.to_lowercase());
        inside.sort_by_key(|c| c.to_lowercase());
    }
    prefix.extend(inside);
    prefix.dedup();
    let total = prefix.len();
    prefix.truncate(100);
    (prefix, total)
}

/// The note a prompt argument names: an id, or a title or alias, optionally after its notebook's path (a unique
/// one, or the most recently changed of several: [`Reader::notes_named`]). A protected note comes with its title
/// only.
pub fn find_note(r: &Reader<'_>, given: &str) -> Result<Note, ToolError> {
    let given = given.trim();
    if let Ok(summary) = r.note_summary(given) {
        return Ok(note_or_title(r, &summary));
    }
    if given.is_empty() {
        return Err(ToolError::new("Give a note's title or id."));
    }
    // The most recently changed of the notes the name means, by the rule a [[link]] with this text follows.
    let summary = r
        .notes_named(given)?
        .into_iter()
        .next()
        .ok_or_else(|| ToolError::not_found(format!("No note is titled or has the id \"{given}\".")))?;
    Ok(note_or_title(r, &summary))
}

/// A search query for notes whose title holds words starting with these (what is typed so far).
fn title_prefixes(text: &str) -> String {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| format!("title:{w}*"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Reads a note for a prompt: a protected note gives its title only.
fn note_or_title(r: &Reader<'_>, summary: &NoteSummary) -> Note {
    r.note(&summary.id).unwrap_or_else(|_| Note {
        summary: summary.clone(),
        body: "(protected: only its title can be shown)".into(),
    })
}

fn arg(call: &PluginCall<Reads>, name: &str) -> String {
    call.args
        .get(name)
        .and_then(Value::as_str)
        .unwrap_or("")
        .trim()
        .to_owned()
}

/// The most notes a prompt embeds.
const MAX_NOTES: usize = 10;

fn builtin_prompts() -> Vec<Prompt> {
    vec![
        Prompt::new(
            "summarize_note",
            "Summarise a note",
            "A summary of one note: its main points, decisions and open questions.",
            vec![PromptArgument::required("note", "The note's title or id.").completing(Completes::Note)],
            |call| {
                Box::pin(async move {
                    let note = call.workspace.read(|r| find_note(r, &arg(&call, "note")))?;
                    Ok(PromptOutput {
                        description: Some(format!("Summarise \"{}\"", note.summary.title)),
                        messages: vec![
                            PromptMessage::note(&note),
                            PromptMessage::user_text(
                                "Summarise the note above in a few bullet points: its main points, any decisions, and \
                                 open questions or to-dos.",
                            ),
                        ],
                    })
                })
            },
        ),
        Prompt::new(
            "recent_changes",
            "What changed lately",
            "The notes changed in the last days (7 unless told), for a review of the week.",
            vec![
                PromptArgument::optional("days", "How many days back (1 to 90; 7 when empty).")
                    .completing(Completes::Values(vec!["1".into(), "7".into(), "30".into()])),
            ],
            |call| {
                Box::pin(async move {
                    let days = arg(&call, "days");
                    let days: i64 = if days.is_empty() {
                        7
                    } else {
                        days.parse()
                            .ok()
                            .filter(|d| (1..=90).contains(d))
                            .ok_or_else(|| ToolError::new("days must be a whole number from 1 to 90."))?
                    };
                    let since = Timestamp(Timestamp::now().as_millis() - days * 86_400_000);
                    let notes = call.workspace.read(|r| {
                        let changes = r.changes(Some(since), Page { offset: 0, limit: 1000 })?;
                        let mut seen = Vec::new();
                        for change in changes.items.iter().rev() {
                            if change.entity == EntityKind::Note && !seen.contains(&change.entity_id) {
                                seen.push(change.entity_id.clone());
                            }
                        }
                        Ok::<_, ToolError>(
                            seen.iter()
                                .filter_map(|id| r.note_summary(id).ok())
                                .take(MAX_NOTES)
                                .map(|s| note_or_title(r, &s))
                                .collect::<Vec<_>>(),
                        )
                    })?;
                    let mut messages: Vec<PromptMessage> = notes.iter().map(PromptMessage::note).collect();
                    messages.push(PromptMessage::user_text(if notes.is_empty() {
                        format!("No note changed in the last {days} days. Say so.")
                    } else {
                        format!(
                            "These are the notes changed in the last {days} days, most recent first. Say briefly \
                             what changed and what needs attention."
                        )
                    }));
                    Ok(PromptOutput {
                        description: Some(format!("Notes changed in the last {days} days")),
                        messages,
                    })
                })
            },
        ),
        Prompt::new(
            "related_notes",
            "Notes related to a note",
            "A note with the notes that share its words or tags, to find links between them.",
            vec![PromptArgument::required("note", "The note's title or id.").completing(Completes::Note)],
            |call| {
                Box::pin(async move {
                    let (note, related) = call.workspace.read(|r| {
                        let note = find_note(r, &arg(&call, "note"))?;
                        let words: Vec<String> = note
                            .summary
                            .title
                            .split(|c: char| !c.is_alphanumeric())
                            .filter(|w| w.chars().count() > 2)
                            .map(|w| format!("\"{w}\""))
                            .collect();
                        let mut related = Vec::new();
                        if !words.is_empty() {
                            let options = SearchOptions {
                                page: Page { offset: 0, limit: 20 },
                                include_trashed: false,
                            };
                            for hit in r.search(&format!("any:1 {}", words.join(" ")), options)?.items {
                                if hit.note.id != note.summary.id && related.len() < MAX_NOTES {
                                    related.push(note_or_title(r, &hit.note));
                                }
                            }
                        }
                        Ok::<_, ToolError>((note, related))
                    })?;
                    let mut messages = vec![PromptMessage::note(&note)];
                    messages.extend(related.iter().map(PromptMessage::note));
                    messages.push(PromptMessage::user_text(format!(
                        "The first note is \"{}\"; the others may be related to it. Say which are related and how, \
                         and suggest links worth adding.",
                        note.summary.title
                    )));
                    Ok(PromptOutput {
                        description: Some(format!("Notes related to \"{}\"", note.summary.title)),
                        messages,
                    })
                })
            },
        ),
        Prompt::new(
            "draft_from_notes",
            "Draft from notes on a topic",
            "The notes that match a topic, and a request to draft a text from them.",
            vec![
                PromptArgument::required("topic", "What the draft is about (search words)."),
                PromptArgument::optional(
                    "notebook",
                    "Only notes in this notebook (a path such as Work/Projects).",
                )
                .completing(Completes::Notebook),
                PromptArgument::optional("tag", "Only notes with this tag.").completing(Completes::Tag),
            ],
            |call| {
                Box::pin(async move {
                    let topic = arg(&call, "topic");
                    let tag = arg(&call, "tag");
                    let notebook = arg(&call, "notebook");
                    let notes = call.workspace.read(|r| {
                        let mut query = topic.clone();
                        if !tag.is_empty() {
                            query.push_str(&format!(" tag:\"{}\"", tag.replace('"', "")));
                        }
                        if !notebook.is_empty() {
                            query.push_str(&format!(" notebook:\"{}\"", notebook.replace('"', "")));
                        }
                        let options = SearchOptions {
                            page: Page {
                                offset: 0,
                                limit: MAX_NOTES as u64,
                            },
                            include_trashed: false,
                        };
                        Ok::<_, ToolError>(
                            r.search(&query, options)?
                                .items
                                .iter()
                                .map(|h| note_or_title(r, &h.note))
                                .collect::<Vec<_>>(),
                        )
                    })?;
                    let mut messages: Vec<PromptMessage> = notes.iter().map(PromptMessage::note).collect();
                    messages.push(PromptMessage::user_text(if notes.is_empty() {
                        format!("No note matches \"{topic}\". Say so and suggest other search words.")
                    } else {
                        format!(
                            "Using the notes above, draft a clear text about \"{topic}\". Name the notes you draw on."
                        )
                    }));
                    Ok(PromptOutput {
                        description: Some(format!("A draft about \"{topic}\"")),
                        messages,
                    })
                })
            },
        ),
    ]
}
