//! Printing results: readable text by default, one JSON document with `--json`.

use std::collections::HashMap;
use std::io::Write;

use quire_core::{
    Actor, Attribute, AttributeKind, Error, Note, Notebook, PageOf, ROOT_NOTEBOOK_ID, SearchHit, Workspace,
};
use quire_tools::builtin::ReadNote;
use quire_tools::notes::{list_notes, read_note};
use quire_tools::types::NoteInfo;
use serde_json::json;

use crate::unlock::Unlocker;

pub(crate) struct Output {
    pub(crate) json: bool,
}

impl Output {
    fn print(&self, text: &str) -> anyhow::Result<()> {
        let mut stdout = std::io::stdout().lock();
        match stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush()) {
            // A closed pipe (`quire search x | head`) is not an error worth reporting.
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
            other => Ok(other?),
        }
    }

    fn print_json(&self, value: &impl serde::Serialize) -> anyhow::Result<()> {
        self.print(&format!("{}\n", serde_json::to_string_pretty(value)?))
    }
}

/// Prints a note as `read_note` describes it, with the user's view: the `--json` of the app's commands is the
/// tools' shape (README: "a note is described with the same field names everywhere"). A sealed note asks for the
/// passphrase.
pub(crate) fn print_note_json(ws: &Workspace, keys: &Unlocker, id: &str) -> anyhow::Result<()> {
    json_value(&keys.tool::<ReadNote>(ws, id, || read_note_input(id))?)
}

/// [`print_note_json`] after a command changed the note (added, protected, moved it): it never asks for the
/// passphrase. A sealed note is printed without its text then: its `NoteInfo` fields and `"locked": true`, as the
/// web app marks it.
pub(crate) fn print_changed_note_json(ws: &Workspace, keys: &Unlocker, id: &str) -> anyhow::Result<()> {
    json_value(&changed_note_json(ws, keys, id)?)
}

/// A note opened or made by `quire today` or from a template: the note as `note show` prints it, after a line
/// saying it was made; what of its template was left as written goes to standard error. With --json, the note's
/// document with `made` (whether it was made now) and `warnings`.
pub(crate) fn print_opened(
    out: &Output,
    ws: &Workspace,
    keys: &Unlocker,
    opened: &quire_core::Opened,
) -> anyhow::Result<()> {
    for warning in &opened.warnings {
        eprintln!("template: {warning}");
    }
    if out.json {
        let mut value = changed_note_json(ws, keys, &opened.note.id)?;
        // Not `created`: that is the note's creation time.
        value["made"] = json!(opened.created);
        value["warnings"] = json!(opened.warnings);
        return json_value(&value);
    }
    if opened.created {
        note_added(out, &opened.note, &opened.notebook_path)?;
    }
    let (note, attributes) = keys.read(ws, |r| Ok((r.note(&opened.note.id)?, r.attributes(&opened.note.id)?)))?;
    self::note(out, &note, &opened.notebook_path, &attributes)
}

fn changed_note_json(ws: &Workspace, keys: &Unlocker, id: &str) -> anyhow::Result<serde_json::Value> {
    if let Some(note) = keys.tool_if_open::<ReadNote>(ws, read_note_input(id))? {
        return Ok(serde_json::to_value(note)?);
    }
    let (summary, path) = ws.read(&Actor::User, |r| {
        let summary = r.note_summary(id)?;
        let path = r.notebook_path_text(&summary.notebook_id)?;
        Ok::<_, Error>((summary, path))
    })?;
    let mut value = serde_json::to_value(NoteInfo::whole(&summary, path))?;
    value["locked"] = json!(true);
    Ok(value)
}

fn read_note_input(id: &str) -> read_note::Input {
    read_note::Input {
        note_id: id.to_owned(),
        max_chars: Some(100_000),
        ..Default::default()
    }
}

/// A notebook path as printed: quire-core's text (`Work/Projects`), or `(top level)` for the top level.
pub(crate) fn shown_path(path: String) -> String {
    if path.is_empty() {
        "(top level)".to_owned()
    } else {
        path
    }
}

/// A word as a POSIX shell reads it back: as it is when it holds only safe characters, single-quoted otherwise, so a
/// command printed as a hint can be pasted.
pub(crate) fn shell_word(word: &str) -> String {
    let safe = |c: char| c.is_alphanumeric() || "/._-+:@%,".contains(c);
    if !word.is_empty() && word.chars().all(safe) {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

pub(crate) fn status(out: &Output, ws: &Workspace) -> anyhow::Result<()> {
    let (notes, notebooks, tags) = ws.read(&Actor::User, |r| {
        let counts = r.notebook_note_counts()?;
        Ok::<_, Error>((counts.values().sum::<u64>(), r.notebooks()?.len() - 1, r.tags()?.len()))
    })?;
    let path = ws.path().map(|p| p.display().to_string()).unwrap_or_default();
    if out.json {
        return out.print_json(&json!({ "workspace": path, "notes": notes, "notebooks": notebooks, "tags": tags }));
    }
    out.print(&format!(
        "quire workspace {path}\n{}, {}, {}\n\n\
         Try: quire note list | quire search WORDS | quire note add --title T --body B | quire --help\n",
        plural(notes, "note"),
        plural(notebooks as u64, "notebook"),
        plural(tags as u64, "tag")
    ))
}

pub(crate) fn note_added(out: &Output, note: &quire_core::NoteSummary, path: &str) -> anyhow::Result<()> {
    let sealed = if note.is_protected {
        " (protected, like the notebook)"
    } else {
        ""
    };
    out.print(&format!(
        "Added note {} \"{}\" in {}{sealed}\n",
        note.id,
        note.title,
        shown_path(path.to_owned())
    ))
}

pub(crate) fn note(out: &Output, note: &Note, path: &str, attributes: &[Attribute]) -> anyhow::Result<()> {
    let s = &note.summary;
    let mut text = format!("# {}\n", s.title);
    text.push_str(&format!("id: {}\nnotebook: {}\n", s.id, shown_path(path.to_owned())));
    if !s.tags.is_empty() {
        text.push_str(&format!("tags: {}\n", s.tags.join(", ")));
    }
    // Labels (an import's properties: Notion's columns, Keep's colour) and relations, each on a line (found in use:
    // only `quire query` showed them).
    for a in attributes {
        let (kind, arrow) = if a.kind == AttributeKind::Relation {
            ("relation", " →")
        } else {
            ("label", ":")
        };
        text.push_str(&format!("{kind} {}{arrow} {}\n", a.name, a.value));
    }
    if s.is_todo {
        let state = s.todo_completed.map_or("open".to_owned(), |t| format!("completed {t}"));
        text.push_str(&format!("to-do: {state}\n"));
    }
    if s.is_protected {
        text.push_str("protected: yes\n");
    }
    if let Some(deleted) = s.deleted {
        text.push_str(&format!("in the trash since {deleted}\n"));
    }
    text.push_str(&format!(
        "created: {}  updated: {}\n\n{}",
        s.created, s.updated, note.body
    ));
    if !note.body.ends_with('\n') {
        text.push('\n');
    }
    out.print(&text)
}

pub(crate) fn notebook_tree(out: &Output, notebooks: &[Notebook], counts: &HashMap<String, u64>) -> anyhow::Result<()> {
    let mut children: HashMap<&str, Vec<&Notebook>> = HashMap::new();
    for nb in notebooks {
        if let Some(parent) = &nb.parent_id {
            children.entry(parent.as_str()).or_default().push(nb);
        }
    }
    let mut rows = Vec::new();
    walk(ROOT_NOTEBOOK_ID, 0, &children, &mut rows);
    let count = |id: &str| counts.get(id).copied().unwrap_or(0);
    // As the web app's tree counts them too: a notebook's own notes, and with the notebooks inside it.
    fn with_inside(id: &str, children: &HashMap<&str, Vec<&Notebook>>, count: &dyn Fn(&str) -> u64) -> u64 {
        let inside: u64 = children
            .get(id)
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .map(|child| with_inside(&child.id, children, count))
            .sum();
        count(id) + inside
    }
    let mut text = format!("(top level): {}\n", plural(count(ROOT_NOTEBOOK_ID), "note"));
    for (nb, depth) in &rows {
        let icon = nb.icon.as_deref().map(|i| format!("{i} ")).unwrap_or_default();
        let lock = if nb.is_protected { " [protected]" } else { "" };
        let own = count(&nb.id);
        let all = with_inside(&nb.id, &children, &count);
        let inside = if all == own {
            String::new()
        } else {
            format!(", {all} with the notebooks inside")
        };
        text.push_str(&format!(
            "{}{icon}{}{lock}: {}{inside}  ({})\n",
            "  ".repeat(*depth),
            nb.title,
            plural(own, "note"),
            nb.id
        ));
    }
    out.print(&text)
}

fn walk<'a>(
    id: &str,
    depth: usize,
    children: &HashMap<&str, Vec<&'a Notebook>>,
    rows: &mut Vec<(&'a Notebook, usize)>,
) {
    for child in children.get(id).map(Vec::as_slice).unwrap_or_default() {
        rows.push((child, depth));
        walk(&child.id, depth + 1, children, rows);
    }
}

/// Search hits as text, each with its notebook's path as in `note list` (`[Work/Projects]`, from core's tree).
pub(crate) fn search_results(
    out: &Output,
    results: &PageOf<SearchHit>,
    notebooks: &quire_core::NotebookTree,
) -> anyhow::Result<()> {
    let shown = results.items.len() as u64;
    let mut text = match (results.total, shown) {
        (0, _) => "No notes match.\n".to_owned(),
        (total, 0) => format!(
            "{} {}; none on this page (offset {}).\n",
            plural(total, "note"),
            if total == 1 { "matches" } else { "match" },
            results.offset
        ),
        (total, shown) => format!(
            "{} {} (showing {}-{}{})\n",
            plural(total, "note"),
            if total == 1 { "matches" } else { "match" },
            results.offset + 1,
            results.offset + shown,
            if results.has_more {
                "; use --offset for more"
            } else {
                ""
            }
        ),
    };
    for hit in &results.items {
        let n = &hit.note;
        let notebook = notebooks.path(&n.notebook_id);
        let tags: String = n.tags.iter().map(|t| format!(" #{t}")).collect();
        let place = if notebook.is_empty() {
            String::new()
        } else {
            format!("  [{notebook}]")
        };
        text.push_str(&format!("\n{}  {}{place}{tags}\n", n.id, n.title));
        let snippet = highlight(&hit.snippet.split_whitespace().collect::<Vec<_>>().join(" "));
        if !snippet.is_empty() {
            text.push_str(&format!("    {snippet}\n"));
        }
        if let Some(file) = &hit.found_in {
            text.push_str(&format!(
                "    in {}, page {} of {} (attachment {})\n",
                file.title, file.page, file.pages, file.attachment_id
            ));
        }
    }
    out.print(&text)
}

/// Shows search matches in bold on a terminal, and as plain text when the output goes elsewhere.
fn highlight(snippet: &str) -> String {
    use std::io::IsTerminal;
    let (open, close) = if std::io::stdout().is_terminal() {
        ("\x1b[1m", "\x1b[0m")
    } else {
        ("", "")
    };
    snippet.replace("<mark>", open).replace("</mark>", close)
}

pub(crate) fn json_value(value: &impl serde::Serialize) -> anyhow::Result<()> {
    Output { json: true }.print_json(value)
}

pub(crate) fn tool_list(out: &Output, tools: &[quire_tools::ToolInfo]) -> anyhow::Result<()> {
    if out.json {
        return out.print_json(&serde_json::to_value(tools)?);
    }
    let width = tools.iter().map(|t| t.name.len()).max().unwrap_or(0);
    let mut text = String::new();
    for t in tools {
        text.push_str(&format!("{:<width$}  {:<11}  {}\n", t.name, t.effect.as_str(), t.title));
    }
    text.push_str(&format!(
        "\n{} tools. Call one with: quire tools call NAME '{{\"arg\": \"value\"}}'\n",
        tools.len()
    ));
    out.print(&text)
}

/// A note's protection after `quire note protect` or `unprotect`; `sealing`: a passphrase is set, so protected
/// means sealed.
pub(crate) fn protection(out: &Output, note: &quire_core::NoteSummary, sealing: bool) -> anyhow::Result<()> {
    let what = format!("Note {} \"{}\"", note.id, note.title);
    out.print(&format!("{}\n", protection_sentence(&what, note.is_protected, sealing)))
}

/// `X is protected and sealed: ...`, or what protection does before `quire lock init`, or `X is not protected`.
fn protection_sentence(what: &str, protected: bool, sealing: bool) -> String {
    match (protected, sealing) {
        (true, true) => format!(
            "{what} is protected and sealed: AI tools see its title only, and its text opens only with the passphrase."
        ),
        (true, false) => format!(
            "{what} is protected: AI tools see its title only. Its text is not encrypted until a passphrase is set: \
             `quire lock init` seals every protected note."
        ),
        (false, _) => format!("{what} is not protected."),
    }
}

/// A page of `list_notes` output as lines of text. `top_level`: the list of the top notebook (no notebook, tag
/// or trash asked for), whose notes are often all in notebooks below it.
pub(crate) fn note_list(out: &Output, listed: &list_notes::Output, top_level: bool) -> anyhow::Result<()> {
    let page = &listed.page;
    let offset = page.offset;
    let mut text = match (page.total, page.items.len()) {
        (0, _) if top_level => "No notes at the top level. `quire notebook list` shows the notebooks; \
                                `quire note list --notebook NAME` lists the notes of one.\n"
            .to_owned(),
        (0, _) => "No notes.\n".to_owned(),
        (total, 0) => format!("{}; none on this page (offset {offset}).\n", plural(total, "note")),
        (total, shown) => format!(
            "{} (showing {}-{}{})\n",
            plural(total, "note"),
            offset + 1,
            offset + shown as u64,
            if page.has_more { "; use --offset for more" } else { "" }
        ),
    };
    for note in &page.items {
        let tags: String = note.tags.iter().map(|t| format!(" #{t}")).collect();
        let place = if note.notebook_path.is_empty() {
            String::new()
        } else {
            format!("  [{}]", note.notebook_path)
        };
        let marks = [
            note.is_todo.then_some(if note.todo_completed.is_some() {
                " [done]"
            } else {
                " [to-do]"
            }),
            note.is_protected.then_some(" [protected]"),
            note.in_trash.then_some(" [trash]"),
        ];
        let marks: String = marks.into_iter().flatten().collect();
        text.push_str(&format!("{}  {}{place}{tags}{marks}\n", note.note_id, note.title));
    }
    out.print(&text)
}

/// `1 note`, `2 notes`.
/// The line `quire chat` prints after a turn: the turn's tokens (cached ones, and cache writes, when the provider
/// reported any), its estimated cost when the model has prices, and the chat's totals.
pub(crate) fn turn_usage(usage: &quire_agent::Usage, cost: Option<f64>, chat: &quire_agent::ChatTotals) -> String {
    let mut line = format!("This turn: {}", tokens(usage));
    if let Some(cost) = cost {
        line.push_str(&format!(", est. cost {}", money(cost)));
    }
    format!("{line} · {}", chat_usage(chat))
}

/// A chat's totals, as `quire chat` shows them after each turn and when it opens a stored chat.
pub(crate) fn chat_usage(chat: &quire_agent::ChatTotals) -> String {
    let mut line = format!("This chat: {}, {}", plural(chat.turns, "turn"), tokens(&chat.usage));
    if let Some(cost) = chat.cost {
        line.push_str(&format!(", est. cost {}", money(cost)));
        if chat.priced_turns < chat.turns {
            line.push_str(&format!(" ({} of {} turns priced)", chat.priced_turns, chat.turns));
        }
    }
    line
}

/// Tokens in (with what the cache served or stored, when anything) and out.
fn tokens(u: &quire_agent::Usage) -> String {
    let mut cache = Vec::new();
    if u.cached_input_tokens > 0 {
        cache.push(format!("{} cached", grouped(u.cached_input_tokens)));
    }
    if u.cache_write_tokens > 0 {
        cache.push(format!("{} written to the cache", grouped(u.cache_write_tokens)));
    }
    let cache = if cache.is_empty() {
        String::new()
    } else {
        format!(" ({})", cache.join(", "))
    };
    format!(
        "{} tokens in{cache}, {} out",
        grouped(u.input_tokens),
        grouped(u.output_tokens)
    )
}

/// A whole number with a comma every three digits, as people read token counts.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// An estimated cost, in the currency units of the prices: cents-level for large sums, more digits for the small
/// sums a turn usually costs.
fn money(cost: f64) -> String {
    if cost >= 0.1 {
        format!("{cost:.2}")
    } else if cost >= 0.001 {
        format!("{cost:.4}")
    } else {
        format!("{cost:.6}")
    }
}

pub(crate) fn plural(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

pub(crate) fn line(text: &str) -> anyhow::Result<()> {
    Output { json: false }.print(&format!("{text}\n"))
}

pub(crate) fn text(text: &str) -> anyhow::Result<()> {
    Output { json: false }.print(text)
}
