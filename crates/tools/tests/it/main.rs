//! Tests of quire-tools through the registry, on a fixture workspace: the catalog, every tool's contract, dispatch,
//! plugins and properties.
#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers stop the test where it failed"
)]

mod budget;
mod catalog;
mod contracts;
mod dispatch;
mod fixture;
mod links;
mod plugins;
mod properties;
mod typed;
