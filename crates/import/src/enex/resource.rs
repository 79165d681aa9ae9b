//! A resource of an ENEX note: its base64 decoded into a file of the temporary folder as it is read (hashed with MD5
//! on the way, as ENML names it), then named by that hash, with a title and extension for its attachment.

use base64::Engine as _;
use md5::{Digest, Md5};
use quire_core::hex;

use crate::source::Source;

#[derive(Default)]
pub(super) struct RawResource {
    /// Its `<data>`, decoded into a file as it is read.
    pub(super) data: Option<ResourceFile>,
    pub(super) mime: String,
    pub(super) file_name: String,
    /// The `objID` of its `<recognition>` index: what some exports' `<en-media hash>` names it by when that is
    /// not the MD5 of its bytes (interop finding: such media stayed dangling links).
    pub(super) recognition_id: Option<String>,
}

/// A resource decoded into the temporary folder.
pub(super) struct Stored {
    /// MD5 of its bytes, as ENML names it.
    pub(super) hash: String,
    /// What the note's text links it by (`:/` and this): its hash, or for the same bytes already carried by an
    /// earlier note, the hash and this note's number (each note keeps its own copy, as in Evernote).
    pub(super) link: String,
    /// Its file in the temporary folder (`HASH.ext`, beside the note's other files).
    pub(super) file_name: String,
    pub(super) title: String,
    /// Another name the note's text may link it by (its recognition's `objID`).
    pub(super) also: Option<String>,
    pub(super) mime: String,
}

/// How much base64 is decoded at a time.
const DECODE_CHUNK: usize = 64 * 1024;

/// A resource's `<data>`, decoded from base64 into a file of the temporary folder as it is read, and hashed on the
/// way: a resource of any size takes a few KiB of memory, and one over the limit is let go as soon as it is.
pub(super) struct ResourceFile {
    path: std::path::PathBuf,
    file: Option<std::io::BufWriter<std::fs::File>>,
    md5: Md5,
    /// Base64 characters not decoded yet (fewer than a chunk and four).
    pending: Vec<u8>,
    size: u64,
    /// Why it cannot be attached, once that is known.
    problem: Option<String>,
}

impl ResourceFile {
    pub(super) fn create(path: std::path::PathBuf) -> ResourceFile {
        let (file, problem) = match std::fs::File::create(&path) {
            Ok(file) => (Some(std::io::BufWriter::new(file)), None),
            Err(e) => (None, Some(format!("cannot write it to a temporary file: {e}"))),
        };
        ResourceFile {
            path,
            file,
            md5: Md5::default(),
            pending: Vec::new(),
            size: 0,
            problem,
        }
    }

    /// Takes base64 text: white space is not data, nor (outside CDATA) an entity such as `&#13;`.
    pub(super) fn push(&mut self, text: &[u8], cdata: bool, in_entity: &mut bool) {
        if self.problem.is_some() {
            return;
        }
        for &b in text {
            match b {
                b'&' if !cdata => *in_entity = true,
                b';' if *in_entity => *in_entity = false,
                _ if *in_entity || b.is_ascii_whitespace() => {}
                _ => self.pending.push(b),
            }
        }
        if self.pending.len() >= DECODE_CHUNK {
            self.decode(false);
        }
    }

    /// Decodes what is pending: whole groups of four characters, or (`last`) everything.
    fn decode(&mut self, last: bool) {
        let whole = if last {
            self.pending.len()
        } else {
            self.pending.len() / 4 * 4
        };
        if self.problem.is_none() {
            match base64::engine::general_purpose::STANDARD.decode(&self.pending[..whole]) {
                Ok(bytes) => {
                    self.size += bytes.len() as u64;
                    if self.size > quire_core::MAX_ATTACHMENT_BYTES as u64 {
                        self.problem = Some("more than an attachment may hold".into());
                    } else {
                        self.md5.update(&bytes);
                        if let Some(file) = self.file.as_mut()
                            && let Err(e) = std::io::Write::write_all(file, &bytes)
                        {
                            self.problem = Some(format!("cannot write it to a temporary file: {e}"));
                        }
                    }
                }
                Err(e) => self.problem = Some(format!("its data is not valid base64 ({e})")),
            }
            if self.problem.is_some() {
                // Nothing more is written: the file goes now, not at the end of the resource.
                self.file = None;
                let _ = std::fs::remove_file(&self.path);
            }
        }
        self.pending.drain(..whole);
    }

    /// The file, complete: its path, MD5 (as hex) and size; or why it cannot be attached (the file is removed).
    fn finish(mut self) -> Result<(std::path::PathBuf, String, u64), String> {
        self.decode(true);
        if let Some(file) = self.file.take()
            && let Err(e) = file.into_inner()
            && self.problem.is_none()
        {
            self.problem = Some(format!("cannot write it to a temporary file: {e}"));
        }
        if let Some(problem) = self.problem {
            let _ = std::fs::remove_file(&self.path);
            return Err(problem);
        }
        Ok((self.path, hex(&self.md5.finalize()), self.size))
    }
}

/// Which note of the file first carried each resource file, by the file's path in the temporary folder.
pub(super) type Owners = std::collections::HashMap<String, usize>;

/// Names a decoded resource by its MD5 in the temporary folder (once per content and note); or says why it is not
/// attached. `note` is the note's number in the file: the same bytes in a later note are a copy of its own.
pub(super) fn store(
    resource: RawResource,
    number: usize,
    (folder, note): (&str, usize),
    owners: &mut Owners,
    out: &mut Source,
) -> Result<Stored, String> {
    let label = if resource.file_name.is_empty() {
        format!("attachment {number}")
    } else {
        resource.file_name.clone()
    };
    let (part, hash, size) = resource
        .data
        .ok_or_else(|| "it has no data".to_owned())
        .and_then(ResourceFile::finish)
        .map_err(|reason| format!("{label} not attached: {reason}"))?;
    let extension = extension_for(&resource.file_name, &resource.mime);
    let shared = format!("{folder}/{hash}.{extension}");
    let link = match owners.get(&shared) {
        Some(&first) if first != note => format!("{hash}-{note}"),
        _ => hash.clone(),
    };
    owners.entry(shared).or_insert(note);
    let file_name = format!("{link}.{extension}");
    let rel_file = format!("{folder}/{file_name}");
    if out.files.contains_key(&rel_file) {
        let _ = std::fs::remove_file(&part);
    } else {
        std::fs::rename(&part, out.root.join(&rel_file))
            .map_err(|e| format!("{label} not attached: cannot write it to a temporary file: {e}"))?;
        out.files.insert(rel_file.clone(), size);
        let mime = resource.mime.trim().to_ascii_lowercase();
        if mime
            .split_once('/')
            .is_some_and(|(a, b)| !a.is_empty() && !b.is_empty())
            && !mime.contains(char::is_whitespace)
        {
            out.mimes.insert(rel_file.clone(), mime);
        }
        out.targets.insert(link.clone(), rel_file.clone());
    }
    let also = resource.recognition_id.filter(|id| *id != hash && *id != link);
    if let Some(id) = &also {
        out.targets.entry(id.clone()).or_insert(rel_file);
    }
    // A title with an extension, so the attachment's type is known.
    let title = if resource.file_name.is_empty() {
        format!("attachment-{number}.{extension}")
    } else if resource.file_name.contains('.') {
        resource.file_name.clone()
    } else {
        format!("{}.{extension}", resource.file_name)
    };
    Ok(Stored {
        hash,
        link,
        file_name,
        title,
        also,
        mime: resource.mime,
    })
}

/// A plain extension for a resource's file: its name's, or one for its media type.
fn extension_for(file_name: &str, mime: &str) -> String {
    let from_name = file_name
        .rsplit_once('.')
        .map(|(_, e)| e.to_lowercase())
        .filter(|e| !e.is_empty() && e.len() <= 10 && e.bytes().all(|b| b.is_ascii_alphanumeric()));
    from_name.unwrap_or_else(|| {
        match mime {
            "image/png" => "png",
            "image/jpeg" => "jpg",
            "image/gif" => "gif",
            "image/webp" => "webp",
            "image/svg+xml" => "svg",
            "application/pdf" => "pdf",
            "text/plain" => "txt",
            "text/html" => "html",
            "audio/mpeg" => "mp3",
            "audio/wav" => "wav",
            "video/mp4" => "mp4",
            _ => "bin",
        }
        .to_owned()
    })
}
