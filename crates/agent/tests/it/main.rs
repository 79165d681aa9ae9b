//! Tests of quire-agent: the loop and the chat lifecycle with a scripted model, the tool lists, both wire formats
//! against a local mock server, and properties over random model scripts.
#![expect(clippy::unwrap_used, reason = "tests stop where they fail")]

mod chats;
mod lists;
mod long_chats;
mod long_notes;
mod plugins;
mod props;
mod scripted;
mod turns;
mod usage;
mod wire;
