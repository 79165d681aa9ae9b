//! `quire device pair|list|revoke`: the words and the QR code; quire-host's `devices` decides.

use clap::Subcommand;
use quire_core::Workspace;

use crate::output::{Output, json_value, line};

#[derive(Debug, Subcommand)]
pub(crate) enum DeviceCommand {
    /// A one-time code (and its QR code) that pairs a device: open the address it prints on the device, or type the
    /// code at /pair. It works once, for ten minutes.
    Pair {
        /// What to call the device (`phone`, `Anna's tablet`).
        name: String,
        /// Limit the device to this notebook (title or path) and what is inside it; repeat for more.
        #[arg(long = "notebook", short = 'n', value_name = "NOTEBOOK")]
        notebooks: Vec<String>,
        /// The device reads and never writes.
        #[arg(long)]
        read_only: bool,
        /// The address the device reaches quire at (default: the running `quire serve --listen`'s).
        #[arg(long, value_name = "URL")]
        url: Option<String>,
    },
    /// The paired devices, and the codes not yet used.
    List,
    /// End a device (or an unused code) at once: its next request is refused, its open page stops.
    Revoke {
        /// The device's name, as `quire device list` shows it.
        name: String,
    },
}

pub(crate) fn run(
    out: &Output,
    ws: impl FnOnce() -> anyhow::Result<Workspace>,
    command: DeviceCommand,
) -> anyhow::Result<()> {
    match command {
        DeviceCommand::Pair {
            name,
            notebooks,
            read_only,
            url,
        } => {
            let made = quire_host::devices::pair(&ws()?, &name, &notebooks, read_only, url.as_deref())?;
            if out.json {
                return json_value(&made);
            }
            let reach = match (&made.notebooks[..], made.read_only) {
                ([], false) => "every notebook".to_owned(),
                ([], true) => "every notebook, to read".to_owned(),
                (some, only) => format!("{}{}", some.join(", "), if only { ", to read" } else { "" }),
            };
            line(&format!("Pairing code for {:?} ({reach}): {}", made.name, made.code))?;
            let replaced = if made.replaced {
                " The code made before for this name opens nothing now."
            } else {
                ""
            };
            line(&format!("It works once, until {}.{replaced}", local_time(made.expires)))?;
            match &made.link {
                Some(link) => {
                    line(&format!("On the device, open {link}\nor scan:\n"))?;
                    line(&quire_web::qr_text(link))?;
                    match &made.fingerprint {
                        Some(fingerprint) => line(&format!(
                            "The browser will warn of quire's own certificate: go on only if the SHA-256 fingerprint \
                             it shows is {fingerprint}."
                        )),
                        None => Ok(()),
                    }
                }
                None => line(
                    "No quire serve --listen runs here now. Start one (it prints the address your devices reach), \
                     then open that address's /pair on the device and type the code; or pass --url ADDRESS to get a \
                     link and a QR code now.",
                ),
            }
        }
        DeviceCommand::List => {
            let file = quire_host::devices::list()?;
            if out.json {
                return json_value(&file);
            }
            if file.devices.is_empty() && file.pairings.is_empty() {
                return line("No device is paired (quire device pair NAME).");
            }
            for d in &file.devices {
                let seen = d.last_seen.map_or("never".to_owned(), local_time);
                let passkeys = match d.passkeys.len() {
                    0 => String::new(),
                    1 => "  a passkey".to_owned(),
                    n => format!("  {n} passkeys"),
                };
                line(&format!(
                    "{}  {}{passkeys}  last seen {seen}",
                    d.name,
                    limits(&d.limits)
                ))?;
            }
            for p in &file.pairings {
                let until = local_time(p.expires);
                line(&format!(
                    "{}  {}  code not used yet (until {until})",
                    p.name,
                    limits(&p.limits)
                ))?;
            }
            Ok(())
        }
        DeviceCommand::Revoke { name } => {
            quire_host::devices::revoke(&name)?;
            if out.json {
                return json_value(&serde_json::json!({ "revoked": name }));
            }
            line(&format!(
                "{name} is ended: its next request is refused (a code not yet used opens nothing)."
            ))
        }
    }
}

fn limits(limits: &quire_web::devices::DeviceLimits) -> String {
    let reach = if limits.notebooks.is_empty() {
        "all notebooks".to_owned()
    } else {
        limits
            .notebooks
            .iter()
            .map(|n| n.path.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    if limits.read_only {
        format!("{reach}, read-only")
    } else {
        reach
    }
}

/// A time as this computer's clock says it, to the minute.
fn local_time(millis: i64) -> String {
    jiff::Timestamp::from_millisecond(millis)
        .map(|t| {
            t.to_zoned(jiff::tz::TimeZone::system())
                .strftime("%Y-%m-%d %H:%M")
                .to_string()
        })
        .unwrap_or_else(|_| quire_core::Timestamp(millis).to_rfc3339())
}
