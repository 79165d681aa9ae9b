//! Exports that come as a zip (Notion's, Google Takeout's, Simplenote's): unpacked into a temporary folder, which
//! is then read as the folder it holds. Nothing is written outside that folder whatever the archive's paths say
//! (`..`, absolute paths and symbolic links are left out), and an archive that would unpack to more than
//! [`MAX_UNPACKED`] bytes or [`MAX_ENTRIES`] entries is refused (a zip bomb), before and while it is written. A
//! zip that holds only zips (Notion splits a large export into `Export-...-Part-1.zip`, `-Part-2.zip`) has those
//! unpacked in their turn, once.

use std::fs::File;
use std::io::{Read, Write};
use std::path::Path;

use crate::Error;

/// The most bytes an archive may unpack to.
const MAX_UNPACKED: u64 = 16 * 1024 * 1024 * 1024;

/// The most entries an archive may have.
const MAX_ENTRIES: usize = 2_000_000;

/// Whether `path` is a zip file: its name says so, or it starts as one.
pub(crate) fn is_zip(path: &Path) -> bool {
    if !path.is_file() {
        return false;
    }
    let named = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("zip"));
    let mut magic = [0u8; 4];
    let starts = File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok_and(|()| magic == *b"PK\x03\x04");
    named || starts && !path.extension().is_some_and(|e| e.eq_ignore_ascii_case("jex"))
}

/// Unpacks `zip` into a new temporary folder, removed when the returned value is dropped.
pub(crate) fn unpack(zip: &Path) -> Result<tempfile::TempDir, Error> {
    let dir = tempfile::Builder::new()
        .prefix("quire-zip-")
        .tempdir()
        .map_err(|e| Error::Io {
            context: "cannot make a temporary folder for the archive".into(),
            source: e,
        })?;
    let mut budget = MAX_UNPACKED;
    let inner = unpack_into(zip, dir.path(), &mut budget)?;
    // Only zips inside: a split export.
    if !inner.is_empty()
        && inner
            .iter()
            .all(|p| p.extension().is_some_and(|e| e.eq_ignore_ascii_case("zip")))
    {
        for part in inner {
            unpack_into(&part, dir.path(), &mut budget)?;
            let _ = std::fs::remove_file(&part);
        }
    }
    Ok(dir)
}

/// Unpacks one archive into `dir`; returns the files it wrote at its top level.
fn unpack_into(zip: &Path, dir: &Path, budget: &mut u64) -> Result<Vec<std::path::PathBuf>, Error> {
    let unreadable = |reason: String| Error::Source {
        path: zip.display().to_string(),
        reason,
    };
    let file = File::open(zip).map_err(|e| unreadable(e.to_string()))?;
    let mut archive =
        zip::ZipArchive::new(file).map_err(|e| unreadable(format!("not a zip archive it can read: {e}")))?;
    if archive.len() > MAX_ENTRIES {
        return Err(unreadable(format!(
            "{} entries: more than {MAX_ENTRIES}",
            archive.len()
        )));
    }
    let mut top = Vec::new();
    for i in 0..archive.len() {
        let mut entry = archive
            .by_index(i)
            .map_err(|e| unreadable(format!("entry {i} cannot be read: {e}")))?;
        // A path that leads out, or a link: left out.
        let Some(rel) = entry.enclosed_name() else { continue };
        if entry.is_symlink() || rel.components().count() == 0 {
            continue;
        }
        let out = dir.join(&rel);
        if entry.is_dir() {
            std::fs::create_dir_all(&out).map_err(|e| io("cannot unpack the archive", e))?;
            continue;
        }
        if entry.size() > *budget {
            return Err(unreadable(format!(
                "it unpacks to more than {} GiB: not read",
                MAX_UNPACKED >> 30
            )));
        }
        if let Some(parent) = out.parent() {
            std::fs::create_dir_all(parent).map_err(|e| io("cannot unpack the archive", e))?;
        }
        let mut written = File::create(&out).map_err(|e| io("cannot unpack the archive", e))?;
        // The sizes an archive states can lie: what is written is counted too.
        let copied = std::io::copy(&mut (&mut entry).take(*budget + 1), &mut written)
            .map_err(|e| unreadable(format!("{} cannot be unpacked: {e}", rel.display())))?;
        if copied > *budget {
            return Err(unreadable(format!(
                "it unpacks to more than {} GiB: not read",
                MAX_UNPACKED >> 30
            )));
        }
        *budget -= copied;
        written.flush().map_err(|e| io("cannot unpack the archive", e))?;
        if rel.components().count() == 1 {
            top.push(out);
        }
    }
    Ok(top)
}

fn io(context: &str, source: std::io::Error) -> Error {
    Error::Io {
        context: context.into(),
        source,
    }
}
