//! The Obsidian fixture vaults: every `fixtures/obsidian/<name>/` (a vault written by hand from Obsidian's
//! documentation of links, embeds and properties), imported into a fresh workspace and written out canonically,
//! must equal `fixtures/obsidian/expected/<name>.md`: each note's notebook, tags, labels with their types,
//! attachments, every link with what it resolved to, and its body with `quire://` ids replaced by the titles they
//! name; then the import's report. `QUIRE_BLESS=1` writes what each import gave to `target/obsidian-fixtures/`
//! (never over the expected files) to compare or copy by hand. Also: every link quire leaves unresolved is in the
//! report, and properties keep their types and values through import, export and import again.

#![expect(clippy::unwrap_used, clippy::panic, reason = "a test stops where it failed")]

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use quire_core::{Actor, AttributeKind, Workspace};
use quire_import::{ExportFormat, ExportOptions, ImportOptions, ImportReport, Outcome, export, import};
use yaml_rust2::{Yaml, YamlLoader};

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/obsidian")
}

/// Where `QUIRE_BLESS=1` writes the actual output: the workspace's target folder, never the fixtures.
fn bless_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"));
    target.join("obsidian-fixtures")
}

/// The fixture vaults: name → folder.
fn vaults() -> BTreeMap<String, PathBuf> {
    std::fs::read_dir(fixture_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir() && p.file_name().is_some_and(|n| n != "expected"))
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), p))
        .collect()
}

/// The workspace exported in `format` into a new temporary folder.
fn exported(ws: &Workspace, format: ExportFormat) -> tempfile::TempDir {
    let out = tempfile::tempdir().unwrap();
    let options = ExportOptions {
        format,
        ..Default::default()
    };
    export(ws, out.path(), &options).unwrap();
    out
}

fn import_vault(vault: &Path, dir: &Path) -> (Workspace, ImportReport) {
    let ws = Workspace::open(dir.join("fixture.quire")).unwrap();
    let report = import(&ws, vault, &ImportOptions::default(), &|_, _| {}).unwrap();
    (ws, report)
}

#[test]
fn every_obsidian_fixture_imports_as_expected() {
    let all = vaults();
    let bless = std::env::var_os("QUIRE_BLESS").is_some_and(|v| v == "1");
    let mut failing = Vec::new();
    for (name, vault) in &all {
        let work = tempfile::tempdir().unwrap();
        let (ws, report) = import_vault(vault, work.path());
        let actual = render(&ws, &report);
        if bless {
            std::fs::create_dir_all(bless_dir()).unwrap();
            std::fs::write(bless_dir().join(format!("{name}.md")), &actual).unwrap();
        }
        let expected_path = fixture_dir().join("expected").join(format!("{name}.md"));
        let expected = std::fs::read_to_string(&expected_path).unwrap_or_default();
        if actual != expected {
            eprintln!("\n## {name}\n{}", diff(&expected, &actual));
            failing.push(name.clone());
        }
    }
    assert!(failing.is_empty(), "not as expected: {}", failing.join(", "));
    assert!(all.len() >= 2, "the fixtures are gone: {all:?}");
    for entry in std::fs::read_dir(fixture_dir().join("expected")).unwrap() {
        let path = entry.unwrap().path();
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        assert!(all.contains_key(&stem), "{} has no vault", path.display());
    }
}

/// The expected lines missing from the actual output (`-`) and the actual ones not expected (`+`), in order.
fn diff(expected: &str, actual: &str) -> String {
    let expected: Vec<&str> = expected.lines().collect();
    let actual: Vec<&str> = actual.lines().collect();
    let mut out = String::new();
    for line in &expected {
        if !actual.contains(line) {
            let _ = writeln!(out, "- {line}");
        }
    }
    for line in &actual {
        if !expected.contains(line) {
            let _ = writeln!(out, "+ {line}");
        }
    }
    out
}

/// Every note (by notebook path, then title), then the report.
fn render(ws: &Workspace, report: &ImportReport) -> String {
    let mut notes: Vec<(String, String)> = report
        .items
        .iter()
        .filter_map(|item| item.note_id.clone())
        .map(|id| (place_of(ws, &id), id))
        .collect();
    notes.sort();
    notes.dedup();
    let mut out = String::new();
    let (mut links, mut resolved) = (0, 0);
    for (_, id) in &notes {
        let (text, found, ok) = render_note(ws, id);
        out.push_str(&text);
        links += found;
        resolved += ok;
    }
    let _ = writeln!(out, "=== links: {resolved} of {links} resolved ===");
    let _ = writeln!(
        out,
        "=== report: {} imported, {} failed, {} attachments ===",
        report.imported, report.failed, report.attachments
    );
    let mut items: Vec<_> = report
        .items
        .iter()
        .filter(|i| i.outcome != Outcome::Imported || !i.notes.is_empty())
        .collect();
    items.sort_by(|a, b| a.path.cmp(&b.path));
    for item in items {
        let _ = writeln!(out, "{}: {:?}", item.path, item.outcome);
        for note in &item.notes {
            let _ = writeln!(out, "  {note}");
        }
    }
    out
}

/// A note's notebook path and title, `/` between.
fn place_of(ws: &Workspace, id: &str) -> String {
    ws.read(&Actor::User, |r| {
        let note = r.note_summary(id)?;
        let mut parts: Vec<String> = r
            .notebook_path(&note.notebook_id)?
            .into_iter()
            .filter(|nb| nb.id != quire_core::ROOT_NOTEBOOK_ID)
            .map(|nb| nb.title)
            .collect();
        parts.push(note.title);
        Ok::<_, quire_core::Error>(parts.join("/"))
    })
    .unwrap()
}

/// One note as text; how many links it has, and how many resolved.
fn render_note(ws: &Workspace, id: &str) -> (String, usize, usize) {
    ws.read(&Actor::User, |r| {
        let note = r.note(id)?;
        let s = &note.summary;
        let mut out = format!("=== {} ===\n", place_of(ws, id));
        if !s.tags.is_empty() {
            let _ = writeln!(out, "tags: {}", s.tags.join(", "));
        }
        let name_of_attachment = |aid: &str| {
            r.attachment(aid)
                .and_then(|a| {
                    let data = r.attachment_data(aid)?;
                    Ok(format!(
                        "{} (of {}: {})",
                        a.title,
                        place_of(ws, &a.note_id),
                        String::from_utf8_lossy(&data).trim()
                    ))
                })
                .unwrap_or_else(|_| format!("attachment {aid}"))
        };
        for a in r.attributes(id)? {
            match a.kind {
                AttributeKind::Label => {
                    let _ = writeln!(out, "label {} ({:?}): {}", a.name, a.value_type, shown(ws, &a.value));
                }
                AttributeKind::Relation => {
                    let _ = writeln!(out, "relation {}: {}", a.name, place_of(ws, &a.value));
                }
            }
        }
        // By title, then content: two attachments of one name were made in the same instant.
        let mut attachments = Vec::new();
        for a in r.attachments(id)? {
            let data = r.attachment_data(&a.id)?;
            attachments.push((a.title.clone(), data, a));
        }
        attachments.sort_by(|x, y| (&x.0, &x.1).cmp(&(&y.0, &y.1)));
        for (_, data, a) in attachments {
            let data = String::from_utf8_lossy(&data);
            let _ = writeln!(out, "attachment {} ({}): {}", a.title, a.mime, data.trim());
        }
        let links = r.outgoing_links(id)?;
        let mut resolved = 0;
        for link in &links {
            let to = match (&link.note_id, &link.attachment_id) {
                (Some(n), _) => place_of(ws, n),
                (_, Some(a)) => name_of_attachment(a),
                _ => "UNRESOLVED".to_owned(),
            };
            resolved += usize::from(to != "UNRESOLVED");
            let label = link.label.as_deref().map(|l| format!("in {l}: ")).unwrap_or_default();
            let heading = link.heading.as_deref().map(|h| format!("#{h}")).unwrap_or_default();
            let target = shown(ws, &link.target);
            let _ = writeln!(out, "link {label}{:?} {target}{heading} -> {to}", link.kind);
        }
        let _ = writeln!(out, "--- body ---\n{}", shown(ws, &note.body));
        Ok::<_, quire_core::Error>((out, links.len(), resolved))
    })
    .unwrap()
}

/// Text with the 32-digit ids of notes and attachments replaced by what they name, so the rendering is stable.
fn shown(ws: &Workspace, text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(|c: char| c.is_ascii_hexdigit()) {
        out.push_str(&rest[..at]);
        let run = rest[at..].chars().take_while(char::is_ascii_hexdigit).count();
        let word = &rest[at..at + run];
        let name = (run == 32)
            .then(|| {
                ws.read(&Actor::User, |r| match r.note_summary(word) {
                    Ok(_) => Ok(place_of(ws, word)),
                    Err(_) => r.attachment(word).map(|a| a.title),
                })
                .ok()
            })
            .flatten();
        out.push_str(name.as_deref().map_or(word, |n| n));
        rest = &rest[at + run..];
    }
    out.push_str(rest);
    out
}

#[test]
fn every_link_quire_leaves_unresolved_is_in_the_report() {
    for (name, vault) in vaults() {
        let work = tempfile::tempdir().unwrap();
        let (ws, report) = import_vault(&vault, work.path());
        for item in &report.items {
            let Some(id) = &item.note_id else { continue };
            let links = ws.read(&Actor::User, |r| r.outgoing_links(id)).unwrap();
            for link in links
                .iter()
                .filter(|l| l.note_id.is_none() && l.attachment_id.is_none())
            {
                assert!(
                    item.notes.iter().any(|n| n.contains(&link.target)),
                    "{name}: {} leaves {:?} unresolved without a word: {:?}",
                    item.path,
                    link.target,
                    item.notes
                );
            }
        }
    }
}

/// The front matter of an exported note, without the keys quire writes for itself.
fn exported_properties(path: &Path) -> Vec<(String, Yaml)> {
    let text = std::fs::read_to_string(path).unwrap();
    let yaml = text.strip_prefix("---\n").unwrap().split("\n---\n").next().unwrap();
    let Yaml::Hash(map) = YamlLoader::load_from_str(yaml).unwrap().remove(0) else {
        panic!("not a map: {yaml}");
    };
    map.into_iter()
        .map(|(k, v)| (k.into_string().unwrap(), v))
        .filter(|(k, _)| !["title", "created", "updated", "tags", "aliases", "attachments"].contains(&k.as_str()))
        .collect()
}

/// Whether two YAML values are of one type and equal (numbers by value: `.5` is `0.5`).
fn same(a: &Yaml, b: &Yaml) -> bool {
    match (a, b) {
        (Yaml::Real(x), Yaml::Real(y)) => x.parse::<f64>().ok() == y.parse::<f64>().ok() || x == y,
        (Yaml::Array(x), Yaml::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y)),
        (Yaml::Hash(x), Yaml::Hash(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|((kx, vx), (ky, vy))| kx == ky && same(vx, vy))
        }
        _ => a == b,
    }
}

#[test]
fn properties_keep_their_types_and_values_through_export_and_import_again() {
    let vault = fixture_dir().join("properties");
    let source_text = std::fs::read_to_string(vault.join("Film night.md")).unwrap();
    let source_yaml = source_text
        .strip_prefix("---\n")
        .unwrap()
        .split("\n---\n")
        .next()
        .unwrap();
    let Yaml::Hash(source) = YamlLoader::load_from_str(source_yaml).unwrap().remove(0) else {
        panic!("the fixture has front matter");
    };
    let work = tempfile::tempdir().unwrap();
    let (ws, _) = import_vault(&vault, work.path());
    // Each label's type, and its value; for one with links, what they resolve to (an Obsidian export writes a
    // Markdown link as a wikilink, as in the body).
    let labels_of = |ws: &Workspace| {
        ws.read(&Actor::User, |r| {
            let id = r.notes_named("Film night")?.remove(0).id;
            let links = r.outgoing_links(&id)?;
            let mut out: Vec<(String, String, String)> = Vec::new();
            for a in r.attributes(&id)? {
                let value = if a.value.contains('[') {
                    let targets: Vec<String> = links
                        .iter()
                        .filter(|l| l.label.as_deref() == Some(a.name.as_str()))
                        .map(|l| match (&l.note_id, &l.attachment_id) {
                            (Some(n), _) => place_of(ws, n),
                            (_, Some(f)) => r.attachment(f).map(|f| f.title).unwrap_or_default(),
                            _ => format!("unresolved {}", l.target),
                        })
                        .collect();
                    format!("links to {}", targets.join(", "))
                } else {
                    a.value.clone()
                };
                out.push((a.name.clone(), format!("{:?}", a.value_type), value));
            }
            out.sort();
            Ok::<_, quire_core::Error>(out)
        })
        .unwrap()
    };
    let imported = labels_of(&ws);
    for format in [ExportFormat::Obsidian, ExportFormat::Markdown] {
        let out = exported(&ws, format);
        for (key, value) in exported_properties(&out.path().join("Film night.md")) {
            let original = source
                .get(&Yaml::String(key.clone()))
                .unwrap_or_else(|| panic!("{key} was not in the source"));
            let links = matches!(original, Yaml::String(s) if s.contains("]("))
                || ["cover", "banner"].contains(&key.as_str())
                || (format == ExportFormat::Markdown && key == "up");
            if links {
                // A link to a file or a relative path is written as the format writes links; its type stays.
                assert_eq!(
                    std::mem::discriminant(&value),
                    std::mem::discriminant(original),
                    "{format:?} {key}: {value:?}"
                );
                continue;
            }
            assert!(
                same(&value, original),
                "{format:?}: {key} keeps its type and value: {value:?}, was {original:?}"
            );
        }
        // Imported again, the labels are the same, with the same types.
        let again = tempfile::tempdir().unwrap();
        let ws2 = Workspace::open(again.path().join("again.quire")).unwrap();
        import(&ws2, out.path(), &ImportOptions::default(), &|_, _| {}).unwrap();
        assert_eq!(labels_of(&ws2), imported, "{format:?}");
    }
    let text = |format| {
        let out = exported(&ws, format);
        std::fs::read_to_string(out.path().join("Film night.md")).unwrap()
    };
    let obsidian = text(ExportFormat::Obsidian);
    for line in [
        "related: \"[[Target]]\"",
        "  - \"[[People/Host|the host]]\"",
        "source: \"[[Target|the target]]\"",
        "cover: \"[[cover.jpg]]\"",
        "banner: \"![[banner.png]]\"",
        "publish: true",
        "year: 1977",
        "pie: 3.14",
        "ratio: 0.5",
        "quoted: \"true\"",
        "day: 2024-03-01",
    ] {
        assert!(obsidian.lines().any(|l| l == line), "{line} in\n{obsidian}");
    }
    let markdown = text(ExportFormat::Markdown);
    for line in [
        "source: \"[the target](Target.md)\"",
        "banner: \"![banner](banner.png)\"",
    ] {
        assert!(markdown.lines().any(|l| l == line), "{line} in\n{markdown}");
    }
}

/// Every link of every note as what it resolves to (notes by place, files by title and content), sorted.
fn resolutions(ws: &Workspace) -> BTreeMap<String, Vec<String>> {
    ws.read(&Actor::User, |r| {
        let mut out = BTreeMap::new();
        for note in r.all_notes(quire_core::Page::first(200))?.items {
            let mut found: Vec<String> = r
                .outgoing_links(&note.id)?
                .into_iter()
                .map(|l| match (&l.note_id, &l.attachment_id) {
                    (Some(n), _) => place_of(ws, n),
                    (_, Some(a)) => {
                        let data = r.attachment_data(a).unwrap_or_default();
                        format!("file {}", String::from_utf8_lossy(&data).trim())
                    }
                    _ => format!("unresolved {}", l.target),
                })
                .collect();
            found.sort();
            out.insert(place_of(ws, &note.id), found);
        }
        Ok::<_, quire_core::Error>(out)
    })
    .unwrap()
}

#[test]
fn an_exported_vault_imports_again_with_every_link_resolving_as_before() {
    for (name, vault) in vaults() {
        let work = tempfile::tempdir().unwrap();
        let (ws, _) = import_vault(&vault, work.path());
        let before = resolutions(&ws);
        for format in [ExportFormat::Obsidian, ExportFormat::Markdown] {
            let out = exported(&ws, format);
            let again = tempfile::tempdir().unwrap();
            let (ws2, report) = import_vault(out.path(), again.path());
            assert_eq!(report.failed, 0, "{name} {format:?}: {report:#?}");
            assert_eq!(resolutions(&ws2), before, "{name} {format:?}");
        }
    }
}

#[test]
fn an_alias_with_a_comma_is_one_alias() {
    let vault = tempfile::tempdir().unwrap();
    std::fs::write(
        vault.path().join("Alpha.md"),
        "---\naliases: [First, \"A, the first\"]\n---\nThe first.\n",
    )
    .unwrap();
    std::fs::write(vault.path().join("Index.md"), "See [[A, the first]] and [[First]].\n").unwrap();
    let work = tempfile::tempdir().unwrap();
    let (ws, _) = import_vault(vault.path(), work.path());
    let (alpha, links) = ws
        .read(&Actor::User, |r| {
            let alpha = r.notes_named("A, the first")?.remove(0).id;
            let index = r.notes_named("Index")?.remove(0).id;
            Ok::<_, quire_core::Error>((alpha, r.outgoing_links(&index)?))
        })
        .unwrap();
    assert_eq!(links.len(), 2);
    assert!(
        links.iter().all(|l| l.note_id.as_deref() == Some(alpha.as_str())),
        "{links:?}"
    );
    let out = exported(&ws, ExportFormat::Obsidian);
    let written = std::fs::read_to_string(out.path().join("Alpha.md")).unwrap();
    let yaml = written.strip_prefix("---\n").unwrap().split("\n---\n").next().unwrap();
    let doc = YamlLoader::load_from_str(yaml).unwrap().remove(0);
    assert_eq!(
        doc["aliases"],
        Yaml::Array(vec![Yaml::String("First".into()), Yaml::String("A, the first".into())]),
        "{written}"
    );
}

/// Interop finding 2-#11: tags were taken from an indented code block and a code span over two lines, and `#1a`
/// was missed.
#[test]
fn inline_tags_are_the_ones_obsidian_counts() {
    let vault = tempfile::tempdir().unwrap();
    std::fs::create_dir(vault.path().join(".obsidian")).unwrap();
    std::fs::write(
        vault.path().join("Build.md"),
        "# Build notes\n\nA real tag. #shell\n\nIndented code follows:\n\n    #indented code\n\n\
         A code span over two lines: `inside\n#multiline-code\nstill inside`.\n\nA tag that starts with a digit: #1a\n",
    )
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let (ws, _) = import_vault(vault.path(), home.path());
    let note = crate::support::note_by_title(&ws, "Build");
    assert_eq!(note.summary.tags, ["1a", "shell"]);
}

/// Interop finding 2-#12: export wrote a Markdown image with alt text and an anchor as `![[Notes/photo.jpg]]`, and a
/// front matter date as a timestamp string.
#[test]
fn an_image_with_alt_text_and_a_date_come_back_as_written() {
    let vault = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(vault.path().join(".obsidian")).unwrap();
    std::fs::create_dir_all(vault.path().join("Notes")).unwrap();
    std::fs::create_dir_all(vault.path().join("Attachments")).unwrap();
    std::fs::write(
        vault.path().join("Attachments/photo.jpg"),
        b"\xff\xd8\xff\xe0 not really a jpeg",
    )
    .unwrap();
    std::fs::write(
        vault.path().join("Notes/Picture.md"),
        "---\ncreated: 2023-09-12\n---\nSee the picture:\n\n![A description of the picture](photo.jpg#interface)\n",
    )
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let (ws, _) = import_vault(vault.path(), home.path());
    let out = exported(&ws, ExportFormat::Obsidian);
    let text = std::fs::read_to_string(out.path().join("Notes/Picture.md")).unwrap();
    assert!(text.lines().any(|l| l == "created: 2023-09-12"), "{text}");
    assert!(
        text.contains("![A description of the picture](") && text.contains("photo.jpg#interface)"),
        "{text}"
    );
}
