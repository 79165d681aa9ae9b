//! Helpers the import tests share: running an import, finding a note, writing a source folder (a vault), and
//! building Joplin archives.
#![allow(dead_code, reason = "each test file uses part of it")]
#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers stop the test where it failed"
)]

pub(crate) mod enex_render;

use std::path::Path;

use quire_core::{Actor, Page, Workspace};
use quire_import::{ImportOptions, ImportReport, import};

/// Imports `source`, failing the test if the import cannot run at all.
pub(crate) fn run(ws: &Workspace, source: &Path, options: &ImportOptions) -> ImportReport {
    import(ws, source, options, &|_, _| {}).unwrap()
}

/// The note titled `title` (the first of that title), failing the test when there is none.
pub(crate) fn note_by_title(ws: &Workspace, title: &str) -> quire_core::Note {
    ws.read(&Actor::User, |r| {
        let all = r.all_notes(Page { offset: 0, limit: 100 })?;
        let summary = all.items.into_iter().find(|n| n.title == title).expect(title);
        r.note(&summary.id)
    })
    .unwrap()
}

pub(crate) fn write(root: &Path, rel: &str, content: &[u8]) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
}

/// A vault with nested folders, wikilinks of every form, an embed, front matter, inline and nested tags.
pub(crate) fn vault(root: &Path) {
    write(root, ".obsidian/app.json", br#"{"attachmentFolderPath": "assets"}"#);
    write(root, "assets/beds.png", b"\x89PNG fake");
    write(
        root,
        "Projects/Garden/other/beds.png",
        b"another picture with the same name",
    );
    write(root, "Projects/Garden/plan.pdf", b"%PDF-1.4 fake");
    write(
        root,
        "Projects/Garden/Garden plan.md",
        b"---\ntags: [garden, \"project/2024\"]\naliases: [Beds plan]\ncreated: 2024-03-01\nupdated: 2024-03-05 10:00\n\
          status: active\n---\n# Garden plan\n\n![[beds.png]] and the [PDF](plan.pdf).\n\
          See [[Compost]], [[Daily/2024-03-02|yesterday]] and [[Compost#Layers]]. #outdoors #garden/beds\n",
    );
    write(
        root,
        "Compost.md",
        b"Layers. Back to [the plan](Projects/Garden/Garden%20plan.md#Beds).\n",
    );
    write(
        root,
        "Daily/2024-03-02.md",
        b"---\ntodo: true\ncompleted: 2024-03-02T18:00:00Z\n---\nWatered the [[Beds plan]].\n",
    );
    write(root, "Daily/Open task.md", b"---\ntodo: true\n---\nbuy seeds\n");
}

pub(crate) fn notebook_path(ws: &Workspace, note: &quire_core::Note) -> Vec<String> {
    ws.read(&Actor::User, |r| r.notebook_path(&note.summary.notebook_id))
        .unwrap()
        .into_iter()
        .filter(|nb| nb.id != quire_core::ROOT_NOTEBOOK_ID)
        .map(|nb| nb.title)
        .collect()
}

/// Ids of the Joplin items the tests build (32 hex digits, as Joplin's are).
pub(crate) const WORK: &str = "0000000000000000000000000000f001";
pub(crate) const PROJECTS: &str = "0000000000000000000000000000f002";
pub(crate) const PLAN: &str = "00000000000000000000000000000a01";
pub(crate) const TASK: &str = "00000000000000000000000000000a02";
pub(crate) const OPEN: &str = "00000000000000000000000000000a03";
pub(crate) const CLIP: &str = "00000000000000000000000000000a04";
pub(crate) const PHOTO: &str = "00000000000000000000000000000b01";
pub(crate) const TAG: &str = "00000000000000000000000000000c01";
pub(crate) const NOTE_TAG: &str = "00000000000000000000000000000d01";
pub(crate) const PNG: &[u8] = b"\x89PNG\r\n\x1a\n a picture";

/// A Joplin item file: title, blank line, body, blank line, properties (as Joplin serialises them).
pub(crate) fn item(title: Option<&str>, body: &str, props: &[(&str, &str)]) -> String {
    let mut parts = Vec::new();
    if let Some(title) = title {
        parts.push(title.to_owned());
    }
    if !body.is_empty() {
        parts.push(body.to_owned());
    }
    parts.push(
        props
            .iter()
            .map(|(k, v)| format!("{k}: {v}"))
            .collect::<Vec<_>>()
            .join("\n"),
    );
    parts.join("\n\n")
}

pub(crate) fn note_item(id: &str, parent: &str, title: &str, body: &str, extra: &[(&str, &str)]) -> String {
    let mut props = vec![
        ("id", id),
        ("parent_id", parent),
        ("created_time", "2023-05-01T10:00:00.000Z"),
        ("updated_time", "2023-05-02T11:00:00.000Z"),
        ("is_conflict", "0"),
        ("author", ""),
        ("source_url", ""),
        ("is_todo", "0"),
        ("todo_due", "0"),
        ("todo_completed", "0"),
        ("user_created_time", "2023-05-01T10:00:00.000Z"),
        ("user_updated_time", "2023-05-02T11:00:00.000Z"),
        ("encryption_cipher_text", ""),
        ("encryption_applied", "0"),
        ("markup_language", "1"),
    ];
    for (k, v) in extra {
        props.retain(|(key, _)| key != k);
        props.push((k, v));
    }
    props.push(("type_", "1"));
    item(Some(title), body, &props)
}

/// A tar of `entries` (the JEX format), with every entry a plain file.
pub(crate) fn jex(entries: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut builder = tar::Builder::new(Vec::new());
    for (name, data) in entries {
        let mut header = tar::Header::new_ustar();
        header.set_size(data.len() as u64);
        header.set_mode(0o644);
        header.set_entry_type(tar::EntryType::Regular);
        builder.append_data(&mut header, name, data.as_slice()).unwrap();
    }
    builder.into_inner().unwrap()
}
