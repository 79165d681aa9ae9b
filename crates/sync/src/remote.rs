//! The operator of a remote target (WebDAV, S3): its credentials from the environment, its HTTP client with the
//! timeouts of `[sync] timeout`, and the retries of a request that failed in a passing way.

use opendal::services::{S3, Webdav};
use opendal::{HttpTransporter, OperationContext, Operator};

use zeroize::Zeroizing;

use crate::address::Address;
use crate::credentials;

/// Why a remote target's operator could not be made.
#[derive(Debug)]
pub(crate) enum Unopened {
    /// opendal refused the settings.
    Storage(opendal::Error),
    /// The address or the environment lacks something; the message says what.
    Address(String),
}

/// The operator of a remote target (`None` for a folder, which `Target` builds itself).
pub(crate) fn remote_operator(address: &Address) -> Result<Option<Operator>, Unopened> {
    let shown = address.shown();
    let failed = Unopened::Storage;
    let op = match address {
        Address::Folder(_) => return Ok(None),
        Address::Webdav { endpoint, root, user } => {
            let mut builder = Webdav::default().endpoint(endpoint).root(root);
            if let Some(user) = user {
                builder = builder.username(user);
            }
            let password = std::env::var("QUIRE_WEBDAV_PASSWORD")
                .ok()
                .filter(|p| !p.is_empty())
                .map(Zeroizing::new)
                .or_else(|| Some(Zeroizing::new(credentials::stored(address)?.webdav_password.clone()?)));
            if let Some(password) = password {
                builder = builder.password(&password);
            }
            Operator::new(builder).map_err(failed)?
        }
        Address::S3 { bucket, prefix } => {
            let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
            // What the environment does not give, from what Settings kept (see `credentials`).
            let kept = credentials::stored(address).unwrap_or_default();
            let region = env("AWS_REGION")
                .or_else(|| env("AWS_DEFAULT_REGION"))
                .or_else(|| kept.s3_region.clone())
                .unwrap_or_else(|| "us-east-1".to_owned());
            let mut builder = S3::default()
                .bucket(bucket)
                .root(if prefix.is_empty() { "/" } else { prefix })
                .region(&region)
                .disable_config_load()
                .disable_ec2_metadata();
            if let Some(endpoint) = env("AWS_ENDPOINT_URL").or_else(|| kept.s3_endpoint.clone()) {
                builder = builder.endpoint(&endpoint);
            }
            let keys = match (env("AWS_ACCESS_KEY_ID"), env("AWS_SECRET_ACCESS_KEY")) {
                (Some(id), Some(secret)) => Some((id, Zeroizing::new(secret))),
                _ => kept
                    .s3_access_key_id
                    .clone()
                    .zip(kept.s3_secret_access_key.clone().map(Zeroizing::new)),
            };
            match keys {
                Some((id, secret)) => {
                    builder = builder.access_key_id(&id).secret_access_key(&secret);
                }
                None => {
                    return Err(Unopened::Address(format!(
                        "{shown}: give its access keys (in Settings, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, \
                         and AWS_ENDPOINT_URL for a provider other than AWS)"
                    )));
                }
            }
            Operator::new(builder).map_err(failed)?
        }
    };
    let client = http_client().map_err(|e| Unopened::Address(format!("{shown}: {e}")))?;
    let transport = HttpTransporter::new(opendal_http_transport_reqwest::ReqwestTransport::new(client));
    // A request that failed in a way that may pass (a connection refused, reset or stalled, a server's 5xx or 429)
    // is tried again twice within the sync, after about half a second and a second.
    let retry = opendal::layers::RetryLayer::new()
        .with_jitter()
        .with_max_times(RETRIES)
        .with_min_delay(std::time::Duration::from_millis(500))
        .with_max_delay(std::time::Duration::from_secs(2));
    Ok(Some(
        op.with_context(OperationContext::new().with_http_transport(transport))
            .layer(retry),
    ))
}

/// How many times a remote request that failed in a passing way is tried again within one sync.
pub const RETRIES: usize = 2;

/// The longest a remote target may keep quire waiting with nothing (to connect, or between two reads of an answer)
/// before the request fails, in milliseconds. See [`set_request_timeout`].
static TIMEOUT_MS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(DEFAULT_TIMEOUT.as_millis() as u64);

/// The default of [`set_request_timeout`]: a server that accepts and never answers fails a sync within about 20
/// seconds (three tries of 6 seconds, and the waits between them).
pub const DEFAULT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(6);

/// Sets how long a remote target may keep a request waiting with nothing before it fails (`[sync] timeout`), for
/// the targets opened from now on. A whole request has ten minutes at most, however slowly the data comes.
pub fn set_request_timeout(timeout: std::time::Duration) {
    let ms = u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX).max(1);
    TIMEOUT_MS.store(ms, std::sync::atomic::Ordering::Relaxed);
}

/// The HTTP client of remote targets: reqwest with rustls on ring (installed once per process as rustls's default
/// provider, as quire's other HTTP clients do), and the timeouts of [`set_request_timeout`].
fn http_client() -> Result<reqwest::Client, reqwest::Error> {
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(|| {
        // Fails only when another provider was installed first, which serves as well.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
    let stall = std::time::Duration::from_millis(TIMEOUT_MS.load(std::sync::atomic::Ordering::Relaxed));
    reqwest::Client::builder()
        .connect_timeout(stall)
        .read_timeout(stall)
        .timeout(std::time::Duration::from_secs(600))
        .build()
}
