//! xtask placeholder.
fn main() {}
