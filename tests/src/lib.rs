//! quire-tests: helpers for the end-to-end tests that run the real `quire` binary on a temporary workspace.
