//! What the benchmarks share to measure: the flags they take, one sample's time, the median and p99 of many, and a
//! duration as their tables print it.

use std::time::{Duration, Instant};

use anyhow::{Context, bail};

/// The flags of `cargo xtask bench <name>`: how many notes, how many samples, and a workspace file to keep.
pub(crate) struct Options {
    pub(crate) notes: usize,
    pub(crate) samples: usize,
    /// `bench core|vectors --db PATH`: the workspace file to fill, kept afterwards and reused (not filled again) when
    /// it exists, so that a slow fill (a million notes) is paid once, and can run beside other work, while the
    /// searches are measured alone. Each `core` run adds the notes of its insert row (quire's and raw rusqlite's, the
    /// latter without change-log rows); each `vectors` run changes the bodies of 21 notes.
    pub(crate) db: Option<std::path::PathBuf>,
}

impl Options {
    pub(crate) fn parse(args: &[&str]) -> anyhow::Result<Options> {
        Options::with_notes(args, 100_000)
    }

    /// The flags, with `notes` notes unless `--notes` says otherwise (a bench whose workspace is smaller).
    pub(crate) fn with_notes(args: &[&str], notes: usize) -> anyhow::Result<Options> {
        let mut options = Options {
            notes,
            samples: 1_000,
            db: None,
        };
        let mut it = args.iter();
        while let Some(flag) = it.next() {
            let text = it.next().context("a value must follow each flag")?;
            if *flag == "--db" {
                options.db = Some(text.into());
                continue;
            }
            let value: usize = text.replace('_', "").parse()?;
            match *flag {
                "--notes" => options.notes = value,
                "--samples" => options.samples = value.max(10),
                other => bail!("unknown flag {other}"),
            }
        }
        Ok(options)
    }
}

/// How long `f` takes; its failure is the benchmark's.
pub(crate) fn time<T, E: Into<anyhow::Error>>(f: impl FnOnce() -> Result<T, E>) -> anyhow::Result<Duration> {
    let start = Instant::now();
    f().map_err(Into::into)?;
    Ok(start.elapsed())
}

/// The median and the 99th percentile of the samples.
pub(crate) fn stats(mut samples: Vec<Duration>) -> (Duration, Duration) {
    samples.sort();
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
    (at(0.5), at(0.99))
}

/// A duration as the tables print it: microseconds below a millisecond, else milliseconds.
pub(crate) fn show(d: Duration) -> String {
    if d < Duration::from_millis(1) {
        format!("{:.1} µs", d.as_secs_f64() * 1e6)
    } else {
        format!("{:.2} ms", d.as_secs_f64() * 1e3)
    }
}
