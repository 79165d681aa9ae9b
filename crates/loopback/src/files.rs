//! Files that hold secrets: written whole, readable by their owner alone.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A temporary file beside `path`, named for this process and this write: two writers (two quire processes, two
/// threads) never share one.
fn temporary_beside(path: &Path) -> PathBuf {
    static WRITES: AtomicU64 = AtomicU64::new(0);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let write = WRITES.fetch_add(1, Ordering::Relaxed);
    path.with_file_name(format!(".{name}.{}.{write}.new", std::process::id()))
}

/// Writes `contents` to a new private temporary file beside `path` and returns its path.
fn private_temporary(path: &Path, contents: &str) -> std::io::Result<PathBuf> {
    let temporary = temporary_beside(path);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let written = options.open(&temporary).and_then(|mut file| {
        file.write_all(contents.as_bytes())?;
        file.sync_all()
    });
    if let Err(e) = written {
        let _ = std::fs::remove_file(&temporary);
        return Err(e);
    }
    Ok(temporary)
}

/// Writes `contents` to `path`, readable and writable by the user alone (mode 0600 on Unix), in one rename: a reader
/// sees the old file or the new one, never half of it, and two writers at once each write a whole file (the last one
/// stays). For files that hold secrets (tokens, keys, config.toml).
pub fn write_private(path: &Path, contents: &str) -> std::io::Result<()> {
    let temporary = private_temporary(path, contents)?;
    std::fs::rename(&temporary, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&temporary);
    })
}

/// Writes `contents` to `path` only if there is no file there yet, whole and private; returns whether it did. Of
/// two processes making the same secret at once, one writes it and the other finds it written (then reads it).
pub fn create_private(path: &Path, contents: &str) -> std::io::Result<bool> {
    let temporary = private_temporary(path, contents)?;
    // A hard link fails when the name is taken: the first writer wins, and nobody sees a half-written file.
    let linked = std::fs::hard_link(&temporary, path);
    let _ = std::fs::remove_file(&temporary);
    match linked {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::{create_private, write_private};

    #[test]
    fn writers_at_once_each_write_a_whole_file_and_the_first_creator_wins() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("secret");
        let threads: Vec<_> = (0..8)
            .map(|i| {
                let path = path.clone();
                std::thread::spawn(move || write_private(&path, &format!("{i}").repeat(64)).unwrap())
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.len() == 64 && text.chars().all(|c| c == text.chars().next().unwrap()),
            "{text}"
        );
        let created = dir.path().join("created");
        let wins: Vec<bool> = (0..8)
            .map(|i| {
                let created = created.clone();
                std::thread::spawn(move || create_private(&created, &format!("token {i}")).unwrap())
            })
            .map(|t| t.join().unwrap())
            .collect();
        assert_eq!(wins.iter().filter(|w| **w).count(), 1, "one creator wins");
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            2,
            "no temporary file is left"
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&created).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
        }
    }
}
