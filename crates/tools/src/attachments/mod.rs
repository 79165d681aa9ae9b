//! Tools about attachments: read the text extracted from one.

pub mod read_attachment;
