//! Where a target is: a folder, a WebDAV folder (Nextcloud and others) or an S3-compatible bucket (AWS, R2, MinIO,
//! Garage), written as a person gives it and built into an opendal operator with quire's own HTTP client.
//!
//! Secrets never go into the address (it is stored in the workspace and shown): a WebDAV password comes from
//! `QUIRE_WEBDAV_PASSWORD` (the user from the address or `QUIRE_WEBDAV_USER`), S3 credentials from
//! `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY`, the region from `AWS_REGION` (default `us-east-1`) and another
//! provider's endpoint from `AWS_ENDPOINT_URL`.

use std::path::PathBuf;

/// An address that is not one of a target, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BadAddress(pub String);

/// A target's place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Address {
    /// A folder on this computer (or one a file-sync tool or a network share carries).
    Folder(PathBuf),
    /// `webdav://host/path` (HTTPS), or `webdav+http://host:port/path` (plain HTTP, for a server on this machine).
    Webdav {
        /// `https://host:port` or `http://host:port`.
        endpoint: String,
        /// The folder on the server.
        root: String,
        /// The user, from the address or `QUIRE_WEBDAV_USER`.
        user: Option<String>,
    },
    /// `s3://bucket/prefix`.
    S3 {
        /// The bucket.
        bucket: String,
        /// The folder in it ("" for the whole bucket).
        prefix: String,
    },
}

impl Address {
    /// Reads what a person typed: a URL of a scheme above, or else a folder's path.
    pub fn parse(text: &str) -> Result<Address, BadAddress> {
        let Some((scheme, _)) = text.split_once("://") else {
            return Ok(Address::Folder(PathBuf::from(text)));
        };
        // Messages show the address without what stands before an `@` (a password typed there is never repeated).
        let shown = match text.split_once("://") {
            Some((scheme, rest)) => match rest.split_once('@') {
                Some((_, host)) => format!("{scheme}://…@{host}"),
                None => text.to_owned(),
            },
            None => text.to_owned(),
        };
        let bad = |why: &str| BadAddress(format!("{shown}: {why}"));
        let url = url::Url::parse(text).map_err(|e| bad(&e.to_string()))?;
        if url.password().is_some() {
            return Err(bad(
                "give the password in QUIRE_WEBDAV_PASSWORD, not in the address (the address is stored and shown)",
            ));
        }
        match scheme {
            "webdav" | "webdav+http" | "webdav+https" => {
                let host = url.host_str().ok_or_else(|| bad("no server in the address"))?;
                let http = if scheme == "webdav+http" { "http" } else { "https" };
                let endpoint = match url.port() {
                    Some(port) => format!("{http}://{host}:{port}"),
                    None => format!("{http}://{host}"),
                };
                let user = Some(url.username())
                    .filter(|u| !u.is_empty())
                    .map(str::to_owned)
                    .or_else(|| std::env::var("QUIRE_WEBDAV_USER").ok());
                Ok(Address::Webdav {
                    endpoint,
                    root: folder_path(url.path()),
                    user,
                })
            }
            "s3" => {
                let bucket = url.host_str().ok_or_else(|| bad("no bucket in the address"))?;
                Ok(Address::S3 {
                    bucket: bucket.to_owned(),
                    prefix: folder_path(url.path()),
                })
            }
            other => Err(bad(&format!(
                "{other}:// is not a kind of target quire knows (a folder, webdav://, webdav+http:// or s3://)"
            ))),
        }
    }

    /// The address as stored and shown: no secret in it.
    pub fn shown(&self) -> String {
        match self {
            Address::Folder(path) => path.display().to_string(),
            Address::Webdav { endpoint, root, user } => {
                let (scheme, host) = match endpoint.strip_prefix("http://") {
                    Some(host) => ("webdav+http", host),
                    None => ("webdav", endpoint.strip_prefix("https://").unwrap_or(endpoint)),
                };
                let user = user.as_deref().map(|u| format!("{u}@")).unwrap_or_default();
                format!("{scheme}://{user}{host}{root}")
            }
            Address::S3 { bucket, prefix } => format!("s3://{bucket}{prefix}"),
        }
    }
}

/// A path as an opendal root: from `/`, ending in `/` (`/` alone for none).
fn folder_path(path: &str) -> String {
    let trimmed = path.trim_matches('/');
    if trimmed.is_empty() {
        "/".to_owned()
    } else {
        format!("/{trimmed}/")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_read_and_show_without_secrets() {
        assert_eq!(
            Address::parse("/tmp/sync").unwrap(),
            Address::Folder("/tmp/sync".into())
        );
        let dav = Address::parse("webdav+http://me@127.0.0.1:8080/remote.php/dav/quire").unwrap();
        assert_eq!(
            dav,
            Address::Webdav {
                endpoint: "http://127.0.0.1:8080".into(),
                root: "/remote.php/dav/quire/".into(),
                user: Some("me".into()),
            }
        );
        assert_eq!(dav.shown(), "webdav+http://me@127.0.0.1:8080/remote.php/dav/quire/");
        assert_eq!(Address::parse(&dav.shown()).unwrap(), dav);
        let s3 = Address::parse("s3://notes/quire").unwrap();
        assert_eq!(s3.shown(), "s3://notes/quire/");
        assert_eq!(Address::parse(&s3.shown()).unwrap(), s3);
        assert!(Address::parse("webdav://me:secret@host/x").is_err());
        assert!(Address::parse("ftp://host/x").is_err());
    }
}
