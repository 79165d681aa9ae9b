//! `cargo xtask chaos --rounds N --seed S [--target folder|webdav|s3] [--kill PERCENT]`: a long run of the sync chaos
//! harness (`tests/tests/chaos.rs`: three devices, random operations, syncs killed at random, WebDAV and S3 behind a
//! proxy that drops and stalls connections) with the binary the tests use (a debug build: what one operation costs
//! is beside the point, and it is built already). Its short run is one of the tests.

use anyhow::{Context, bail};

use crate::{cargo, process, project_root};

pub(crate) fn run(args: &[&str]) -> anyhow::Result<()> {
    let mut env: Vec<(&str, String)> = Vec::new();
    let mut rest = args;
    while let [flag, value, tail @ ..] = rest {
        let name = match *flag {
            "--rounds" => "QUIRE_CHAOS_ROUNDS",
            "--seed" => "QUIRE_CHAOS_SEED",
            "--kill" => "QUIRE_CHAOS_KILL",
            "--target" => "QUIRE_CHAOS_TARGET",
            other => bail!("unknown option {other}: --rounds N, --seed S, --target folder|webdav|s3, --kill PERCENT"),
        };
        if name != "QUIRE_CHAOS_TARGET" {
            value
                .parse::<u64>()
                .with_context(|| format!("{flag} takes a number, not {value:?}"))?;
        } else if !["folder", "webdav", "s3"].contains(value) {
            bail!("--target is folder, webdav or s3, not {value:?}");
        }
        env.push((name, (*value).to_owned()));
        rest = tail;
    }
    if !rest.is_empty() {
        bail!("expected --rounds N, --seed S, --target T or --kill PERCENT, got {rest:?}");
    }
    let root = project_root();
    process::status(cargo().args(["build", "--locked", "--package", "quire"]))?;
    let servers = crate::sync_servers::ensure(&root)?;
    let mut test = cargo();
    test.args([
        "test",
        "--locked",
        "--package",
        "quire-tests",
        "--test",
        "chaos",
        "--",
        "--nocapture",
        "--test-threads",
        "1",
    ])
    .env("QUIRE_BIN", root.join("target/debug/quire"))
    .env("QUIRE_SYNC_SERVERS", servers)
    .envs(env);
    process::status(&mut test)
}
