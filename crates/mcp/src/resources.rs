//! Resources beyond notes: a registry of extra static resources and URI templates (an embedder's own, or the
//! conformance suite's fixtures), and the watcher that turns the workspace's change log into
//! `notifications/resources/updated` for subscribed URIs.

use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use quire_core::news::NewsReceiver;
use quire_core::{Actor, EntityKind, Workspace};

/// What a resource holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResourceBody {
    /// Text.
    Text(String),
    /// Bytes, sent base64-encoded as a blob.
    Blob(Vec<u8>),
}

/// A resource at a fixed URI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StaticResource {
    /// Its URI.
    pub uri: String,
    /// Its name.
    pub name: String,
    /// Its MIME type.
    pub mime_type: String,
    /// What it holds.
    pub body: ResourceBody,
}

type Reader = Arc<dyn Fn(&BTreeMap<String, String>) -> Option<ResourceBody> + Send + Sync>;
type Completer = Arc<dyn Fn(&str, &str) -> Vec<String> + Send + Sync>;

/// Resources at URIs made from a template such as `test://template/{id}/data`; each `{name}` matches one path
/// segment.
#[derive(Clone)]
pub struct TemplateResource {
    /// The URI template.
    pub uri_template: String,
    /// Its name.
    pub name: String,
    /// What it gives.
    pub description: String,
    /// The MIME type of what it gives.
    pub mime_type: String,
    read: Reader,
    complete: Option<Completer>,
}

impl std::fmt::Debug for TemplateResource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TemplateResource")
            .field("uri_template", &self.uri_template)
            .finish_non_exhaustive()
    }
}

impl TemplateResource {
    /// A template whose `read` gets the values of its variables and returns the body, or `None` when there is no
    /// such resource.
    pub fn new(
        uri_template: &str,
        name: &str,
        description: &str,
        mime_type: &str,
        read: impl Fn(&BTreeMap<String, String>) -> Option<ResourceBody> + Send + Sync + 'static,
    ) -> TemplateResource {
        TemplateResource {
            uri_template: uri_template.into(),
            name: name.into(),
            description: description.into(),
            mime_type: mime_type.into(),
            read: Arc::new(read),
            complete: None,
        }
    }

    /// Completes a variable: `complete(variable, typed)` returns the values to offer.
    pub fn with_completion(
        mut self,
        complete: impl Fn(&str, &str) -> Vec<String> + Send + Sync + 'static,
    ) -> TemplateResource {
        self.complete = Some(Arc::new(complete));
        self
    }
}

/// Matches a URI against a template: the values of its `{variables}`, each one non-empty path segment.
pub(crate) fn match_template(template: &str, uri: &str) -> Option<BTreeMap<String, String>> {
    let mut values = BTreeMap::new();
    let mut rest = uri;
    let mut pattern = template;
    while !pattern.is_empty() {
        if let Some(after) = pattern.strip_prefix('{') {
            let (name, tail) = after.split_once('}')?;
            // The value runs to the next literal (or the end), never across a `/`.
            let next_literal = tail.split('{').next().unwrap_or("");
            let end = if next_literal.is_empty() {
                rest.len()
            } else {
                rest.find(next_literal)?
            };
            let value = &rest[..end];
            if value.is_empty() || value.contains('/') {
                return None;
            }
            values.insert(name.to_owned(), value.to_owned());
            rest = &rest[end..];
            pattern = tail;
        } else {
            let literal_end = pattern.find('{').unwrap_or(pattern.len());
            rest = rest.strip_prefix(&pattern[..literal_end])?;
            pattern = &pattern[literal_end..];
        }
    }
    rest.is_empty().then_some(values)
}

/// Extra resources and templates, added while serving.
#[derive(Debug, Default)]
pub struct ResourceRegistry {
    statics: RwLock<BTreeMap<String, StaticResource>>,
    templates: RwLock<Vec<TemplateResource>>,
}

impl ResourceRegistry {
    /// Adds a resource at a fixed URI (replacing one at the same URI).
    pub fn add(&self, resource: StaticResource) {
        self.statics
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(resource.uri.clone(), resource);
    }

    /// Adds a template.
    pub fn add_template(&self, template: TemplateResource) {
        self.templates.write().unwrap_or_else(|e| e.into_inner()).push(template);
    }

    pub(crate) fn statics(&self) -> Vec<StaticResource> {
        self.statics
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .cloned()
            .collect()
    }

    pub(crate) fn templates(&self) -> Vec<TemplateResource> {
        self.templates.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The body and MIME type of a URI, if a static resource or a template has it.
    pub(crate) fn read(&self, uri: &str) -> Option<(ResourceBody, String)> {
        if let Some(found) = self.statics.read().unwrap_or_else(|e| e.into_inner()).get(uri) {
            return Some((found.body.clone(), found.mime_type.clone()));
        }
        self.templates().into_iter().find_map(|t| {
            let values = match_template(&t.uri_template, uri)?;
            (t.read)(&values).map(|body| (body, t.mime_type.clone()))
        })
    }

    /// Whether the URI names one of these resources.
    pub(crate) fn knows(&self, uri: &str) -> bool {
        self.statics.read().unwrap_or_else(|e| e.into_inner()).contains_key(uri)
            || self
                .templates()
                .iter()
                .any(|t| match_template(&t.uri_template, uri).is_some())
    }

    pub(crate) fn complete(&self, uri_template: &str, variable: &str, typed: &str) -> Option<Vec<String>> {
        let template = self.templates().into_iter().find(|t| t.uri_template == uri_template)?;
        template.complete.map(|complete| complete(variable, typed))
    }
}

/// The URI of a review set of staged changes, before its number.
pub(crate) const REVIEW_URI: &str = "quire://review/";

/// Tells subscribers which resource URIs changed, from core's one news watcher of the workspace (so writes by any
/// process on the same file count, and staged writes and decisions too). One per server, receiving only while
/// someone listens.
pub(crate) struct ChangeWatcher {
    workspace: Workspace,
    sender: tokio::sync::broadcast::Sender<Arc<HashSet<String>>>,
    running: Mutex<bool>,
}

impl ChangeWatcher {
    pub(crate) fn new(workspace: Workspace) -> Arc<ChangeWatcher> {
        Arc::new(ChangeWatcher {
            workspace,
            sender: tokio::sync::broadcast::channel(64).0,
            running: Mutex::new(false),
        })
    }

    /// Receives the URIs changed in each batch of news.
    pub(crate) fn subscribe(self: &Arc<Self>) -> tokio::sync::broadcast::Receiver<Arc<HashSet<String>>> {
        let receiver = self.sender.subscribe();
        let mut running = self.running.lock().unwrap_or_else(|e| e.into_inner());
        if !*running {
            match self.workspace.news(None) {
                Ok(news) => {
                    *running = true;
                    let watcher = Arc::clone(self);
                    tokio::spawn(async move { watcher.run(news).await });
                }
                Err(e) => tracing::warn!(error = %e, "resource updates cannot be followed"),
            }
        }
        receiver
    }

    async fn run(self: Arc<Self>, mut news: NewsReceiver) {
        loop {
            // Woken at least every second to notice that nobody listens any more.
            let batch = tokio::select! {
                batch = news.recv() => Some(batch),
                () = tokio::time::sleep(IDLE_CHECK) => None,
            };
            if self.sender.receiver_count() == 0 {
                let mut running = self.running.lock().unwrap_or_else(|e| e.into_inner());
                // Checked again under the lock: a subscriber arriving now finds the watcher stopped and starts it.
                if self.sender.receiver_count() == 0 {
                    *running = false;
                    return;
                }
            }
            let batch = match batch {
                Some(Ok(batch)) => batch,
                Some(Err(e)) => {
                    tracing::warn!(error = %e, "the news could not be read for subscribers");
                    continue;
                }
                None => continue,
            };
            let ws = self.workspace.clone();
            let uris = tokio::task::spawn_blocking(move || {
                let mut uris: HashSet<String> = batch
                    .changes
                    .iter()
                    .filter_map(|c| changed_uri(c.entity, &c.entity_id))
                    .collect();
                uris.extend(batch.reviews.iter().map(|r| format!("{REVIEW_URI}{}", r.set_id)));
                // A note that changed changes the listing of the notebook it is in now.
                let notes: Vec<&str> = batch
                    .changes
                    .iter()
                    .filter(|c| c.entity == EntityKind::Note)
                    .filter_map(|c| c.note_id())
                    .collect();
                let _ = ws.read(&Actor::User, |r| {
                    for id in notes {
                        if let Ok(note) = r.note_summary(id) {
                            uris.insert(format!("quire://notebook/{}", note.notebook_id));
                        }
                    }
                    Ok::<_, quire_core::Error>(())
                });
                uris
            })
            .await
            .unwrap_or_default();
            if !uris.is_empty() {
                let _ = self.sender.send(Arc::new(uris));
            }
        }
    }
}

/// How often the watcher looks whether anyone still listens when no news comes.
const IDLE_CHECK: Duration = Duration::from_secs(1);

/// The resource URI a change touches.
fn changed_uri(entity: EntityKind, id: &str) -> Option<String> {
    match entity {
        EntityKind::Note => Some(format!("quire://note/{id}")),
        // A note-tag link's id is `note_id/tag_id`: the note's tags changed.
        EntityKind::NoteTag => id.split('/').next().map(|note| format!("quire://note/{note}")),
        EntityKind::Notebook => Some(format!("quire://notebook/{id}")),
        EntityKind::Attachment => Some(format!("quire://attachment/{id}")),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::match_template;

    #[test]
    fn templates_match_one_segment_per_variable() {
        let values = match_template("test://template/{id}/data", "test://template/123/data").unwrap();
        assert_eq!(values["id"], "123");
        assert!(match_template("test://template/{id}/data", "test://template//data").is_none());
        assert!(match_template("test://template/{id}/data", "test://template/1/2/data").is_none());
        assert!(match_template("test://template/{id}/data", "test://template/1/datax").is_none());
        assert_eq!(
            match_template("quire://note/{id}", "quire://note/abc").unwrap()["id"],
            "abc"
        );
        assert!(match_template("quire://note/{id}", "quire://note/").is_none());
    }
}
