//! Tools about history: what changed, when and by whom.

pub(crate) mod recent_changes;
