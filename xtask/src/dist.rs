//! `cargo xtask dist`: the `quire` people download, built with the `dist` profile (release, stripped, thin LTO), and
//! its size next to the release build's when that exists.

use crate::build::plain;
use crate::project_root;

pub(crate) fn run() -> anyhow::Result<()> {
    let root = project_root();
    crate::process::status(plain().args([
        "build",
        "--locked",
        "--profile",
        "dist",
        "--package",
        "quire",
        "--bin",
        "quire",
    ]))?;
    let dist = root.join("target/dist/quire");
    let size = std::fs::metadata(&dist)?.len();
    println!("{}: {}", dist.display(), megabytes(size));
    let release = root.join("target/release/quire");
    if let Ok(meta) = std::fs::metadata(&release) {
        println!(
            "{} (release profile, for comparison): {}",
            release.display(),
            megabytes(meta.len())
        );
    }
    Ok(())
}

fn megabytes(bytes: u64) -> String {
    format!("{:.1} MB ({bytes} bytes)", bytes as f64 / 1e6)
}
