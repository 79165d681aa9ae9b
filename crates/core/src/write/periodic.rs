//! Daily and weekly notes, and notes made from templates: the one rule that `quire today`, the web app's Today
//! button and `quire note add --template` share. A day's note is found by its title in its notebook, or created there
//! from its template in the same transaction, so two windows opening today at once make one note.

use jiff::ToSpan;
use jiff::civil::{Date, DateTime, Weekday};
use serde::{Deserialize, Serialize};

use super::{NewNote, Writer};
use crate::entity::{NoteSummary, ROOT_NOTEBOOK_ID};
use crate::error::{Error, Result};
use crate::template::{self, TemplateVars, moment};

/// Where templates are looked for first when the configuration names no notebook.
pub const DEFAULT_TEMPLATES_NOTEBOOK: &str = "Templates";

/// The day a periodic note is asked for: `words` as a date query reads them (YYYY-MM-DD, today, tomorrow, yesterday,
/// ...), today when none; anything else is refused in words the command line and the page both show.
pub fn day_asked(words: Option<&str>, now: DateTime) -> Result<Date> {
    let words = words.unwrap_or("today");
    crate::query::day_named(words, now).ok_or_else(|| {
        Error::invalid(format!(
            "\"{words}\" is not a day: write YYYY-MM-DD, today, tomorrow or yesterday"
        ))
    })
}

/// Which kind of periodic note.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Period {
    /// One note a day.
    #[default]
    Day,
    /// One note a week.
    Week,
}

/// Where a period's notes live and what they are made from (the `[daily]` and `[weekly]` settings).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PeriodicSettings {
    /// The notebook path, such as `Journal/Daily`.
    pub notebook: String,
    /// The title's date format in Moment.js tokens; a `/` in it puts the note in notebooks below (`YYYY/MM/YYYY-MM-DD`).
    pub format: String,
    /// The template note: its id, title or `Notebook/Title` path; none makes an empty note.
    pub template: Option<String>,
}

impl PeriodicSettings {
    /// The defaults: `Daily` with `YYYY-MM-DD` titles, `Weekly` with `gggg-[W]ww` (as the Periodic Notes plugin).
    pub fn default_for(period: Period) -> PeriodicSettings {
        let (notebook, format) = match period {
            Period::Day => ("Daily", "YYYY-MM-DD"),
            Period::Week => ("Weekly", "gggg-[W]ww"),
        };
        PeriodicSettings {
            notebook: notebook.to_owned(),
            format: format.to_owned(),
            template: None,
        }
    }
}

/// A daily or weekly note to open.
#[derive(Debug, Clone)]
pub struct PeriodicNote {
    /// Day or week.
    pub period: Period,
    /// A day in the period (today, or the day asked for).
    pub day: Date,
    /// The time now, local: `{{time}}` and Templater's `tp.date.now`.
    pub now: DateTime,
    /// Where and how.
    pub settings: PeriodicSettings,
    /// Where a template named by its title is looked for first (`[templates] notebook`).
    pub templates_notebook: String,
}

/// A note made from a template.
#[derive(Debug, Clone)]
pub struct FromTemplate {
    /// The template: its id, title or `Notebook/Title` path.
    pub template: String,
    /// Where templates are looked for first when a title names several notes.
    pub templates_notebook: String,
    /// The new note: its title (`{{title}}`), notebook, tags and to-do state; its body is the template's, filled in.
    pub note: NewNote,
    /// The time now, local.
    pub now: DateTime,
}

/// What opening a periodic note, or making a note from a template, did.
#[derive(Debug, Clone, Serialize)]
pub struct Opened {
    /// The note.
    pub note: NoteSummary,
    /// Its notebook's path.
    pub notebook_path: String,
    /// Whether it was made now (`false`: it was there already).
    pub created: bool,
    /// What of the template was left as written.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// The first day of `day`'s period: the day itself, or its week's first day (Monday for ISO week formats, `W`/`G`,
/// otherwise Sunday, as Moment's English locale).
pub fn period_start(period: Period, day: Date, format: &str) -> Date {
    match period {
        Period::Day => day,
        Period::Week if moment::iso_weeks(format) => {
            let back = i64::from(day.weekday().since(Weekday::Monday));
            day.checked_sub(back.days()).unwrap_or(day)
        }
        Period::Week => moment::week_start(day),
    }
}

/// Where the periodic note of a day is: its notebook path and title, from its settings (the format's `/` put it in
/// notebooks below). An importer of another app's journals files them here too, so `quire today` finds them.
pub fn periodic_place(period: Period, day: Date, settings: &PeriodicSettings) -> Result<(String, String)> {
    let start = period_start(period, day, &settings.format);
    let formatted = moment::format(start.to_datetime(jiff::civil::Time::midnight()), &settings.format);
    let mut parts: Vec<&str> = formatted.split('/').filter(|s| !s.trim().is_empty()).collect();
    let title = parts
        .pop()
        .ok_or_else(|| Error::invalid(format!("the format {:?} makes no title", settings.format)))?
        .trim()
        .to_owned();
    let path = std::iter::once(settings.notebook.as_str())
        .chain(parts)
        .collect::<Vec<_>>()
        .join("/");
    if path
        .split('/')
        .chain([title.as_str()])
        .any(|part| matches!(part.trim(), "." | ".."))
    {
        return Err(Error::invalid(format!(
            "the notebook {:?} and format {:?} make a path with \".\" or \"..\" in it: name the notebooks instead",
            settings.notebook, settings.format
        )));
    }
    Ok((path, title))
}

impl Writer<'_> {
    /// Opens the note of `p`'s day or week, creating it (and its notebooks) from its template when there is none.
    pub fn open_periodic_note(&mut self, p: &PeriodicNote) -> Result<Opened> {
        let start = period_start(p.period, p.day, &p.settings.format);
        let (path, title) = periodic_place(p.period, p.day, &p.settings)?;
        let notebook = if crate::read::path_parts(&path).is_empty() {
            self.default_notebook()?
        } else {
            self.create_notebook_path(Some(ROOT_NOTEBOOK_ID), &path)?.notebook.id
        };
        let existing = self
            .notes_named(&title)?
            .into_iter()
            .find(|n| n.notebook_id == notebook && n.title.eq_ignore_ascii_case(&title));
        if let Some(note) = existing {
            return self.opened(note, false, Vec::new());
        }
        let body = match &p.settings.template {
            Some(name) => self.template_body(name, &p.templates_notebook)?,
            None => String::new(),
        };
        let vars = TemplateVars {
            day: start,
            now: p.now,
            title: title.clone(),
            title_format: Some(p.settings.format.rsplit('/').next().unwrap_or("").to_owned()),
            folder: self.notebook_path_text(&notebook)?,
        };
        let note = NewNote {
            notebook_id: Some(notebook),
            ..NewNote::new(title, "")
        };
        self.made_from(&body, &vars, note)
    }

    /// Makes a note from a template, its variables filled in for today.
    pub fn create_from_template(&mut self, t: &FromTemplate) -> Result<Opened> {
        let body = self.template_body(&t.template, &t.templates_notebook)?;
        let notebook = match &t.note.notebook_id {
            Some(id) => id.clone(),
            None => self.default_notebook()?,
        };
        let vars = TemplateVars {
            day: t.now.date(),
            now: t.now,
            title: t.note.title.clone(),
            title_format: None,
            folder: self.notebook_path_text(&notebook)?,
        };
        let note = NewNote {
            notebook_id: Some(notebook),
            ..t.note.clone()
        };
        self.made_from(&body, &vars, note)
    }

    /// Creates `note` with `template` filled in as its body.
    fn made_from(&mut self, template: &str, vars: &TemplateVars, note: NewNote) -> Result<Opened> {
        let rendered = template::render(template, vars);
        let id = self.reserve_id()?;
        self.create_note_as(
            &id,
            NewNote {
                body: rendered.body,
                ..note
            },
        )?;
        let summary = self.note_summary(&id)?;
        self.opened(summary, true, rendered.warnings)
    }

    fn opened(&self, note: NoteSummary, created: bool, warnings: Vec<String>) -> Result<Opened> {
        let notebook_path = self.notebook_path_text(&note.notebook_id)?;
        Ok(Opened {
            note,
            notebook_path,
            created,
            warnings,
        })
    }

    fn template_body(&self, name: &str, templates_notebook: &str) -> Result<String> {
        let id = self.find_template(name, templates_notebook)?.id;
        Ok(self.note(&id)?.body)
    }
}

impl crate::read::Reader<'_> {
    /// The template `name` means: a note's id, or its title or `Notebook/Title` path; when a title names several
    /// notes, the one in `templates_notebook` (or below it).
    pub fn find_template(&self, name: &str, templates_notebook: &str) -> Result<NoteSummary> {
        if let Ok(note) = self.note_summary(name)
            && note.deleted.is_none()
        {
            return Ok(note);
        }
        let mut found = self.notes_named(name)?;
        if found.is_empty() {
            found = self.notes_named(&format!("{templates_notebook}/{name}"))?;
        }
        if found.len() > 1
            && let Some(templates) = self.find_notebook(templates_notebook)?
        {
            let below: Vec<String> = self
                .notebooks()?
                .into_iter()
                .filter(|nb| nb.id == templates.id || self.is_below(&nb.id, &templates.id))
                .map(|nb| nb.id)
                .collect();
            let inside: Vec<NoteSummary> = found
                .iter()
                .filter(|n| below.contains(&n.notebook_id))
                .cloned()
                .collect();
            // None of them among the templates: all of them stay, and the error names them.
            if !inside.is_empty() {
                found = inside;
            }
        }
        match found.len() {
            1 => Ok(found.remove(0)),
            0 => Err(Error::invalid(format!(
                "no note is named \"{name}\": a template is a note, found by its id, title or Notebook/Title path \
                 (quire looks in {templates_notebook} first)"
            ))),
            n => Err(Error::invalid(format!(
                "{n} notes are named \"{name}\": give the template's id ({})",
                found.iter().map(|n| n.id.as_str()).collect::<Vec<_>>().join(", ")
            ))),
        }
    }

    fn is_below(&self, id: &str, ancestor: &str) -> bool {
        let Ok(notebooks) = self.notebooks() else {
            return false;
        };
        let mut at = Some(id.to_owned());
        for _ in 0..notebooks.len() {
            let Some(current) = at else { return false };
            let parent = notebooks
                .iter()
                .find(|nb| nb.id == current)
                .and_then(|nb| nb.parent_id.clone());
            if parent.as_deref() == Some(ancestor) {
                return true;
            }
            at = parent;
        }
        false
    }
}
