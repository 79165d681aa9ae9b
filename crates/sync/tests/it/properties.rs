//! Properties of the file format: what is sealed opens to the same bytes at the same place, and any one changed
//! byte, or any other place, fails.

use proptest::prelude::*;
use quire_sync::{DeviceId, FileError, MAX_PART, MAX_SEQ, SyncKey, SyncPath, TargetId, open_file, seal_file};

fn any_path() -> impl Strategy<Value = SyncPath> {
    let device = any::<[u8; 16]>().prop_map(DeviceId::from_bytes);
    let seq = 1..=MAX_SEQ;
    prop_oneof![
        Just(SyncPath::Target),
        device.clone().prop_map(SyncPath::Key),
        (device.clone(), seq.clone()).prop_map(|(d, s)| SyncPath::Batch(d, s)),
        (device, seq, 0..=MAX_PART).prop_map(|(d, s, p)| SyncPath::Snapshot(d, s, p)),
    ]
}

proptest! {
    #[test]
    fn sealed_files_open_to_the_same_bytes_and_refuse_any_change(
        key in any::<[u8; 32]>(),
        target in any::<[u8; 16]>(),
        path in any_path(),
        other in any_path(),
        plaintext in proptest::collection::vec(any::<u8>(), 0..2048),
        flip_at in any::<prop::sample::Index>(),
        flip_by in 1..=255u8,
    ) {
        let key = SyncKey::from_bytes(key).file_key();
        let target = TargetId::from_bytes(target);
        let sealed = seal_file(&key, &target, &path, &plaintext).unwrap();
        let opened = open_file(&key, &target, &path, &sealed).unwrap();
        prop_assert_eq!(opened.as_slice(), plaintext.as_slice());

        let mut changed = sealed.clone();
        let at = flip_at.index(changed.len());
        changed[at] ^= flip_by;
        let expected = if at < 4 { FileError::NotOurs } else { FileError::CheckFailed };
        prop_assert_eq!(open_file(&key, &target, &path, &changed), Err(expected));

        if other != path {
            prop_assert_eq!(open_file(&key, &target, &other, &sealed), Err(FileError::CheckFailed));
        }
        let elsewhere = TargetId::random().unwrap();
        prop_assert_eq!(open_file(&key, &elsewhere, &path, &sealed), Err(FileError::CheckFailed));
    }
}

#[test]
fn the_same_plaintext_seals_differently_each_time() {
    let key = SyncKey::from_bytes([1; 32]).file_key();
    let target = TargetId::random().unwrap();
    let path = SyncPath::Batch(DeviceId::random().unwrap(), 1);
    assert_ne!(
        seal_file(&key, &target, &path, b"x").unwrap(),
        seal_file(&key, &target, &path, b"x").unwrap()
    );
}
