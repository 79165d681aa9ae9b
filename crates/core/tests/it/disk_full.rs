//! A full disk: no acknowledged write is lost, and once space is freed the person's write gets it before the
//! background indexer does (security finding 5). Runs on a small tmpfs where this process may mount one.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use quire_core::{Actor, Error, Workspace, testing};

/// A tmpfs of a few MiB, unmounted when dropped.
struct SmallDisk {
    _dir: tempfile::TempDir,
    mount: PathBuf,
}

impl SmallDisk {
    /// `None` where this process cannot mount one (not root, no `mount`, a container that forbids it).
    fn mount(mib: u32) -> Option<SmallDisk> {
        let dir = tempfile::tempdir().ok()?;
        let mount = dir.path().join("disk");
        std::fs::create_dir(&mount).ok()?;
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={mib}m"), "tmpfs"])
            .arg(&mount)
            .stderr(std::process::Stdio::null())
            .status()
            .ok()?;
        status.success().then_some(SmallDisk { _dir: dir, mount })
    }

    fn path(&self) -> &Path {
        &self.mount
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.mount).status();
    }
}

fn is_disk_full(e: &Error) -> bool {
    matches!(e, Error::Database(db) if db.is_disk_full())
}

#[test]
fn after_a_full_disk_the_persons_write_wins_over_the_indexer() {
    let Some(disk) = SmallDisk::mount(12) else {
        eprintln!("skipped: this process cannot mount a tmpfs, so the full disk cannot be made");
        return;
    };
    let ballast = disk.path().join("ballast");
    std::fs::write(&ballast, vec![0u8; 3 << 20]).unwrap();
    let ws = Workspace::open(disk.path().join("notes.quire")).unwrap();
    // The indexer looks for work every 20 ms: without its back-off it takes freed space within one round.
    let indexer = ws.spawn_indexer(Duration::from_millis(20));
    let text = |i: usize| {
        format!(
            "Note {i} says {}",
            "several distinct words about gardening ".repeat(2_500)
        )
    };
    let mut acked = Vec::new();
    loop {
        match testing::note(format!("N{}", acked.len()), text(acked.len())).create_in(&ws) {
            Ok(note) => acked.push(note),
            Err(e) if is_disk_full(&e) => break,
            Err(e) => panic!("not a full disk: {e}"),
        }
        assert!(acked.len() < 500, "the disk never filled");
    }
    assert!(!acked.is_empty());
    // The indexer meets the full disk too, and backs off.
    std::thread::sleep(Duration::from_millis(500));
    std::fs::remove_file(&ballast).unwrap();
    // Several of the indexer's rounds pass before the person writes again.
    std::thread::sleep(Duration::from_millis(1_000));
    testing::note("After", "written once space was freed")
        .create_in(&ws)
        .expect("the person's write gets the freed space");
    drop(indexer);
    // Nothing acknowledged was lost, and the file is sound.
    for id in &acked {
        ws.read(&Actor::User, |r| r.note(id)).unwrap();
    }
    assert_eq!(ws.check_integrity().unwrap(), Vec::<String>::new());
    drop(ws);
}
