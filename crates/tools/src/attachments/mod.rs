//! Tools about attachments: read the text extracted from one.

pub(crate) mod read_attachment;
