//! Sealed files on a folder target: a changed, moved or foreign file is refused with the reason, and no file under the
//! folder holds a byte of what was sealed.

use quire_sync::{DeviceId, FileError, SyncKey, SyncPath, Target, open_file, seal_file};

use crate::files_under;

const MARKER: &str = "MARKER-PHRASE-a7Qz-only-in-plaintext";

#[tokio::test]
async fn a_damaged_moved_or_foreign_file_does_not_open() {
    let dir = tempfile::tempdir().unwrap();
    let target = Target::init(&dir.path().join("one")).await.unwrap();
    let key = SyncKey::from_bytes([9; 32]).file_key();
    let (device, other) = (DeviceId::random().unwrap(), DeviceId::random().unwrap());
    let path = SyncPath::Batch(device, 1);
    let sealed = seal_file(&key, target.id(), &path, b"the batch").unwrap();
    target.put_new(&path, sealed.clone()).await.unwrap();
    let read = target.get(&path).await.unwrap();
    assert_eq!(
        open_file(&key, target.id(), &path, &read).unwrap().as_slice(),
        b"the batch"
    );

    // One byte flipped on disk, in the ciphertext: the check fails.
    let on_disk = dir.path().join(format!("one/{}", path.full()));
    let mut flipped = sealed.clone();
    flipped[40] ^= 0x01;
    std::fs::write(&on_disk, &flipped).unwrap();
    let read = target.get(&path).await.unwrap();
    assert_eq!(open_file(&key, target.id(), &path, &read), Err(FileError::CheckFailed));
    // In the header: not one of ours. Cut short: damaged.
    flipped = sealed.clone();
    flipped[0] ^= 0x01;
    assert_eq!(open_file(&key, target.id(), &path, &flipped), Err(FileError::NotOurs));
    assert_eq!(
        open_file(&key, target.id(), &path, &sealed[..30]),
        Err(FileError::Truncated)
    );

    // The same bytes put under another number, another device, as a snapshot, or on another target.
    for moved in [
        SyncPath::Batch(device, 2),
        SyncPath::Batch(other, 1),
        SyncPath::Snapshot(device, 1, 1),
    ] {
        target.put_new(&moved, sealed.clone()).await.unwrap();
        let read = target.get(&moved).await.unwrap();
        assert_eq!(open_file(&key, target.id(), &moved, &read), Err(FileError::CheckFailed));
    }
    let two = Target::init(&dir.path().join("two")).await.unwrap();
    two.put_new(&path, sealed.clone()).await.unwrap();
    let read = two.get(&path).await.unwrap();
    let refused = open_file(&key, two.id(), &path, &read).unwrap_err();
    assert_eq!(refused, FileError::CheckFailed);
    assert!(refused.to_string().contains("another target"), "{refused}");
    // Another workspace's key.
    let other_key = SyncKey::from_bytes([10; 32]).file_key();
    assert_eq!(
        open_file(&other_key, target.id(), &path, &sealed),
        Err(FileError::CheckFailed)
    );

    // A file that was never sealed.
    target
        .put_new(&SyncPath::Batch(device, 3), b"{\"plain\": true}".to_vec())
        .await
        .unwrap();
    let read = target.get(&SyncPath::Batch(device, 3)).await.unwrap();
    let refused = open_file(&key, target.id(), &SyncPath::Batch(device, 3), &read).unwrap_err();
    assert_eq!(refused, FileError::NotOurs);
    assert!(refused.to_string().contains("not a quire sync file"), "{refused}");
}

#[tokio::test]
async fn no_file_on_the_target_holds_the_plaintext() {
    let dir = tempfile::tempdir().unwrap();
    let target = Target::init(dir.path()).await.unwrap();
    let key = SyncKey::from_bytes([3; 32]).file_key();
    let device = DeviceId::random().unwrap();
    let text = format!("# Diary\n\n{MARKER} in a note body, {MARKER} again.\n").repeat(50);
    let mut paths = Vec::new();
    for seq in 1..=5 {
        paths.push(SyncPath::Batch(device, seq));
    }
    paths.push(SyncPath::Snapshot(device, 5, 1));
    for path in &paths {
        target
            .put_new(path, seal_file(&key, target.id(), path, text.as_bytes()).unwrap())
            .await
            .unwrap();
    }
    // The wrapped key is opaque here; what the workspace hands over is already ciphertext.
    target.put_new(&SyncPath::Key(device), vec![0x5a; 120]).await.unwrap();
    for path in &paths {
        let read = target.get(path).await.unwrap();
        assert_eq!(
            open_file(&key, target.id(), path, &read).unwrap().as_slice(),
            text.as_bytes()
        );
    }

    let files = files_under(dir.path());
    assert_eq!(files.len(), 8, "{files:?}");
    for file in files {
        let bytes = std::fs::read(&file).unwrap();
        let found = bytes.windows(MARKER.len()).any(|w| w == MARKER.as_bytes());
        assert!(!found, "{} holds the marker phrase", file.display());
        // Nor a shorter piece of it.
        assert!(!bytes.windows(8).any(|w| w == b"MARKER-P"), "{}", file.display());
    }
}
