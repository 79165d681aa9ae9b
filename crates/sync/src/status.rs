//! A sync status in the words and JSON the command line prints (the web page reads the same [`Status`]).

use serde_json::json;

use crate::Status;

fn millis_text(millis: i64) -> String {
    quire_core::Timestamp(millis).to_rfc3339()
}

fn plural(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// `n` batches, in words.
pub fn batches(n: usize) -> String {
    if n == 1 {
        "1 batch".to_owned()
    } else {
        format!("{n} batches")
    }
}

impl Status {
    /// The status as `quire sync status --json` prints it.
    pub fn to_json(&self) -> serde_json::Value {
        let status = self;
        json!({
            "syncing": true,
            "device": status.device.to_string(),
            "name": status.name,
            "target": status.target,
            "last_sync": status.last_sync.map(millis_text),
            "last_error": status.last_error,
            "last_error_at": status.last_error_at.map(millis_text),
            "changed": status.changed,
            "unsent": status.unsent,
            "devices": status.devices.iter().map(|d| json!({
                "device": d.id,
                "name": d.name,
                "applied": d.applied,
                "seen": millis_text(d.seen),
                "forgotten": d.forgotten.map(millis_text),
            })).collect::<Vec<_>>(),
            "conflicts": status.conflicts,
            "documents": status.docs.0,
            "document_bytes": status.docs.1,
            "gaps": status.gaps.iter().map(|g| json!({
                "device": g.device,
                "name": g.name,
                "missing": g.missing,
                "later": g.later,
                "since": millis_text(g.since),
            })).collect::<Vec<_>>(),
        })
    }

    /// The status in words, as `quire sync status` prints it.
    pub fn describe(&self) -> String {
        let status = self;
        let mut text = format!(
            "This device: {} ({}), syncing with {}\n",
            status.name, status.device, status.target
        );
        text.push_str(&match status.last_sync {
            Some(at) => format!("Last sync: {}\n", millis_text(at)),
            None => "Last sync: never\n".to_owned(),
        });
        if let Some(error) = &status.last_error {
            let at = status
                .last_error_at
                .map_or(String::new(), |at| format!(" ({})", millis_text(at)));
            text.push_str(&format!("Last problem{at}: {error}\n"));
        }
        for gap in &status.gaps {
            text.push_str(&format!("Waiting since {}: {gap}.\n", millis_text(gap.since)));
        }
        if status.conflicts > 0 {
            text.push_str(&format!(
                "Conflicts: {} waiting for your choice (`quire sync conflicts`)\n",
                status.conflicts
            ));
        }
        text.push_str(&format!(
            "Waiting to be sent: {}{}\n",
            plural(status.changed as u64, "change"),
            if status.unsent > 0 {
                format!(", {} not uploaded", batches(status.unsent))
            } else {
                String::new()
            }
        ));
        if status.devices.is_empty() {
            text.push_str("Other devices: none seen yet\n");
        } else {
            text.push_str("Other devices:\n");
            for device in &status.devices {
                let state = match device.forgotten {
                    Some(at) => format!("forgotten {}", millis_text(at)),
                    None => format!("last change applied {}", millis_text(device.seen)),
                };
                text.push_str(&format!("  {} ({}): {state}\n", device.name, device.id));
            }
        }
        text
    }
}
