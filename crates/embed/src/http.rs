//! What every HTTP client of quire shares (the chat model clients of quire-agent and the HTTP embedder here):
//! configuration, sending with timeouts, retries and backoff, errors with a body excerpt, and reading a
//! server-sent-events stream. It lives in this crate because quire-agent depends on it and not the other way round.

use std::time::Duration;

use futures::StreamExt;

/// A model call that failed: the provider, the HTTP status when there was one, and a short excerpt of the body.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{provider} {}{message}", status.map(|s| format!("returned HTTP {s}: ")).unwrap_or_default())]
pub struct ModelError {
    /// Which client failed (`openai-compatible`, `anthropic`, `scripted`).
    pub provider: String,
    /// The HTTP status, if the server answered.
    pub status: Option<u16>,
    /// What went wrong, with at most a few hundred characters of the response body.
    pub message: String,
}

impl ModelError {
    /// A failure without an HTTP status.
    pub fn new(provider: &str, message: impl Into<String>) -> ModelError {
        ModelError {
            provider: provider.to_owned(),
            status: None,
            message: message.into(),
        }
    }
}

/// How a client reaches its model.
#[derive(Clone)]
pub struct ClientConfig {
    /// The API's base URL, such as `http://localhost:11434/v1` for Ollama.
    pub base_url: String,
    /// The model's name at that API.
    pub model: String,
    /// The API key, if the API needs one. Never logged.
    pub api_key: Option<String>,
    /// The most time one request may take, streaming included.
    pub timeout: Duration,
    /// How many times a 429 or 5xx answer is retried.
    pub retries: u32,
    /// The wait before the first retry; it doubles each time (a `Retry-After` header wins).
    pub backoff: Duration,
}

impl ClientConfig {
    /// A configuration with the usual timeout (5 minutes) and retries (3, from 500 ms).
    pub fn new(base_url: impl Into<String>, model: impl Into<String>, api_key: Option<String>) -> ClientConfig {
        ClientConfig {
            base_url: base_url.into().trim_end_matches('/').to_owned(),
            model: model.into(),
            api_key,
            timeout: Duration::from_secs(300),
            retries: 3,
            backoff: Duration::from_millis(500),
        }
    }
}

impl std::fmt::Debug for ClientConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientConfig")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("timeout", &self.timeout)
            .field("retries", &self.retries)
            .finish()
    }
}

/// How every HTTP client of quire starts: reqwest's builder, with rustls using ring for its cryptography (installed
/// once per process as rustls's default provider). Build clients only through this: reqwest is compiled without a
/// provider of its own (the default one, aws-lc, costs a large C build), and panics when none is installed.
pub fn builder() -> reqwest::ClientBuilder {
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(|| {
        // Fails only when another provider was installed first, which serves as well.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
    reqwest::Client::builder()
}

/// Why [`pinned_get`] read nothing.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct GetError(String);

/// `GET url`, connecting only to `addresses` (already checked by the caller: the host name is not looked up again),
/// following no redirect, within `timeout`, reading at most `max_bytes` of a successful answer. For documents named
/// by someone else (an OAuth client's metadata), where where the request goes must not change between check and use.
pub async fn pinned_get(
    url: &str,
    addresses: &[std::net::SocketAddr],
    max_bytes: usize,
    timeout: Duration,
) -> Result<Vec<u8>, GetError> {
    let fail = |message: String| GetError(message);
    let parsed = reqwest::Url::parse(url).map_err(|e| fail(format!("not a URL: {e}")))?;
    let host = parsed
        .host_str()
        .ok_or_else(|| fail("the URL has no host".into()))?
        .to_owned();
    let client = builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .resolve_to_addrs(&host, addresses)
        .timeout(timeout)
        .build()
        .map_err(|e| fail(format!("no HTTP client: {e}")))?;
    let mut response = client
        .get(parsed)
        .header("accept", "application/json")
        .send()
        .await
        .map_err(|e| fail(e.to_string()))?;
    if !response.status().is_success() {
        return Err(fail(format!("HTTP {}", response.status())));
    }
    if response.content_length().is_some_and(|n| n > max_bytes as u64) {
        return Err(fail("it is too large".into()));
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| fail(e.to_string()))? {
        if body.len() + chunk.len() > max_bytes {
            return Err(fail("it is too large".into()));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// A reqwest client with the configuration's timeout and a 15-second connect timeout.
pub fn client(config: &ClientConfig, provider: &str) -> Result<reqwest::Client, ModelError> {
    builder()
        .timeout(config.timeout)
        .connect_timeout(Duration::from_secs(15))
        .build()
        .map_err(|e| ModelError::new(provider, format!("cannot create the HTTP client: {e}")))
}

/// Sends a request built by `build`, retrying 429 and 5xx answers and connection failures with backoff.
pub async fn send(
    config: &ClientConfig,
    provider: &str,
    build: impl Fn() -> reqwest::RequestBuilder,
) -> Result<reqwest::Response, ModelError> {
    let mut attempt = 0;
    loop {
        let outcome = build().send().await;
        let retry_after = match &outcome {
            Ok(response) if response.status().is_success() => return outcome.map_err(|_| unreachable_error(provider)),
            Ok(response) if response.status().as_u16() == 429 || response.status().is_server_error() => {
                Some(retry_after(response))
            }
            Ok(_) => None,
            Err(e) if e.is_connect() || e.is_timeout() => Some(None),
            Err(_) => None,
        };
        match (retry_after, attempt < config.retries) {
            (Some(wait), true) => {
                let backoff = config.backoff * 2u32.pow(attempt);
                let wait = wait.unwrap_or(backoff).min(Duration::from_secs(30));
                tracing::warn!(provider, attempt = attempt + 1, ?wait, "model call failed; retrying");
                tokio::time::sleep(wait).await;
                attempt += 1;
            }
            _ => return Err(failure(provider, outcome).await),
        }
    }
}

fn unreachable_error(provider: &str) -> ModelError {
    ModelError::new(provider, "the request failed")
}

fn retry_after(response: &reqwest::Response) -> Option<Duration> {
    let seconds = response
        .headers()
        .get("retry-after")?
        .to_str()
        .ok()?
        .trim()
        .parse::<f64>()
        .ok()?;
    Some(Duration::from_secs_f64(seconds.clamp(0.0, 30.0)))
}

async fn failure(provider: &str, outcome: Result<reqwest::Response, reqwest::Error>) -> ModelError {
    match outcome {
        Ok(response) => {
            let status = response.status();
            let body = response.text().await.unwrap_or_default();
            ModelError {
                provider: provider.to_owned(),
                status: Some(status.as_u16()),
                message: excerpt(&body),
            }
        }
        Err(e) if e.is_timeout() => ModelError::new(provider, format!("the request timed out ({e})")),
        Err(e) => ModelError::new(provider, format!("cannot reach the API: {e}")),
    }
}

/// At most 300 characters of a body, on one line.
pub fn excerpt(body: &str) -> String {
    let flat: String = body.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut short: String = flat.chars().take(300).collect();
    if flat.chars().count() > 300 {
        short.push('…');
    }
    if short.is_empty() {
        "(empty body)".to_owned()
    } else {
        short
    }
}

/// One event of a server-sent-events stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field, if any.
    pub event: Option<String>,
    /// The `data:` lines, joined with newlines.
    pub data: String,
}

/// Reads a `text/event-stream` body, calling `on_event` for each event.
pub async fn read_sse(
    response: reqwest::Response,
    provider: &str,
    mut on_event: impl FnMut(SseEvent) -> Result<(), ModelError>,
) -> Result<(), ModelError> {
    let mut stream = response.bytes_stream();
    let mut buffer = String::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| ModelError::new(provider, format!("the stream broke off: {e}")))?;
        buffer.push_str(&String::from_utf8_lossy(&chunk));
        let normalised = buffer.replace("\r\n", "\n");
        buffer = normalised;
        while let Some(end) = buffer.find("\n\n") {
            let block: String = buffer.drain(..end + 2).collect();
            if let Some(event) = parse_event(&block) {
                on_event(event)?;
            }
        }
    }
    if let Some(event) = parse_event(&buffer) {
        on_event(event)?;
    }
    Ok(())
}

fn parse_event(block: &str) -> Option<SseEvent> {
    let mut event = None;
    let mut data = Vec::new();
    for line in block.lines() {
        if let Some(rest) = line.strip_prefix("data:") {
            data.push(rest.strip_prefix(' ').unwrap_or(rest));
        } else if let Some(rest) = line.strip_prefix("event:") {
            event = Some(rest.trim().to_owned());
        }
    }
    if data.is_empty() && event.is_none() {
        return None;
    }
    Some(SseEvent {
        event,
        data: data.join("\n"),
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn events_and_excerpts() {
        let e = super::parse_event("event: message_start\ndata: {\"a\":1}\n\n").unwrap();
        assert_eq!(
            (e.event.as_deref(), e.data.as_str()),
            (Some("message_start"), "{\"a\":1}")
        );
        assert_eq!(super::parse_event(": keep-alive\n\n"), None);
        assert_eq!(super::excerpt(&"x ".repeat(400)).chars().count(), 301);
        assert_eq!(super::excerpt(""), "(empty body)");
    }

    #[test]
    fn clients_build_with_ring_as_the_tls_provider() {
        // reqwest is compiled without a crypto provider of its own: without the one `builder` installs, building a
        // client panics. The model clients and the model download build theirs this way.
        let config = super::ClientConfig::new("https://models.invalid/v1", "m", None);
        assert!(super::client(&config, "openai-compatible").is_ok());
        let provider = rustls::crypto::CryptoProvider::get_default().expect("a provider is installed");
        let ring = rustls::crypto::ring::default_provider();
        assert_eq!(
            format!("{:?}", provider.cipher_suites),
            format!("{:?}", ring.cipher_suites)
        );
    }
}
