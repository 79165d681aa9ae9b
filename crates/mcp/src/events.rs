//! The event store behind resumable HTTP streams: every event a stream sends is kept for a while, so a client that
//! lost a stream (a dropped connection, a proxy's timeout, a stream the server closed on purpose) reconnects with
//! `Last-Event-ID` and gets what followed, including an answer produced while it was away.
//!
//! rmcp's sessions keep a per-stream cache too, but drop a call's stream the moment its answer is sent: a client
//! whose connection broke just before the answer could never get it. Here a replay serves the events stored after
//! the given one and then follows the stream live until its answer has gone out.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::ServerJsonRpcMessage;
use rmcp::transport::streamable_http_server::session::{
    EventId, EventStore, EventStoreError, EventStream, ServerSseMessage,
};

/// How long events are kept.
const KEEP_FOR: Duration = Duration::from_secs(10 * 60);
/// The most events kept, over all streams.
const KEEP_AT_MOST: usize = 20_000;
/// The most bytes of events kept, over all streams (as JSON): answers run to tens of kilobytes, and 20,000 of them
/// would hold hundreds of megabytes.
const KEEP_BYTES: usize = 16 << 20;

struct Stored {
    seq: u64,
    stream: String,
    at: Instant,
    /// The event's size as JSON, counted in [`Inner::bytes`].
    bytes: usize,
    event: ServerSseMessage,
}

/// An in-memory event store for one server process (quire serves one workspace from one process, so nothing is
/// shared with other instances).
pub(crate) struct MemoryEventStore(Arc<Shared>);

struct Shared {
    events: Mutex<Inner>,
    latest: tokio::sync::watch::Sender<u64>,
}

#[derive(Default)]
struct Inner {
    next: u64,
    events: VecDeque<Stored>,
    /// The sizes of the events kept.
    bytes: usize,
    /// Each stream's secret, part of every event id it hands out: an id is a capability for its own stream only,
    /// so a client cannot replay another client's stream by counting.
    secrets: std::collections::HashMap<String, String>,
}

/// A fresh secret for a stream (quire-loopback's, as every secret of the two servers).
fn new_secret() -> String {
    // Without randomness a stream gets no replay at all rather than a guessable id.
    quire_loopback::new_secret().unwrap_or_default()
}

impl MemoryEventStore {
    pub(crate) fn new() -> MemoryEventStore {
        MemoryEventStore(Arc::new(Shared {
            events: Mutex::new(Inner::default()),
            latest: tokio::sync::watch::channel(0).0,
        }))
    }
}

impl Shared {
    /// The events of `stream` after `seq`, and whether one of them answered the stream's call.
    fn after(&self, stream: &str, seq: u64) -> (Vec<(u64, ServerSseMessage)>, bool) {
        let inner = self.events.lock().unwrap_or_else(|e| e.into_inner());
        let mut answered = false;
        let events = inner
            .events
            .iter()
            .filter(|e| e.seq > seq && e.stream == stream)
            .map(|e| {
                answered |= is_answer(&e.event);
                (e.seq, e.event.clone())
            })
            .collect();
        (events, answered)
    }
}

fn is_answer(event: &ServerSseMessage) -> bool {
    event
        .message
        .as_deref()
        .is_some_and(|m| matches!(m, ServerJsonRpcMessage::Response(_) | ServerJsonRpcMessage::Error(_)))
}

#[async_trait::async_trait]
impl EventStore for MemoryEventStore {
    async fn store_event(&self, stream_id: &str, event: &ServerSseMessage) -> Result<EventId, EventStoreError> {
        let (seq, id) = {
            let mut inner = self.0.events.lock().unwrap_or_else(|e| e.into_inner());
            inner.next += 1;
            let seq = inner.next;
            let secret = inner
                .secrets
                .entry(stream_id.to_owned())
                .or_insert_with(new_secret)
                .clone();
            let id = format!("{seq}-{secret}");
            let mut event = event.clone();
            event.event_id = Some(id.clone());
            let now = Instant::now();
            let bytes = event
                .message
                .as_deref()
                .and_then(|m| serde_json::to_vec(m).ok())
                .map_or(0, |json| json.len());
            while inner.events.front().is_some_and(|e| {
                inner.events.len() >= KEEP_AT_MOST
                    || inner.bytes + bytes > KEEP_BYTES
                    || now.duration_since(e.at) > KEEP_FOR
            }) {
                let Some(old) = inner.events.pop_front() else {
                    break;
                };
                inner.bytes -= old.bytes;
                if !inner.events.iter().any(|e| e.stream == old.stream) && old.stream != stream_id {
                    inner.secrets.remove(&old.stream);
                }
            }
            inner.bytes += bytes;
            inner.events.push_back(Stored {
                seq,
                stream: stream_id.to_owned(),
                at: now,
                bytes,
                event,
            });
            (seq, id)
        };
        self.0.latest.send_replace(seq);
        Ok(id)
    }

    async fn replay_events_after(&self, last_event_id: &str) -> Result<EventStream, EventStoreError> {
        let unknown = || format!("'{last_event_id}' is not an event id of this server, or too old to resume from");
        let (seq, secret) = last_event_id.split_once('-').ok_or_else(unknown)?;
        let seq: u64 = seq.parse().map_err(|_| unknown())?;
        let stream = {
            let inner = self.0.events.lock().unwrap_or_else(|e| e.into_inner());
            let stream = inner
                .events
                .iter()
                .find(|e| e.seq == seq)
                .map(|e| e.stream.clone())
                .ok_or_else(unknown)?;
            let expected = inner.secrets.get(&stream).map(String::as_str).unwrap_or_default();
            if expected.is_empty() || !quire_loopback::constant_time_eq(expected.as_bytes(), secret.as_bytes()) {
                return Err(unknown().into());
            }
            stream
        };
        let mut latest = self.0.latest.subscribe();
        let (sender, receiver) = tokio::sync::mpsc::channel(64);
        let events = Arc::clone(&self.0);
        tokio::spawn(async move {
            let mut cursor = seq;
            loop {
                let (batch, answered) = events.after(&stream, cursor);
                for (seq, event) in batch {
                    cursor = seq;
                    if sender.send(event).await.is_err() {
                        return;
                    }
                }
                // A call's stream ends with its answer; the standalone stream follows until the client leaves.
                if answered {
                    return;
                }
                tokio::select! {
                    changed = latest.changed() => if changed.is_err() { return },
                    () = sender.closed() => return,
                    () = tokio::time::sleep(KEEP_FOR) => return,
                }
            }
        });
        Ok(Box::pin(tokio_stream::wrappers::ReceiverStream::new(receiver)))
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use futures::StreamExt as _;
    use rmcp::model::ServerJsonRpcMessage;
    use rmcp::transport::streamable_http_server::session::{EventStore, ServerSseMessage};

    use super::MemoryEventStore;

    fn message(json: serde_json::Value) -> ServerSseMessage {
        let message: ServerJsonRpcMessage = serde_json::from_value(json).unwrap();
        ServerSseMessage::from_message(message)
    }

    #[tokio::test]
    async fn a_replay_follows_its_stream_until_the_answer() {
        let store = MemoryEventStore::new();
        let priming = store
            .store_event("a", &ServerSseMessage::retry(Duration::from_secs(1)))
            .await
            .unwrap();
        let progress = json_progress();
        store.store_event("a", &progress).await.unwrap();
        store.store_event("b", &progress).await.unwrap();
        let mut replay = store.replay_events_after(&priming).await.unwrap();
        let first = replay.next().await.unwrap();
        let id = first.event_id.clone().unwrap();
        assert!(
            id.starts_with("2-"),
            "only stream a's events, after the one given: {id}"
        );
        // The answer comes later: the replay waits for it, delivers it and ends.
        let answer = message(serde_json::json!({"jsonrpc": "2.0", "id": 1, "result": {}}));
        store.store_event("a", &answer).await.unwrap();
        let second = tokio::time::timeout(Duration::from_secs(5), replay.next())
            .await
            .unwrap()
            .unwrap();
        assert!(second.event_id.as_deref().unwrap().starts_with("4-"));
        assert!(
            tokio::time::timeout(Duration::from_secs(5), replay.next())
                .await
                .unwrap()
                .is_none()
        );
        assert!(
            store.replay_events_after("99").await.is_err(),
            "an unknown id is an error"
        );
        assert!(store.replay_events_after("x").await.is_err());
        // Counting gets nowhere: an id without its stream's secret is refused.
        let (seq, secret) = priming.split_once('-').unwrap();
        assert_eq!(secret.len(), 64);
        assert!(store.replay_events_after(seq).await.is_err());
        assert!(
            store
                .replay_events_after(&format!("{seq}-{}", "0".repeat(64)))
                .await
                .is_err()
        );
        let other = store.store_event("b", &progress).await.unwrap();
        assert_ne!(
            other.split_once('-').unwrap().1,
            secret,
            "each stream has its own secret"
        );
    }

    #[tokio::test]
    async fn large_answers_are_kept_up_to_a_byte_bound() {
        let store = MemoryEventStore::new();
        let text = "x".repeat(64 * 1024);
        let answer = |id: u64| {
            message(serde_json::json!({"jsonrpc": "2.0", "id": id,
                                       "result": {"content": [{"type": "text", "text": text}]}}))
        };
        let first = store.store_event("s0", &answer(0)).await.unwrap();
        for i in 1..400 {
            store.store_event(&format!("s{i}"), &answer(i)).await.unwrap();
        }
        {
            let inner = store.0.events.lock().unwrap();
            assert!(inner.bytes <= super::KEEP_BYTES, "{} bytes kept", inner.bytes);
            assert!(inner.events.len() < 300, "{} events kept", inner.events.len());
            assert_eq!(inner.bytes, inner.events.iter().map(|e| e.bytes).sum::<usize>());
            assert!(!inner.secrets.contains_key("s0"), "a dropped stream's secret goes too");
        }
        assert!(
            store.replay_events_after(&first).await.is_err(),
            "the oldest answer is gone"
        );
    }

    fn json_progress() -> ServerSseMessage {
        message(serde_json::json!({"jsonrpc": "2.0", "method": "notifications/progress",
                                   "params": {"progressToken": 1, "progress": 1}}))
    }
}
