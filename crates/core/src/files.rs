//! Files and folders the workspace writes beside itself (the file, its indexes, model caches): readable by their
//! owner only, since a workspace holds every note, protected ones included.

use std::path::Path;

/// Creates a directory and the missing ones above it readable by their owner only (0700 on Unix): a workspace holds
/// every note, protected ones included. Directories that exist keep their permissions.
pub(crate) fn private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// Creates the workspace file, empty and readable by its owner only (0600 on Unix), when it does not exist yet.
/// SQLite gives the `-wal` and `-shm` files beside it the same permissions.
pub(crate) fn create_private_file(path: &Path) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    match options.open(path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}
