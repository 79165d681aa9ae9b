//! Tools about history: what changed, when and by whom.

pub mod recent_changes;
