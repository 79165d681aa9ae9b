//! Exports that come as a zip (Notion's, Google Takeout's, Bear's `.bear2bk`, a `.textpack`): unpacked into a
//! temporary folder, which is then read as the folder it holds (below the folders that only wrap it). Nothing is
//! written outside that folder whatever the archive's paths say: an entry whose path leads out, a link, an entry
//! larger than any note or attachment quire keeps, and a damaged entry are left out and said in the report; an
//! archive that would unpack to more than [`MAX_UNPACKED`] bytes or [`MAX_ENTRIES`] entries is refused (a zip
//! bomb), counting what is written, not what the archive states. A zip that holds only zips (Notion splits a large
//! export into `Export-...-Part-1.zip`, `-Part-2.zip`) has those unpacked in their turn, once.

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use crate::Error;

/// The most bytes an archive may unpack to.
const MAX_UNPACKED: u64 = 4 * 1024 * 1024 * 1024;

/// The most entries an archive may have.
const MAX_ENTRIES: usize = 2_000_000;

/// The largest entry unpacked: the largest note or attachment quire keeps.
fn max_entry() -> u64 {
    quire_core::MAX_ATTACHMENT_BYTES.max(quire_core::MAX_BODY_BYTES) as u64
}

/// Whether `path` is a zip file: its name says so, or it starts as one.
pub(crate) fn is_zip(path: &Path) -> bool {
    if !path.is_file() {
        return false;
    }
    let named = path
        .extension()
        .is_some_and(|e| ["zip", "bear2bk", "textpack"].iter().any(|z| e.eq_ignore_ascii_case(z)));
    let mut magic = [0u8; 4];
    let starts = File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok_and(|()| magic == *b"PK\x03\x04");
    named || starts
}

/// An archive unpacked: the folder (removed when dropped) and the entries left out, with why.
pub(crate) struct Unpacked {
    pub(crate) dir: tempfile::TempDir,
    pub(crate) left_out: Vec<(String, String)>,
}

/// Unpacks `zip` into a new temporary folder.
pub(crate) fn unpack(zip: &Path) -> Result<Unpacked, Error> {
    let dir = tempfile::Builder::new()
        .prefix("quire-zip-")
        .tempdir()
        .map_err(|e| io("cannot make a temporary folder for the archive", e))?;
    let mut budget = MAX_UNPACKED;
    let mut left_out = Vec::new();
    let inner = unpack_into(zip, dir.path(), &mut budget, &mut left_out)?;
    // Only zips inside: a split export.
    if !inner.is_empty()
        && inner
            .iter()
            .all(|p| p.extension().is_some_and(|e| e.eq_ignore_ascii_case("zip")))
    {
        for part in inner {
            unpack_into(&part, dir.path(), &mut budget, &mut left_out)?;
            let _ = std::fs::remove_file(&part);
        }
    }
    Ok(Unpacked { dir, left_out })
}

/// The folder an unpacked archive's content is in: below folders that hold nothing but one folder (a zip of the
/// export's folder), and what a Mac adds to a zip (`__MACOSX`, `.DS_Store`) aside.
pub(crate) fn content(dir: &Path) -> PathBuf {
    let mut at = dir.to_path_buf();
    for _ in 0..4 {
        let entries: Vec<_> = std::fs::read_dir(&at)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                name != "__MACOSX" && name != ".DS_Store"
            })
            .collect();
        match entries.as_slice() {
            [only] if only.path().is_dir() && !is_content_folder(&only.path()) => at = only.path(),
            _ => break,
        }
    }
    at
}

/// A folder that is itself what an importer reads whole (a TextBundle, Notion's `Export-...` folder), not a wrapper.
fn is_content_folder(path: &Path) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    name.ends_with(".textbundle") || name.starts_with("export-")
}

/// Unpacks one archive into `dir`; returns the files it wrote at its top level.
fn unpack_into(
    zip: &Path,
    dir: &Path,
    budget: &mut u64,
    left_out: &mut Vec<(String, String)>,
) -> Result<Vec<PathBuf>, Error> {
    let unreadable = |reason: String| Error::Source {
        path: zip.display().to_string(),
        reason,
    };
    let file = File::open(zip).map_err(|e| unreadable(e.to_string()))?;
    let mut archive = zip::ZipArchive::new(file).map_err(|e| {
        unreadable(format!(
            "not a zip archive it can read ({e}): a download cut short? Download it again"
        ))
    })?;
    if archive.len() > MAX_ENTRIES {
        return Err(unreadable(format!(
            "{} entries: more than {MAX_ENTRIES}",
            archive.len()
        )));
    }
    let too_much = || unreadable(format!("it unpacks to more than {} GiB: not read", MAX_UNPACKED >> 30));
    let mut top = Vec::new();
    for i in 0..archive.len() {
        let mut entry = match archive.by_index(i) {
            Ok(entry) => entry,
            Err(e) => {
                left_out.push((
                    format!("entry {i}"),
                    format!("damaged in the archive ({e}): not unpacked"),
                ));
                continue;
            }
        };
        let name = entry.name().map_or_else(|_| format!("entry {i}"), |n| n.into_owned());
        let Some(rel) = entry.enclosed_name() else {
            left_out.push((name, "its path leads outside the archive: not unpacked".into()));
            continue;
        };
        if entry.is_symlink() {
            left_out.push((name, "a symbolic link: not unpacked".into()));
            continue;
        }
        if rel.components().count() == 0 {
            continue;
        }
        let out = dir.join(&rel);
        if entry.is_dir() {
            std::fs::create_dir_all(&out).map_err(|e| io("cannot unpack the archive", e))?;
            continue;
        }
        if entry.size() > max_entry() {
            left_out.push((name, too_large(entry.size())));
            continue;
        }
        if entry.size() > *budget {
            return Err(too_much());
        }
        if let Some(parent) = out.parent() {
            std::fs::create_dir_all(parent).map_err(|e| io("cannot unpack the archive", e))?;
        }
        let mut written = File::create(&out).map_err(|e| io("cannot unpack the archive", e))?;
        // The sizes an archive states can lie: what is written is counted too.
        let limit = max_entry().min(*budget) + 1;
        let copied = match std::io::copy(&mut (&mut entry).take(limit), &mut written) {
            Ok(copied) => copied,
            Err(e) => {
                drop(written);
                let _ = std::fs::remove_file(&out);
                left_out.push((name, format!("damaged in the archive ({e}): not unpacked")));
                continue;
            }
        };
        if copied > max_entry() {
            drop(written);
            let _ = std::fs::remove_file(&out);
            left_out.push((name, too_large(copied)));
            continue;
        }
        if copied > *budget {
            return Err(too_much());
        }
        *budget -= copied;
        written.flush().map_err(|e| io("cannot unpack the archive", e))?;
        if rel.components().count() == 1 {
            top.push(out);
        }
    }
    Ok(top)
}

fn too_large(size: u64) -> String {
    format!(
        "{} MiB or more: larger than any note or attachment quire keeps ({} MiB): not unpacked",
        size >> 20,
        max_entry() >> 20
    )
}

fn io(context: &str, source: std::io::Error) -> Error {
    Error::Io {
        context: context.into(),
        source,
    }
}
