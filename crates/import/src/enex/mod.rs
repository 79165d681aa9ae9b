//! Importing an Evernote export (ENEX): an XML file of notes, each with its ENML content and its resources.
//!
//! The file is read as a stream, a note at a time, so a large export does not sit in memory whole. Each note's ENML
//! (XHTML with Evernote's own elements) becomes Markdown through htmd: `<en-media>` becomes an image or a link to
//! the resource with that MD5 hash, `<en-todo>` a task-list checkbox, `<en-crypt>` a line saying what was left out.
//! Resources are decoded from base64 into a temporary folder as they are read and become attachments of their
//! notes (linked from the text or not). No element's text is held in memory whole: the reader's own events would
//! hold a text of any size, so after each piece of markup the text is read straight from the file, a resource's
//! decoded into its file, a note's content kept up to [`MAX_CONTENT`], anything else up to 64 KiB or not at all.
//! Tags and times are kept; a note with a reminder is a to-do, completed when the reminder was done (as Joplin reads
//! them). The notes go into a notebook named after the file, as Evernote exports one notebook per file.

mod enml;
mod links;
mod note;
mod resource;
mod stream;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use quick_xml::events::Event;

use enml::NoteLink;
pub(crate) use enml::{converter, dom, html_to_markdown, rich_html_to_markdown, strip_tags};
use note::{MAX_CONTENT, RawNote, RawTask, finish};
use resource::{RawResource, ResourceFile, store};
use stream::{Gathered, LookAhead, Sink, read_text};

use crate::frontmatter::FrontMatter;
use crate::source::Source;
use crate::{Error, Outcome};

/// Reads an ENEX file, or a folder of them (Evernote exports a notebook a file): a notebook each, named after its
/// file, and links between notes resolved across all of them.
pub(crate) fn read(source: &Path) -> Result<Source, Error> {
    let path = source.canonicalize().map_err(|e| Error::Source {
        path: source.display().to_string(),
        reason: e.to_string(),
    })?;
    let many = path.is_dir();
    let files: Vec<PathBuf> = if many {
        let mut files: Vec<PathBuf> = std::fs::read_dir(&path)
            .map_err(|e| Error::Source {
                path: source.display().to_string(),
                reason: e.to_string(),
            })?
            .filter_map(|entry| entry.ok().map(|e| e.path()))
            .filter(|p| is_enex(p) && p.is_file())
            .collect();
        files.sort();
        files
    } else {
        vec![path.clone()]
    };
    if files.is_empty() {
        return Err(Error::Source {
            path: source.display().to_string(),
            reason: "it holds no .enex file".into(),
        });
    }
    let mut out = Source::unpacked(path.display().to_string(), "quire-enex-")?;
    if many {
        // Other files beside the .enex files (a README) are said, not silently passed over.
        let mut others: Vec<String> = std::fs::read_dir(&path)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()) && !is_enex(&e.path()))
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        others.sort();
        for name in others {
            out.fail(
                name,
                Outcome::Skipped,
                "not an Evernote export (.enex): left out; import it on its own",
            );
        }
    }
    let mut note_links = Vec::new();
    for (i, file) in files.iter().enumerate() {
        // Its notebook's key is a folder name no title can make; a note's key starts with its file's name when a
        // folder holds several (the same creation time may come up in two notebooks).
        let (folder, prefix) = if many {
            let name = file
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            (format!("enex-{}", i + 1), format!("{name}/"))
        } else {
            ("enex".to_owned(), String::new())
        };
        let stem = file
            .file_stem()
            .map(|s| s.to_string_lossy().trim().to_owned())
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "Evernote".into());
        std::fs::create_dir(out.root.join(&folder)).map_err(|e| Error::Io {
            context: "cannot make a folder for the export's attachments".into(),
            source: e,
        })?;
        out.notebooks.insert(
            folder.clone(),
            FrontMatter {
                title: Some(stem),
                ..FrontMatter::default()
            },
        );
        out.folders.push(folder.clone());
        match read_file(file, &mut out, &folder, &prefix, &mut note_links) {
            Ok(()) => {}
            // In a folder, a file that is no export is reported and the others are read.
            Err(e) if many => {
                out.notebooks.remove(&folder);
                out.folders.retain(|f| f != &folder);
                out.fail(file.display().to_string(), Outcome::Failed, e.to_string());
            }
            Err(e) => return Err(e),
        }
    }
    links::resolve(&mut out, note_links)?;
    Ok(out)
}

/// Whether a path names an ENEX file.
pub(crate) fn is_enex(path: &Path) -> bool {
    path.extension().is_some_and(|e| e.eq_ignore_ascii_case("enex"))
}

/// Reads one ENEX file into `out`, its notes into the notebook of `folder`, their keys starting with `prefix`;
/// their links to other Evernote notes go into `note_links`.
fn read_file(
    source: &Path,
    out: &mut Source,
    folder: &str,
    prefix: &str,
    note_links: &mut Vec<(usize, Vec<NoteLink>)>,
) -> Result<(), Error> {
    let file = std::fs::File::open(source).map_err(|e| Error::Source {
        path: source.display().to_string(),
        reason: e.to_string(),
    })?;
    let converter = converter();

    let mut reader = quick_xml::Reader::from_reader(LookAhead::new(file));
    reader.config_mut().allow_dangling_amp = true;
    reader.config_mut().check_end_names = false;
    let mut buf = Vec::new();
    // Element names from the top; the text of the innermost element of interest is gathered.
    let mut path: Vec<String> = Vec::new();
    let mut note: Option<RawNote> = None;
    let mut text = Gathered::default();
    let mut seen_export = false;
    let mut count = 0usize;
    let mut keys: HashMap<String, usize> = HashMap::new();
    let mut owners = resource::Owners::new();
    // After damage in the middle of the file: the reading skips to the next `<note>` (where it was, and how often).
    let mut skipping = false;
    let mut damage: Vec<u64> = Vec::new();
    loop {
        let read = match reader.read_event_into(&mut buf) {
            // The reader keeps its own list of open elements even when told not to check end names: once the
            // file's tags are unbalanced, it refuses an end tag it has no start for. That is judged here instead.
            Err(quick_xml::Error::IllFormed(quick_xml::errors::IllFormedError::UnmatchedEndTag(name))) => {
                Ok(Event::End(quick_xml::events::BytesEnd::new(name)))
            }
            other => other,
        };
        let read = match read {
            // The names of open elements are checked here rather than by the reader, whose own list of them would
            // be wrong after a skip.
            Ok(Event::End(e)) if !skipping && path.last().is_some_and(|p| p.as_str() != e.name().as_ref()) => {
                let got = e.name().as_ref().to_owned();
                let expected = path.last().cloned().unwrap_or_default();
                match note.as_mut().filter(|_| misspelt(&got, &expected)) {
                    // A closing tag one or two letters off (`</note-attributesv>`): read as the one expected.
                    Some(open) => {
                        open.repaired.push(format!(
                            "the export's closing tag </{got}> was read as </{expected}>, which it misspells"
                        ));
                        Ok(Event::End(quick_xml::events::BytesEnd::new(expected)))
                    }
                    None => Err(format!("</{got}> where </{expected}> was expected")),
                }
            }
            Ok(event) => Ok(event),
            // A syntax error is something left unclosed (a tag, a comment, CDATA) until the end of the file.
            Err(e @ quick_xml::Error::Syntax(_)) => {
                out.fail(
                    source.display().to_string(),
                    Outcome::Failed,
                    format!(
                        "the file is damaged or cut short after {count} notes, nothing after was read: {e} \
                         (at byte {})",
                        reader.buffer_position()
                    ),
                );
                break;
            }
            Err(e) => Err(e.to_string()),
        };
        let event = match read {
            Ok(event) => Some(event),
            Err(e) => {
                let at = reader.buffer_position();
                // The same place twice, or damage everywhere: the rest cannot be read.
                if damage.last() == Some(&at) || damage.len() >= MAX_DAMAGE {
                    out.fail(
                        source.display().to_string(),
                        Outcome::Failed,
                        format!(
                            "the file is damaged or cut short after {count} notes, nothing after was read: {e} \
                             (at byte {at})"
                        ),
                    );
                    break;
                }
                damage.push(at);
                // Damage met while skipping belongs to the note already reported.
                if !skipping {
                    let title = note.take().map(|n| n.title.trim().to_owned()).unwrap_or_default();
                    let lost = if title.is_empty() {
                        String::new()
                    } else {
                        format!(" “{title}”")
                    };
                    out.fail(
                        source.display().to_string(),
                        Outcome::Failed,
                        format!(
                            "the file is damaged in note {} ({e}, at byte {at}): that note{lost} is not imported; \
                             reading went on at the next note",
                            count + 1
                        ),
                    );
                }
                skipping = true;
                path.clear();
                None
            }
        };
        if skipping && let Some(event) = &event {
            // Only a note's start ends the skip; the notes that follow are read as usual.
            match event {
                Event::Start(e) if e.name().as_ref() == "note" => {
                    skipping = false;
                    path = vec!["en-export".to_owned()];
                    text.clear();
                }
                Event::Eof => break,
                _ => {}
            }
        }
        match event.filter(|_| !skipping) {
            None => {}
            Some(event) => match event {
                Event::Start(e) => {
                    let name = e.name().as_ref().to_owned();
                    if name == "en-export" {
                        seen_export = true;
                    }
                    if name == "note" && path.last().is_some_and(|p| p == "en-export") {
                        note = Some(RawNote::default());
                    }
                    if name == "task"
                        && path.last().is_some_and(|p| p == "note")
                        && let Some(n) = note.as_mut()
                    {
                        n.tasks.push(RawTask::default());
                    }
                    if name == "resource"
                        && let Some(n) = note.as_mut()
                    {
                        n.resource = Some(RawResource::default());
                    }
                    if name == "data" {
                        start_data(note.as_mut(), &path, &out.root.join(folder));
                    }
                    path.push(name);
                    text.clear();
                }
                Event::Empty(e) => {
                    text.clear();
                    // `<data/>`: a resource of no bytes (a zero-byte file), as `<data></data>` is.
                    if e.name().as_ref() == "data" {
                        start_data(note.as_mut(), &path, &out.root.join(folder));
                    }
                }
                Event::End(_) => {
                    let name = path.pop().unwrap_or_default();
                    let parent = path.last().map_or("", String::as_str);
                    if parent == "en-export" && name == "note" {
                        if let Some(done) = note.take() {
                            count += 1;
                            let links = finish(done, count, folder, prefix, &converter, &mut keys, out);
                            if !links.is_empty()
                                && let Some(at) = out.notes.len().checked_sub(1)
                            {
                                note_links.push((at, links));
                            }
                        }
                    } else if let Some(n) = note.as_mut() {
                        let over = text.over;
                        let value = text.take();
                        match (parent, name.as_str()) {
                            ("note", "title") => n.title = value,
                            ("note", "content") => {
                                n.content_too_long |= over;
                                if !over {
                                    n.content = value;
                                }
                            }
                            ("note", "created") => n.created = value,
                            ("note", "updated") => n.updated = value,
                            ("note", "tag") => n.tags.push(value.trim().to_owned()),
                            ("note-attributes", "author") => n.author = value,
                            ("note-attributes", "source-url") => n.source_url = value,
                            ("note-attributes", "reminder-time") => n.reminder_time = value,
                            ("note-attributes", "reminder-done-time") => n.reminder_done = value,
                            ("note-attributes", "latitude") => n.latitude = value,
                            ("note-attributes", "longitude") => n.longitude = value,
                            ("note-attributes", "altitude") => n.altitude = value,
                            ("note-attributes", "place-name") => n.place = value,
                            ("reminder", "reminderDate") if path.iter().any(|p| p == "task") => {
                                if let Some(task) = n.tasks.last_mut()
                                    && task.reminder.is_empty()
                                {
                                    task.reminder = value;
                                }
                            }
                            ("task", field) => {
                                if let Some(task) = n.tasks.last_mut() {
                                    match field {
                                        "title" => task.title = value,
                                        "taskStatus" => task.status = value,
                                        "taskGroupNoteLevelID" => task.group = value,
                                        "sortWeight" => task.sort = value,
                                        "dueDate" => task.due = value,
                                        "dueDateUIOption" => task.due_option = value,
                                        "taskFlag" => task.flag = value,
                                        "timeZone" => task.time_zone = value,
                                        _ => {}
                                    }
                                }
                            }
                            ("resource", "mime") => {
                                if let Some(r) = n.resource.as_mut() {
                                    r.mime = value.trim().to_owned();
                                }
                            }
                            ("resource-attributes", "file-name") => {
                                if let Some(r) = n.resource.as_mut() {
                                    r.file_name = value.trim().to_owned();
                                }
                            }
                            ("resource", "recognition") => {
                                if let Some(r) = n.resource.as_mut() {
                                    r.recognition_id = recognition_id(&value);
                                }
                            }
                            ("note", "resource") => {
                                if let Some(r) = n.resource.take() {
                                    let number = n.resources.len() + 1;
                                    n.resources
                                        .push(store(r, number, (folder, count + 1), &mut owners, out));
                                }
                            }
                            _ => {}
                        }
                    }
                }
                Event::Eof => {
                    // Elements still open: the file ends in the middle of one (the note being read is lost).
                    if !path.is_empty() && seen_export {
                        out.fail(
                            source.display().to_string(),
                            Outcome::Failed,
                            format!(
                                "the file is damaged or cut short after {count} notes (it ends inside <{}>): \
                             the note it was reading is not imported",
                                path.last().map_or("", String::as_str)
                            ),
                        );
                    }
                    break;
                }
                // Text reaches the reader only before the first element; after that it is read below.
                _ => {}
            },
        }
        buf.clear();
        let note_open = note.is_some();
        // The text after each piece of markup is read here, straight from the file, keeping what the element it
        // belongs to may hold: the reader's own events would hold a text of any size in memory whole.
        let resource = note
            .as_mut()
            .and_then(|n| n.resource.as_mut())
            .and_then(|r| r.data.as_mut());
        let mut sink = match (text_limit(&path, note_open), resource) {
            (Field::Base64, Some(file)) => Sink::Base64(file),
            (Field::Text(max), _) => Sink::Text(&mut text, max),
            _ => Sink::Skip,
        };
        if let Err(e) = read_text(&mut reader, &mut sink) {
            out.fail(
                source.display().to_string(),
                Outcome::Failed,
                format!("the file could not be read after {count} notes, nothing after was read: {e}"),
            );
            break;
        }
    }
    if !seen_export {
        return Err(Error::Source {
            path: source.display().to_string(),
            reason: "not an Evernote export: it has no <en-export> element".into(),
        });
    }
    Ok(())
}

/// The most places a file may be damaged in before its reading stops.
const MAX_DAMAGE: usize = 100;

/// The most text kept of a note's other fields (title, times, tags, attributes): more is read through.
const MAX_FIELD: usize = 64 * 1024;

/// How the text of the element at the end of `path` is read: nothing is kept outside a note or of an element quire
/// does not use (its text is read through, never held).
fn text_limit(path: &[String], in_note: bool) -> Field {
    let [.., parent, name] = path else {
        return Field::Skip;
    };
    if !in_note {
        return Field::Skip;
    }
    match (parent.as_str(), name.as_str()) {
        ("resource", "data") => Field::Base64,
        ("note", "content") => Field::Text(MAX_CONTENT),
        ("note", "title" | "created" | "updated" | "tag")
        | (
            "note-attributes",
            "author" | "source-url" | "reminder-time" | "reminder-done-time" | "latitude" | "longitude" | "altitude"
            | "place-name",
        )
        | (
            "task",
            "title"
            | "taskStatus"
            | "taskGroupNoteLevelID"
            | "sortWeight"
            | "dueDate"
            | "dueDateUIOption"
            | "timeZone"
            | "taskFlag",
        )
        | ("reminder", "reminderDate")
        | ("resource", "mime")
        | ("resource-attributes", "file-name") => Field::Text(MAX_FIELD),
        // Its recognition index (OCR data, up to a page's worth), for the `objID` it opens with.
        ("resource", "recognition") => Field::Text(1 << 20),
        _ => Field::Skip,
    }
}

/// What an element's text is.
#[derive(Clone, Copy)]
enum Field {
    /// Not used.
    Skip,
    /// Text kept up to this many bytes as written.
    Text(usize),
    /// A resource's base64.
    Base64,
}

/// A `<data>` of the resource being read starts (`<data/>` too: a zero-byte file): its decoded bytes go to a file of
/// `dir`, the note's part of the temporary folder.
fn start_data(note: Option<&mut RawNote>, path: &[String], dir: &Path) {
    if path.last().is_some_and(|p| p == "resource")
        && let Some(n) = note
        && let Some(r) = n.resource.as_mut()
        && r.data.is_none()
    {
        let part = dir.join(format!("resource-{}.part", n.resources.len() + 1));
        r.data = Some(ResourceFile::create(part));
    }
}

/// Whether `got` is `expected` misspelt: at most two letters added, dropped or changed (and not a short name,
/// where two letters make another).
fn misspelt(got: &str, expected: &str) -> bool {
    expected.len() >= 6 && links::distance(got, expected) <= 2
}

/// The `objID` a resource's recognition index opens with (`<recoIndex ... objID="a4f3...">`): 32 hex digits.
fn recognition_id(index: &str) -> Option<String> {
    let at = index.find("objID=\"")? + "objID=\"".len();
    let id = &index[at..at + index[at..].find('"')?];
    (id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit())).then(|| id.to_ascii_lowercase())
}
