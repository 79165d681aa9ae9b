//! The web server's API over real HTTP on loopback: one test program, one module per area (one program links the
//! crate's dependencies once, where a program per file linked them six times).

mod support;

mod attachments;
mod errors;
mod lock;
mod notes;
mod security;
mod semantic;
