//! Imports and exports against real files: one test program, one module per format or property (one program links
//! the crate's dependencies once, where a program per file linked them eight times).

mod support;

mod apps;
mod enex;
mod enex_fixtures;
mod enml_roundtrip;
mod export;
mod folder_notes;
mod import;
mod joplin;
mod obsidian;
mod roundtrip;
