//! `http::pinned_get`: a document named by someone else is read from the addresses the caller checked, never from a
//! second lookup of its name (the DNS-rebinding gap of OAuth's metadata documents, security-2.md #10).

use std::time::Duration;

use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_name_is_never_looked_up_and_redirects_and_large_answers_are_refused() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/client.json"))
        .respond_with(ResponseTemplate::new(200).set_body_string("{\"client_id\":\"x\"}"))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/moved"))
        .respond_with(ResponseTemplate::new(302).insert_header("location", "/client.json"))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/big"))
        .respond_with(ResponseTemplate::new(200).set_body_string("x".repeat(70_000)))
        .mount(&server)
        .await;
    let address = *server.address();
    // `.invalid` names resolve nowhere (RFC 6761): an answer proves the checked address was used as it is.
    let url = |p: &str| format!("http://rebind.invalid:{}{p}", address.port());
    let body = quire_embed::http::pinned_get(&url("/client.json"), &[address], 1024, Duration::from_secs(5))
        .await
        .expect("read from the address given");
    assert_eq!(body, b"{\"client_id\":\"x\"}");
    let moved = quire_embed::http::pinned_get(&url("/moved"), &[address], 1024, Duration::from_secs(5)).await;
    assert!(
        moved.unwrap_err().to_string().contains("302"),
        "a redirect is not followed"
    );
    let big = quire_embed::http::pinned_get(&url("/big"), &[address], 64 * 1024, Duration::from_secs(5)).await;
    assert!(big.unwrap_err().to_string().contains("too large"));
}
