//! Sync under chaos (issue 46): three devices with the real binary make random changes (notes added, lines appended,
//! replaced and removed, the same line changed on two devices at once, renames, trash, tags, protection, files
//! attached by an import, conflicts resolved), sync in random orders with some syncs killed (SIGKILL) at a random
//! moment, compactions among them, through a folder, and through WebDAV and S3 servers behind a proxy that drops,
//! resets and stalls connections or takes none. At the end every device syncs until nothing moves, and then:
//! every note is the same on every device; no word written is lost unless a device removed its line on purpose; no
//! line is there twice; no line is one nobody wrote (no mix of two versions); both lines written on two devices at
//! once in place of one are there.
//!
//! A short run of each is part of the tests; `cargo xtask chaos --rounds N --seed S [--target folder|webdav|s3]`
//! runs a long one (`QUIRE_CHAOS_ROUNDS`, `QUIRE_CHAOS_SEED`, `QUIRE_CHAOS_TARGET`, `QUIRE_CHAOS_KILL` in percent).
#![expect(clippy::unwrap_used, clippy::panic, reason = "tests stop where they fail")]

#[path = "chaos/proxy.rs"]
mod proxy;
#[path = "chaos/world.rs"]
mod world;

use quire_tests::servers::{moto, wsgidav};

fn setting(name: &str, default: u64) -> u64 {
    std::env::var(format!("QUIRE_CHAOS_{name}"))
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Whether this target runs (all of them unless `QUIRE_CHAOS_TARGET` names one).
fn wanted(target: &str) -> bool {
    std::env::var("QUIRE_CHAOS_TARGET").map_or(true, |t| t == target)
}

fn run(target: &str, address: &str, env: &[(String, String)], proxy: Option<proxy::Proxy>, rounds: u64) {
    let seed = setting("SEED", 1);
    let kill = setting("KILL", 30) as f64 / 100.0;
    let mut world = world::World::new(address, env, proxy, seed, kill);
    for _ in 0..setting("ROUNDS", rounds) {
        world.round();
    }
    assert!(
        world.settle(),
        "the devices did not settle: a sync failed with the target passing, or 12 passes all moved"
    );
    // Edits kept beside notes sealed elsewhere are merged in when the person opens the conflicts with the
    // passphrase: each device does, and they sync again.
    world.open_conflicts();
    assert!(
        world.settle(),
        "the devices did not settle after the edits kept beside sealed notes merged"
    );
    let (wrong, in_revisions) = world.check();
    let s = &world.stats;
    eprintln!(
        "chaos {target} seed {seed}: {} operations ({} acknowledged, {} same-line pairs, {} conflicts resolved), {} syncs \
         ({} killed, {} compactions, {} offline, {} failed), {} words kept only in revisions, {} problems",
        s.ops,
        s.acknowledged,
        s.same_line_pairs,
        s.conflicts_resolved,
        s.syncs,
        s.killed,
        s.compactions,
        s.offline,
        s.failed,
        in_revisions,
        wrong.len()
    );
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn chaos_through_a_folder() {
    if !wanted("folder") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("target");
    run("folder", target.to_str().unwrap(), &[], None, 16);
}

#[test]
fn chaos_through_webdav_behind_a_proxy_that_drops_and_stalls() {
    let root = tempfile::tempdir().unwrap();
    let Some((_server, port)) = wanted("webdav").then(|| wsgidav(root.path())).flatten() else {
        return;
    };
    let proxy = proxy::Proxy::start(port, setting("SEED", 1));
    let address = format!("webdav+http://127.0.0.1:{}/quire", proxy.port);
    run("webdav", &address, &[], Some(proxy), 6);
}

#[test]
fn chaos_through_s3_behind_a_proxy_that_drops_and_stalls() {
    let Some((_server, port)) = wanted("s3").then(|| moto("chaos")).flatten() else {
        return;
    };
    let proxy = proxy::Proxy::start(port, setting("SEED", 1));
    let env = [
        ("AWS_ACCESS_KEY_ID", "test"),
        ("AWS_SECRET_ACCESS_KEY", "test"),
        ("AWS_REGION", "us-east-1"),
    ]
    .iter()
    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
    .chain([(
        "AWS_ENDPOINT_URL".to_owned(),
        format!("http://127.0.0.1:{}", proxy.port),
    )])
    .collect::<Vec<_>>();
    run("s3", "s3://chaos/quire", &env, Some(proxy), 6);
}
