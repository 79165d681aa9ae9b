//! What a target's files may not do to quire, whoever wrote them: be larger than their kind allows (whatever a
//! server says their size is), or lead quire's writes, reads and deletes out of the target through a symbolic link.

use std::path::{Path, PathBuf};

use futures::TryStreamExt;
use opendal::Operator;

/// Reads `path` whole, but never more than `limit` bytes: `Ok(Err(read))` when more came (`read` bytes were taken
/// before the read stopped). A stat answer and the body come from the same server, so the body itself is counted.
pub(crate) async fn read_at_most(op: &Operator, path: &str, limit: u64) -> opendal::Result<Result<Vec<u8>, u64>> {
    let mut stream = op.reader(path).await?.into_stream(..).await?;
    let mut bytes = Vec::new();
    while let Some(buffer) = stream.try_next().await? {
        for chunk in buffer {
            if (bytes.len() + chunk.len()) as u64 > limit {
                // Dropping the stream closes the connection: the rest is never read.
                return Ok(Err((bytes.len() + chunk.len()) as u64));
            }
            bytes.extend_from_slice(&chunk);
        }
    }
    Ok(Ok(bytes))
}

/// The first symbolic link on the way from `root` to `relative` (each folder, and the entry itself), if any.
/// `root` itself may be a link: the person chose it. Anything below is quire's layout, which holds real folders and
/// files only; a link there (a peer of a shared folder can make one) would lead writes and deletes outside.
pub(crate) async fn link_on_the_way(root: &Path, relative: &str) -> std::io::Result<Option<PathBuf>> {
    let mut at = root.to_path_buf();
    for part in relative.split('/').filter(|p| !p.is_empty()) {
        at.push(part);
        match tokio::fs::symlink_metadata(&at).await {
            Ok(meta) if meta.file_type().is_symlink() => return Ok(Some(at)),
            Ok(_) => {}
            // Nothing there yet: nothing further down can be a link either.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        }
    }
    Ok(None)
}
