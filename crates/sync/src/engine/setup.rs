//! Setting a workspace up with a target as the command line and the web app both do it: the address as typed made
//! absolute, the device's default name, and the first sync that follows `init` and `join`.

use std::path::Path;

use quire_core::Workspace;

use super::{Device, SyncError, SyncReport};
use crate::address::Address;
use crate::key::SyncKey;

impl Address {
    /// [`Address::parse`], with a folder made absolute against the current directory, so that it means the same from
    /// any folder the next command runs in.
    pub fn parse_here(text: &str) -> Result<Address, SyncError> {
        Ok(match Address::parse(text)? {
            Address::Folder(path) => {
                Address::Folder(std::path::absolute(&path).map_err(|source| SyncError::Folder {
                    path: path.display().to_string(),
                    source,
                })?)
            }
            remote => remote,
        })
    }
}

impl Device {
    /// The name a device gets: the one given (trimmed), or else the computer's.
    pub fn name_or_host(given: Option<&str>) -> String {
        if let Some(name) = given.map(str::trim).filter(|n| !n.is_empty()) {
            return name.to_owned();
        }
        ["/proc/sys/kernel/hostname", "/etc/hostname"]
            .iter()
            .find_map(|path| std::fs::read_to_string(Path::new(path)).ok())
            .map(|name| name.trim().to_owned())
            .or_else(|| std::env::var("HOSTNAME").ok())
            .filter(|name| !name.is_empty())
            .unwrap_or_else(|| "a device".to_owned())
    }

    /// [`Device::init`] (a folder target is made first) and the first sync, which sends every note.
    pub async fn set_up(
        ws: Workspace,
        address: &Address,
        key: SyncKey,
        lock: &[u8],
        name: &str,
    ) -> Result<(Device, SyncReport), SyncError> {
        if let Address::Folder(folder) = address {
            std::fs::create_dir_all(folder).map_err(|source| SyncError::Folder {
                path: folder.display().to_string(),
                source,
            })?;
        }
        let device = Device::init(ws, address, key, lock, name).await?;
        let report = device.sync().await?;
        Ok((device, report))
    }

    /// [`Device::join`], then what the target holds first (a workspace that synced here before, left or restored,
    /// takes its notes as they are there, instead of folding its own copies as new text beside them), then a sync;
    /// the two reports as one.
    pub async fn join_and_catch_up(
        ws: Workspace,
        address: &Address,
        key: SyncKey,
        lock: &[u8],
        name: &str,
    ) -> Result<(Device, SyncReport), SyncError> {
        let device = Device::join(ws, address, key, lock, name).await?;
        let received = device.receive().await?;
        let mut report = device.sync().await?;
        report.applied_batches += received.applied_batches;
        report.applied_notes += received.applied_notes;
        report.applied_snapshots += received.applied_snapshots;
        report.refused.extend(received.refused);
        Ok((device, report))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_given_wins_and_a_blank_one_is_the_computers() {
        assert_eq!(Device::name_or_host(Some("  laptop ")), "laptop");
        let host = Device::name_or_host(Some("   "));
        assert!(!host.trim().is_empty());
        assert_eq!(Device::name_or_host(None), host);
    }

    #[test]
    fn a_relative_folder_is_made_absolute_and_a_url_stays() -> Result<(), SyncError> {
        let Address::Folder(folder) = Address::parse_here("notes-target")? else {
            return Err(SyncError::NotSetUp);
        };
        assert!(folder.is_absolute() && folder.ends_with("notes-target"));
        assert!(!matches!(
            Address::parse_here("webdav://host.invalid/dav")?,
            Address::Folder(_)
        ));
        Ok(())
    }
}
