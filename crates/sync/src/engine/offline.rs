//! Which sync errors are the target out of reach (the changes wait) and which are a problem to fix.

use super::SyncError;
use crate::target::TargetError;

impl SyncError {
    /// Whether a server refused quire's credentials (a password or keys to fix; never offline).
    pub fn is_refused(&self) -> bool {
        matches!(self, SyncError::Target(TargetError::Storage { error, .. }) if crate::said::refused(error))
    }

    /// Whether this is the target being out of reach (a server that cannot be connected to, that stalls or resets, a
    /// folder that is not there now or holds no target: a disk not mounted), not a problem to fix: the changes wait
    /// here, and a later sync sends them. A server that refused the credentials is a problem to fix.
    pub fn is_offline(&self) -> bool {
        match self {
            // A folder not there, or there and empty: a disk not plugged in, or its mount point without it.
            SyncError::Target(TargetError::NoFolder(_) | TargetError::NotATarget(_)) => true,
            _ if self.is_refused() => false,
            SyncError::Target(TargetError::Storage { error, .. }) => {
                // Persistent: passing failures that stayed through every try.
                error.is_temporary() || error.is_persistent() || error.message().contains("send http request")
            }
            _ => false,
        }
    }
}
