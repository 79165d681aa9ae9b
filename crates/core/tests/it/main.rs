//! Integration tests of quire-core through its public API, one binary with a module per concern.
#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers stop the test where it failed"
)]

mod chats;
mod disk_full;
mod edit;
mod fields;
mod fixture;
mod guards;
mod history;
mod labels;
mod ledger;
mod links;
mod news;
mod notebooks;
mod periodic;
mod properties;
mod query;
mod review;
mod scope;
mod sealed;
mod sealed_props;
mod search;
mod semantic;
mod storage;
mod word_index;
