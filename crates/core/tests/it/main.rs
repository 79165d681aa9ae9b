//! Integration tests of quire-core through its public API, one binary with a module per concern.

mod fixture;
mod guards;
mod history;
mod properties;
mod search;
mod storage;
