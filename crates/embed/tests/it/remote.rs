//! The HTTP embedder against a local mock of an OpenAI-compatible `/v1/embeddings` endpoint.

use std::time::Duration;

use quire_core::Embedder;
use quire_embed::ClientConfig;
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

fn config(server: &MockServer, base: &str) -> ClientConfig {
    let mut config = ClientConfig::new(format!("{}{base}", server.uri()), "test-model", Some("sk-test".into()));
    config.backoff = Duration::from_millis(5);
    config
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_embeddings_are_batched_ordered_and_checked() {
    struct Vectors;
    impl Respond for Vectors {
        fn respond(&self, request: &Request) -> ResponseTemplate {
            let body: Value = serde_json::from_slice(&request.body).unwrap();
            let inputs = body["input"].as_array().unwrap();
            // Answer in reverse order: the client must sort by index.
            let data: Vec<Value> = inputs
                .iter()
                .enumerate()
                .rev()
                .map(|(i, text)| json!({"index": i, "embedding": [text.as_str().unwrap().len() as f64, 1.0, 0.5]}))
                .collect();
            ResponseTemplate::new(200).set_body_json(json!({"data": data, "model": body["model"]}))
        }
    }
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/embeddings"))
        .respond_with(Vectors)
        .mount(&server)
        .await;
    let embedder = quire_embed::HttpEmbedder::new(config(&server, "/v1"), 3);
    let texts: Vec<String> = (0..70).map(|i| "x".repeat(i + 1)).collect();
    let vectors = tokio::task::spawn_blocking({
        let embedder = embedder.clone();
        move || embedder.embed(&texts)
    })
    .await
    .unwrap()
    .unwrap();
    assert_eq!(vectors.len(), 70);
    assert_eq!(vectors[0], vec![1.0, 1.0, 0.5]);
    assert_eq!(vectors[69][0], 70.0);
    assert_eq!(
        server.received_requests().await.unwrap().len(),
        2,
        "64 texts per request"
    );
    assert_eq!(embedder.id(), "http:test-model:3");

    let wrong = quire_embed::HttpEmbedder::new(config(&server, "/v1"), 384);
    let error = tokio::task::spawn_blocking(move || wrong.embed(&["a".to_owned()]))
        .await
        .unwrap()
        .unwrap_err();
    assert_eq!(error.to_string(), "embeddings a vector of 3 dimensions, expected 384");
}
