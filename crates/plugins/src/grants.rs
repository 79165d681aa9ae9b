//! Grants: a plugin's access to quire's own MCP server, as a named MCP token (`plugin-NAME`) made and revoked with its
//! entry, limited to the notebooks the entry names, handed to it in `QUIRE_MCP_TOKEN` (and `QUIRE_MCP_URL` when the
//! entry names the server). The tokens themselves are kept by whoever keeps MCP's tokens ([`GrantTokens`], quire-host
//! in the binary); the plugin side of each (which token goes with which grant) is kept here, in `plugin-tokens.json`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::config::{CONFIG_FILE, PluginConfig, read_entries, resolve};
use crate::error::PluginError;
use crate::spec::PluginSpec;

/// Where the tokens of granted plugins are kept (mode 0600), by plugin name.
const TOKENS_FILE: &str = "plugin-tokens.json";

/// Makes and revokes the named MCP tokens of grants.
pub trait GrantTokens: Send + Sync {
    /// Makes the named token `name`, replacing one of that name: limited to `notebooks` (titles or paths; none: the
    /// whole workspace), read-only if asked. Returns the token.
    fn mint(&self, name: &str, notebooks: &[String], read_only: bool) -> Result<String, GrantError>;
    /// Revokes the named token if there is one; returns whether there was.
    fn revoke(&self, name: &str) -> Result<bool, GrantError>;
}

/// Why a grant's token could not be made or revoked (a notebook that does not exist, a token file that cannot be
/// written), as the keeper of the tokens says it.
pub type GrantError = Box<dyn std::error::Error + Send + Sync>;

/// The named MCP token of a plugin.
pub fn token_name(plugin: &str) -> String {
    format!("plugin-{plugin}")
}

/// A granted plugin's MCP token, with the grant it was made for (a changed grant makes a new token).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct StoredGrant {
    token: String,
    notebooks: Vec<String>,
    read_only: bool,
}

/// Whether a stored token was made for the entry's grant as it is now.
fn grant_matches(entry: &PluginConfig, stored: &StoredGrant) -> bool {
    entry
        .grant
        .as_ref()
        .is_some_and(|g| g.notebooks == stored.notebooks && g.read_only == stored.read_only)
}

fn read_tokens(dir: &Path) -> Result<BTreeMap<String, StoredGrant>, PluginError> {
    let path = dir.join(TOKENS_FILE);
    match std::fs::read_to_string(&path) {
        Ok(text) => serde_json::from_str(&text).map_err(|e| PluginError::config(&path, format!("damaged: {e}"))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(BTreeMap::new()),
        Err(e) => Err(PluginError::io("read", &path, e)),
    }
}

fn write_tokens(dir: &Path, tokens: &BTreeMap<String, StoredGrant>) -> Result<(), PluginError> {
    std::fs::create_dir_all(dir).map_err(|e| PluginError::io("create", dir, e))?;
    let path = dir.join(TOKENS_FILE);
    let text = serde_json::to_string_pretty(tokens).map_err(|e| PluginError::config(&path, e.to_string()))?;
    quire_loopback::write_private(&path, &text).map_err(|e| PluginError::io("write", &path, e))
}

/// Makes the MCP token of every granted plugin that has none for its grant as it is now (an entry written by hand,
/// or whose grant changed: the old token is replaced, so it stops working), and revokes those of plugins whose entry
/// has no grant any more, or no entry at all.
pub fn keep_grants(dir: &Path, minter: &dyn GrantTokens) -> Result<(), PluginError> {
    let entries = read_entries(dir)?;
    let mut tokens = read_tokens(dir)?;
    let before = tokens.clone();
    let mut granted = BTreeSet::new();
    for entry in &entries {
        match &entry.grant {
            Some(grant) if entry.command.is_some() => {
                granted.insert(entry.name.clone());
                if tokens.get(&entry.name).is_some_and(|t| grant_matches(entry, t)) {
                    continue;
                }
                let token = minter
                    .mint(&token_name(&entry.name), &grant.notebooks, grant.read_only)
                    .map_err(|e| PluginError::Grant {
                        plugin: entry.name.clone(),
                        message: e.to_string(),
                    })?;
                tokens.insert(
                    entry.name.clone(),
                    StoredGrant {
                        token,
                        notebooks: grant.notebooks.clone(),
                        read_only: grant.read_only,
                    },
                );
            }
            _ => {}
        }
    }
    let gone: Vec<String> = tokens.keys().filter(|name| !granted.contains(*name)).cloned().collect();
    for name in gone {
        tokens.remove(&name);
        minter.revoke(&token_name(&name)).map_err(|e| PluginError::Grant {
            plugin: name,
            message: e.to_string(),
        })?;
    }
    if tokens != before {
        write_tokens(dir, &tokens)?;
    }
    Ok(())
}

/// Forgets a plugin's grant and revokes its token; returns whether there was a token to revoke.
pub fn drop_grant(dir: &Path, name: &str, minter: Option<&dyn GrantTokens>) -> Result<bool, PluginError> {
    let mut tokens = read_tokens(dir)?;
    if tokens.remove(name).is_some() {
        write_tokens(dir, &tokens)?;
    }
    match minter {
        Some(minter) => minter.revoke(&token_name(name)).map_err(|e| PluginError::Grant {
            plugin: name.to_owned(),
            message: e.to_string(),
        }),
        None => Ok(false),
    }
}

/// The entries that can be used, resolved with their grants' tokens, and a sentence for each that cannot (a bad entry
/// stops no other plugin, nor quire).
pub fn usable_specs(dir: &Path) -> Result<(Vec<PluginSpec>, Vec<String>), PluginError> {
    let entries = read_entries(dir)?;
    let tokens = read_tokens(dir)?;
    let mut names = BTreeSet::new();
    let (mut specs, mut problems) = (Vec::new(), Vec::new());
    let file = dir.join(CONFIG_FILE);
    for entry in &entries {
        if !names.insert(entry.name.clone()) {
            problems.push(format!(
                "{}: two [[plugins]] are named '{}'; the second is left out",
                file.display(),
                entry.name
            ));
            continue;
        }
        let token = tokens
            .get(&entry.name)
            .filter(|t| grant_matches(entry, t))
            .map(|t| t.token.as_str());
        match resolve(entry, token) {
            Ok(spec) => specs.push(spec),
            Err(e) => problems.push(format!("{}: [[plugins]] '{}': {e}", file.display(), entry.name)),
        }
    }
    Ok((specs, problems))
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::config::{GrantConfig, write_entry};

    #[derive(Default)]
    struct Minter {
        made: Mutex<Vec<String>>,
        revoked: Mutex<Vec<String>>,
    }

    impl GrantTokens for Minter {
        fn mint(&self, name: &str, _: &[String], read_only: bool) -> Result<String, GrantError> {
            let mut made = self.made.lock().unwrap();
            made.push(name.to_owned());
            Ok(format!("{name}-{}-{read_only}", made.len()))
        }

        fn revoke(&self, name: &str) -> Result<bool, GrantError> {
            self.revoked.lock().unwrap().push(name.to_owned());
            Ok(true)
        }
    }

    fn granted(name: &str, read_only: bool) -> PluginConfig {
        PluginConfig {
            name: name.into(),
            command: Some("run".into()),
            grant: Some(GrantConfig {
                notebooks: vec![],
                read_only,
                url: Some("http://127.0.0.1:1/mcp".into()),
            }),
            ..PluginConfig::default()
        }
    }

    fn token_of(dir: &Path, name: &str) -> Option<String> {
        let (specs, _) = usable_specs(dir).unwrap();
        let spec = specs.into_iter().find(|s| s.name == name)?;
        let crate::PluginTransport::Stdio { env, .. } = spec.transport else {
            return None;
        };
        env.get("QUIRE_MCP_TOKEN").cloned()
    }

    #[test]
    fn a_grant_gets_a_token_a_changed_grant_a_new_one_and_a_removed_entry_none() {
        let dir = tempfile::tempdir().unwrap();
        let minter = Minter::default();
        write_entry(dir.path(), &granted("one", false)).unwrap();
        keep_grants(dir.path(), &minter).unwrap();
        let first = token_of(dir.path(), "one").expect("a token");
        keep_grants(dir.path(), &minter).unwrap();
        assert_eq!(
            token_of(dir.path(), "one").as_ref(),
            Some(&first),
            "kept while the grant is the same"
        );
        crate::config::remove_entry(dir.path(), "one").unwrap();
        write_entry(dir.path(), &granted("one", true)).unwrap();
        keep_grants(dir.path(), &minter).unwrap();
        assert_ne!(
            token_of(dir.path(), "one"),
            Some(first),
            "a changed grant makes a new token"
        );
        // An entry taken out of the file by hand: its token is revoked at the next start.
        crate::config::remove_entry(dir.path(), "one").unwrap();
        keep_grants(dir.path(), &minter).unwrap();
        assert_eq!(*minter.revoked.lock().unwrap(), ["plugin-one"]);
        assert!(read_tokens(dir.path()).unwrap().is_empty());
    }
}
