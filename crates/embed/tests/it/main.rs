//! Embedders and model downloads against local servers and the test model: one test program, one module per area.

#[cfg(feature = "candle")]
mod support;

mod local_model;
mod models;
mod pinned;
mod remote;
