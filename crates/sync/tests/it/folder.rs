//! A folder target: made, opened, written create-only, listed, and refused when it is not one.

use quire_sync::{DeviceId, SyncPath, Target, TargetError};

use crate::files_under;

#[tokio::test]
async fn a_folder_target_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("sync");
    let made = Target::init(&root).await.unwrap();
    let marker = std::fs::read_to_string(root.join("quire-sync/v1/target")).unwrap();
    assert_eq!(marker, format!("{{\"format\":1,\"target\":\"{}\"}}\n", made.id()));

    let opened = Target::open(&root).await.unwrap();
    assert_eq!(opened.id(), made.id());
    let (a, b) = (DeviceId::random().unwrap(), DeviceId::random().unwrap());
    for seq in [3, 1, 10, 2] {
        opened
            .put_new(&SyncPath::Batch(a, seq), format!("a{seq}").into_bytes())
            .await
            .unwrap();
    }
    opened
        .put_new(&SyncPath::Snapshot(a, 2, 1), b"snap".to_vec())
        .await
        .unwrap();
    opened
        .put_new(&SyncPath::Key(a), b"wrapped key".to_vec())
        .await
        .unwrap();
    made.put_new(&SyncPath::Batch(b, 1), b"b1".to_vec()).await.unwrap();

    assert_eq!(opened.get(&SyncPath::Batch(a, 10)).await.unwrap(), b"a10");
    assert_eq!(opened.get(&SyncPath::Key(a)).await.unwrap(), b"wrapped key");
    assert_eq!(opened.get(&SyncPath::Batch(b, 1)).await.unwrap(), b"b1");
    let batches = opened.list_batches(&a).await.unwrap();
    assert_eq!(batches.found, vec![1, 2, 3, 10]);
    assert!(batches.foreign.is_empty());
    assert_eq!(opened.list_snapshots(&a).await.unwrap().found, vec![(2, 1)]);
    assert!(opened.list_snapshots(&b).await.unwrap().found.is_empty());
    let mut devices = vec![a, b];
    devices.sort();
    assert_eq!(opened.list_devices().await.unwrap().found, devices);
    assert!(matches!(
        opened.get(&SyncPath::Batch(b, 2)).await,
        Err(TargetError::Missing(SyncPath::Batch(d, 2))) if d == b
    ));

    // On disk: the layout's names, zero-padded so a listing sorts, and nothing left in the upload folder.
    assert!(root.join(format!("quire-sync/v1/d/{a}/b/000000000010")).is_file());
    assert!(root.join(format!("quire-sync/v1/keys/{a}.key")).is_file());
    let scan = opened.scan().await.unwrap();
    assert_eq!(scan.files.len(), 8);
    assert!(scan.unfinished.is_empty() && scan.foreign.is_empty());
    assert!(files_under(&root.join("quire-sync/tmp")).is_empty());
}

#[tokio::test]
async fn files_are_written_once_and_never_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let target = Target::init(dir.path()).await.unwrap();
    let device = DeviceId::random().unwrap();
    let path = SyncPath::Batch(device, 1);
    target.put_new(&path, b"first".to_vec()).await.unwrap();
    let again = target.put_new(&path, b"second".to_vec()).await.unwrap_err();
    assert!(matches!(again, TargetError::Exists(p) if p == path), "{again}");
    assert!(again.to_string().contains("never overwritten"), "{again}");
    assert_eq!(target.get(&path).await.unwrap(), b"first");

    // The target file is init's alone, and init on a target is refused with the id it holds.
    let marker = target.put_new(&SyncPath::Target, b"{}".to_vec()).await.unwrap_err();
    assert!(matches!(marker, TargetError::TargetFileIsInitOnly));
    let before = std::fs::read(dir.path().join("quire-sync/v1/target")).unwrap();
    match Target::init(dir.path()).await.unwrap_err() {
        TargetError::AlreadyATarget { id, .. } => assert_eq!(id, *target.id()),
        other => panic!("{other}"),
    }
    assert_eq!(std::fs::read(dir.path().join("quire-sync/v1/target")).unwrap(), before);

    // No name holds sequence number 0 or one past the twelve digits.
    for seq in [0, quire_sync::MAX_SEQ + 1] {
        let refused = target
            .put_new(&SyncPath::Batch(device, seq), vec![1])
            .await
            .unwrap_err();
        assert!(matches!(refused, TargetError::SeqOutOfRange(_)), "{refused}");
    }
    assert_eq!(target.list_batches(&device).await.unwrap().found, vec![1]);
}

#[tokio::test]
async fn a_killed_upload_leaves_no_batch() {
    let dir = tempfile::tempdir().unwrap();
    let target = Target::init(dir.path()).await.unwrap();
    let device = DeviceId::random().unwrap();
    target
        .put_new(&SyncPath::Batch(device, 1), b"one".to_vec())
        .await
        .unwrap();
    // What a process killed during the upload of batch 2 leaves: half its bytes in the upload folder.
    let stray = dir.path().join("quire-sync/tmp/000000000002.8f3a1c");
    std::fs::write(&stray, b"QSY1 half of a ba").unwrap();

    assert_eq!(target.list_batches(&device).await.unwrap().found, vec![1]);
    assert!(matches!(
        target.get(&SyncPath::Batch(device, 2)).await,
        Err(TargetError::Missing(_))
    ));
    let scan = target.scan().await.unwrap();
    assert_eq!(scan.unfinished, vec!["quire-sync/tmp/000000000002.8f3a1c".to_owned()]);
    assert!(scan.foreign.is_empty());
    // The upload runs again after the restart and lands whole.
    target
        .put_new(&SyncPath::Batch(device, 2), b"two".to_vec())
        .await
        .unwrap();
    assert_eq!(target.list_batches(&device).await.unwrap().found, vec![1, 2]);
    assert_eq!(target.get(&SyncPath::Batch(device, 2)).await.unwrap(), b"two");
}

#[tokio::test]
async fn foreign_files_are_listed_as_foreign_not_ours() {
    let dir = tempfile::tempdir().unwrap();
    let target = Target::init(dir.path()).await.unwrap();
    let device = DeviceId::random().unwrap();
    target
        .put_new(&SyncPath::Batch(device, 1), b"one".to_vec())
        .await
        .unwrap();
    let v1 = dir.path().join("quire-sync/v1");
    for (path, bytes) in [
        ("d/xyz/b/notanumber".to_owned(), b"x".as_slice()),
        (format!("d/{device}/b/notanumber"), b"x"),
        (format!("d/{device}/b/2"), b"x"),
        (format!("d/{device}/s/readme.txt"), b"x"),
        ("d/stray.bin".to_owned(), b"x"),
        ("random.dat".to_owned(), &[0xde, 0xad, 0xbe, 0xef]),
    ] {
        std::fs::create_dir_all(v1.join(&path).parent().unwrap()).unwrap();
        std::fs::write(v1.join(&path), bytes).unwrap();
    }

    let devices = target.list_devices().await.unwrap();
    assert_eq!(devices.found, vec![device]);
    let foreign: Vec<&str> = devices.foreign.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(foreign.len(), 2, "{foreign:?}");
    assert!(foreign.contains(&"quire-sync/v1/d/xyz/") && foreign.contains(&"quire-sync/v1/d/stray.bin"));

    let batches = target.list_batches(&device).await.unwrap();
    assert_eq!(batches.found, vec![1]);
    let mut foreign: Vec<String> = batches.foreign.iter().map(|f| f.path.clone()).collect();
    foreign.sort();
    let base = format!("quire-sync/v1/d/{device}/b");
    assert_eq!(foreign, vec![format!("{base}/2"), format!("{base}/notanumber")]);
    assert!(
        batches.foreign[0].reason.contains("12 decimal digits"),
        "{}",
        batches.foreign[0]
    );
    let snapshots = target.list_snapshots(&device).await.unwrap();
    assert!(snapshots.found.is_empty() && snapshots.foreign.len() == 1);

    let scan = target.scan().await.unwrap();
    assert_eq!(scan.files, vec![SyncPath::Target, SyncPath::Batch(device, 1)]);
    let foreign: Vec<&str> = scan.foreign.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(foreign.len(), 6, "{foreign:?}");
    assert!(foreign.contains(&"quire-sync/v1/random.dat"));
    assert!(foreign.contains(&"quire-sync/v1/d/xyz/b/notanumber"));
}

#[tokio::test]
async fn a_device_deletes_only_its_own_files() {
    let dir = tempfile::tempdir().unwrap();
    let target = Target::init(dir.path()).await.unwrap();
    let (own, other) = (DeviceId::random().unwrap(), DeviceId::random().unwrap());
    for device in [own, other] {
        target
            .put_new(&SyncPath::Batch(device, 1), b"x".to_vec())
            .await
            .unwrap();
    }
    let refused = target.delete(&own, &SyncPath::Batch(other, 1)).await.unwrap_err();
    assert!(matches!(refused, TargetError::NotOwn { .. }), "{refused}");
    let refused = target.delete(&own, &SyncPath::Target).await.unwrap_err();
    assert!(matches!(refused, TargetError::NotOwn { .. }), "{refused}");
    target.delete(&own, &SyncPath::Batch(own, 1)).await.unwrap();
    target.delete(&own, &SyncPath::Batch(own, 1)).await.unwrap();
    assert!(target.list_batches(&own).await.unwrap().found.is_empty());
    assert_eq!(target.list_batches(&other).await.unwrap().found, vec![1]);
    assert!(dir.path().join("quire-sync/v1/target").is_file());
}

#[tokio::test]
async fn what_is_not_a_target_is_refused_and_left_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-folder");
    let refused = Target::open(&missing).await.unwrap_err();
    assert!(matches!(refused, TargetError::NoFolder(_)), "{refused}");
    assert!(!missing.exists());
    let refused = Target::init(&dir.path().join("a/b")).await.unwrap_err();
    assert!(matches!(refused, TargetError::NoFolder(_)), "{refused}");
    assert!(!dir.path().join("a").exists());

    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let refused = Target::open(&empty).await.unwrap_err();
    assert!(matches!(refused, TargetError::NotATarget(_)), "{refused}");
    assert!(refused.to_string().contains("is not a quire sync target"), "{refused}");
    assert!(
        std::fs::read_dir(&empty).unwrap().next().is_none(),
        "open changed the folder"
    );

    let file = dir.path().join("file");
    std::fs::write(&file, b"x").unwrap();
    assert!(matches!(Target::open(&file).await, Err(TargetError::NotAFolder(_))));

    let marker = dir.path().join("marked/quire-sync/v1/target");
    std::fs::create_dir_all(marker.parent().unwrap()).unwrap();
    for (text, expected) in [
        ("not json", "not JSON"),
        (r#"{"format":1,"target":"xyz"}"#, "32 lowercase hex"),
        (r#"{"format":0}"#, "no format 1"),
    ] {
        std::fs::write(&marker, text).unwrap();
        let refused = Target::open(&dir.path().join("marked")).await.unwrap_err();
        assert!(matches!(refused, TargetError::DamagedTarget { .. }), "{refused}");
        assert!(refused.to_string().contains(expected), "{refused}");
    }
    std::fs::write(&marker, r#"{"format":2,"target":"00112233445566778899aabbccddeeff"}"#).unwrap();
    let refused = Target::open(&dir.path().join("marked")).await.unwrap_err();
    assert!(
        matches!(refused, TargetError::NewerFormat { format: 2, .. }),
        "{refused}"
    );
}
