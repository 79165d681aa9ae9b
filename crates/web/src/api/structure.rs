//! Queries, tasks, fields, daily notes and templates for the page. A query block or a saved view in the preview runs
//! here (with `this` the note it is in), a task's box in a view completes it through core (a recurring one gets its
//! next occurrence, one undoable change), a table's cell or a board's column sets a field in its note, the Today
//! button opens the day's note, and "New from template" fills a template in. Every rule is core's.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, State};
use quire_core::query::{QueryOptions, QueryResult};
use quire_core::{FieldWritten, FromTemplate, NewNote, Period, PeriodicNote, TaskDone, TaskToggle};
use serde::{Deserialize, Serialize};

use super::notes::whole_note;
use super::{user_read, user_write};
use crate::error::ApiError;
use crate::{Note, WebApp};

/// `POST /api/query`'s request.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QueryRequest {
    /// The query, in Dataview's language.
    pub query: String,
    /// The note it is written in: `this` and `[[]]` mean it.
    #[serde(default)]
    pub note_id: Option<String>,
}

/// `POST /api/query`: the rows, a [`QueryResult`], as the user sees the workspace; a query that does not read is
/// `invalid` with the place it stopped. (Written as JSON where it runs: a result holds values that stay on its
/// thread.)
pub(super) async fn query(
    State(app): State<Arc<WebApp>>,
    Json(request): Json<QueryRequest>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let options = QueryOptions {
        this_note: request.note_id,
        ..QueryOptions::default()
    };
    let json = user_read(&app, move |r| {
        let result: QueryResult = r.query_text(&request.query, &options)?;
        serde_json::to_value(&result).map_err(|e| quire_core::Error::Invalid(e.to_string()))
    })
    .await?;
    Ok(Json(json))
}

/// `POST /api/tasks/done`'s request.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskRequest {
    /// The task's note.
    pub note_id: String,
    /// Its line, from 0, as the query gave it.
    pub line: u64,
    /// Done, or open again.
    pub done: bool,
    /// Its text as the view showed it: when the line says something else now, nothing changes.
    #[serde(default)]
    pub text: Option<String>,
}

/// What completing a task did, and the change that undoes it.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct TaskChanged {
    /// The task now.
    pub task: TaskDone,
    /// The change set (none when nothing changed).
    pub change_set_id: Option<String>,
}

/// `POST /api/tasks/done`.
pub(super) async fn task_done(
    State(app): State<Arc<WebApp>>,
    Json(request): Json<TaskRequest>,
) -> Result<Json<TaskChanged>, ApiError> {
    let toggle = TaskToggle {
        note_id: request.note_id,
        line: usize::try_from(request.line).unwrap_or(usize::MAX),
        done: request.done,
        expect_text: request.text,
        today: None,
    };
    let (task, change_set_id) = user_write(&app, move |w| {
        let task = w.set_task_done(&toggle)?;
        Ok((task, w.change_set_id().map(str::to_owned)))
    })
    .await?;
    Ok(Json(TaskChanged { task, change_set_id }))
}

/// `POST /api/notes/{id}/field`'s request.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FieldRequest {
    /// The field's name, as the view's column or grouping names it.
    pub name: String,
    /// Its new value (one line).
    pub value: String,
}

/// `POST /api/notes/{id}/field`: where the value was written.
pub(super) async fn set_field(
    State(app): State<Arc<WebApp>>,
    Path(id): Path<String>,
    Json(request): Json<FieldRequest>,
) -> Result<Json<FieldWritten>, ApiError> {
    Ok(Json(
        user_write(&app, move |w| w.set_note_field(&id, &request.name, &request.value)).await?,
    ))
}

/// `POST /api/today`'s request.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TodayRequest {
    /// The week's note instead of the day's.
    #[serde(default)]
    pub week: bool,
    /// Another day than today: YYYY-MM-DD, tomorrow, yesterday.
    #[serde(default)]
    pub day: Option<String>,
}

/// A note opened or made by the Today button or from a template.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct OpenedNote {
    /// The note.
    pub note: Note,
    /// Whether it was made now.
    pub created: bool,
    /// What of its template was left as written.
    pub warnings: Vec<String>,
}

/// `POST /api/today`: the day's (or week's) note, made from its template the first time.
pub(super) async fn today(
    State(app): State<Arc<WebApp>>,
    Json(request): Json<TodayRequest>,
) -> Result<Json<OpenedNote>, ApiError> {
    let settings = periodic(&app)?;
    let period = if request.week { Period::Week } else { Period::Day };
    let now = jiff::Zoned::now().datetime();
    let p = PeriodicNote {
        period,
        day: quire_core::day_asked(request.day.as_deref(), now)?,
        now,
        settings: if request.week { settings.weekly } else { settings.daily },
        templates_notebook: settings.templates_notebook,
    };
    let opened = user_write(&app, move |w| w.open_periodic_note(&p)).await?;
    Ok(Json(opened_note(&app, opened).await?))
}

/// The configuration's daily, weekly and templates settings as they are now.
fn periodic(app: &WebApp) -> Result<crate::Periodic, ApiError> {
    (app.options.periodic.0)().map_err(|e| ApiError::invalid(e.to_string()))
}

async fn opened_note(app: &Arc<WebApp>, opened: quire_core::Opened) -> Result<OpenedNote, ApiError> {
    Ok(OpenedNote {
        note: whole_note(app, opened.note.id).await?,
        created: opened.created,
        warnings: opened.warnings,
    })
}

/// A template the page offers.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct TemplateEntry {
    /// The template note's id.
    pub note_id: String,
    /// Its title.
    pub title: String,
    /// Its notebook's path.
    pub notebook_path: String,
}

/// `GET /api/templates`' answer.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct TemplateList {
    /// The notebook templates are kept in (`[templates] notebook`).
    pub notebook: String,
    /// The notes in it and below, by title.
    pub templates: Vec<TemplateEntry>,
}

/// `GET /api/templates`: the notes of the templates notebook and the notebooks below it.
pub(super) async fn templates(State(app): State<Arc<WebApp>>) -> Result<Json<TemplateList>, ApiError> {
    let settings = periodic(&app)?;
    let notebook = settings.templates_notebook;
    let path = notebook.clone();
    let templates = user_read(&app, move |r| {
        if r.find_notebook(&path)?.is_none() {
            return Ok(Vec::new());
        }
        let folder = serde_json::to_string(&path).unwrap_or_default();
        let result = r.query_text(&format!("LIST FROM {folder} SORT file.name"), &QueryOptions::default())?;
        Ok(result
            .rows
            .into_iter()
            .filter_map(|row| row.note)
            .map(|n| TemplateEntry {
                note_id: n.id,
                title: n.title,
                notebook_path: n.notebook,
            })
            .collect())
    })
    .await?;
    Ok(Json(TemplateList { notebook, templates }))
}

/// `POST /api/notes/from-template`'s request.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FromTemplateRequest {
    /// The template: a note's id, title or `Notebook/Title` path.
    pub template: String,
    /// The new note's title.
    pub title: String,
    /// Its notebook; the top level when absent.
    #[serde(default)]
    pub notebook_id: Option<String>,
}

/// `POST /api/notes/from-template`: the new note.
pub(super) async fn from_template(
    State(app): State<Arc<WebApp>>,
    Json(request): Json<FromTemplateRequest>,
) -> Result<Json<OpenedNote>, ApiError> {
    let settings = periodic(&app)?;
    let t = FromTemplate {
        template: request.template,
        templates_notebook: settings.templates_notebook,
        note: NewNote {
            notebook_id: request.notebook_id,
            ..NewNote::new(request.title, "")
        },
        now: jiff::Zoned::now().datetime(),
    };
    let opened = user_write(&app, move |w| w.create_from_template(&t)).await?;
    Ok(Json(opened_note(&app, opened).await?))
}
