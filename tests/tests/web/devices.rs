//! Devices (issue 48), end to end with the real binary: `quire serve --listen` over TLS with the certificate quire
//! makes, a code from `quire device pair` traded at `/pair` for a device's cookie, a device limited to a notebook and
//! to reading, failed sign-ins limited, and `quire device revoke` refusing the device's next request.

use quire_tests::{Quire, Run};
use serde_json::{Value, json};

use super::serve_with;

fn ok(run: Run) -> Run {
    assert_eq!(run.code, 0, "{run:#?}");
    run
}

fn failed(run: Run) -> Run {
    assert_ne!(run.code, 0, "{run:#?}");
    run
}

/// The certificate `--tls-self-signed` made (kept in the configuration directory).
fn certificate(q: &Quire) -> reqwest::Certificate {
    let pem = std::fs::read(q.dir().join("home/.config/quire/tls-self-signed.pem")).unwrap();
    reqwest::Certificate::from_pem(&pem).unwrap()
}

/// A client that trusts only the certificate of `q`'s server.
fn tls_client(q: &Quire, headers: reqwest::header::HeaderMap) -> reqwest::Client {
    reqwest::Client::builder()
        .tls_certs_only([certificate(q)])
        .redirect(reqwest::redirect::Policy::none())
        .default_headers(headers)
        .build()
        .unwrap()
}

/// The JSON answer of a GET.
async fn get_json(client: &reqwest::Client, url: String) -> Value {
    client.get(url).send().await.unwrap().json().await.unwrap()
}

/// The status of a GET.
async fn get_status(client: &reqwest::Client, url: String) -> u16 {
    client.get(url).send().await.unwrap().status().as_u16()
}

/// Pairs a device with the code `code`: its cookie (`quire_device=ID.TOKEN`), the cookie's attributes, and a client
/// that sends both the cookie and the page's secret.
async fn redeem(q: &Quire, base: &str, code: &str) -> (String, String, reqwest::Client) {
    let answer = tls_client(q, Default::default())
        .post(format!("{base}/pair"))
        .json(&json!({ "code": code }))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    let set_cookie = answer.headers()["set-cookie"].to_str().unwrap().to_owned();
    let cookie = set_cookie.split(';').next().unwrap().to_owned();
    let body: Value = answer.json().await.unwrap();
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert("x-quire-session", body["secret"].as_str().unwrap().parse().unwrap());
    headers.insert("cookie", cookie.parse().unwrap());
    (cookie, set_cookie, tls_client(q, headers))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_device_pairs_over_tls_reaches_what_it_was_given_and_stops_when_ended() {
    let q = Quire::new();
    ok(q.run(&["notebook", "add", "Home"]));
    ok(q.run(&["notebook", "add", "Work"]));
    ok(q.run(&["note", "add", "--title", "Shopping", "--body", "Milk", "-n", "Home"]));
    let work = q
        .run(&[
            "--json", "note", "add", "--title", "Salaries", "--body", "x", "-n", "Work",
        ])
        .json();
    let (_server, url, base) = serve_with(&q, &[], &["--listen", "127.0.0.1:0", "--tls-self-signed"]);
    assert!(url.starts_with("https://127.0.0.1:"), "{url}");

    // The code points at the running server; its link and its QR code are printed.
    let pair = q
        .run(&["--json", "device", "pair", "phone", "--notebook", "Home", "--read-only"])
        .json();
    let code = pair["code"].as_str().unwrap();
    assert_eq!(pair["link"], format!("{base}/pair#code={code}"));
    // The certificate quire made is named by its fingerprint, to compare with the browser's warning.
    let fingerprint = pair["fingerprint"].as_str().unwrap();
    assert_eq!(fingerprint.len(), 95, "{fingerprint}");
    assert!(
        fingerprint
            .split(':')
            .all(|b| b.len() == 2 && b.chars().all(|c| c.is_ascii_hexdigit()))
    );
    let text = ok(q.run(&["device", "pair", "tablet"]));
    assert!(
        text.stdout.contains("On the device, open https://")
            && text.stdout.contains('█')
            && text.stdout.contains(&format!("fingerprint it shows is {fingerprint}")),
        "{}",
        text.stdout
    );

    let (cookie, attributes, phone) = redeem(&q, &base, code).await;
    for attribute in ["HttpOnly", "SameSite=Strict", "Secure", "Max-Age="] {
        assert!(attributes.contains(attribute), "{attributes}");
    }
    let again = tls_client(&q, Default::default())
        .post(format!("{base}/pair"))
        .json(&json!({ "code": code }))
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 400, "a code pairs once");

    // Home only, reading only; never the devices.
    let notebooks = get_json(&phone, format!("{base}/api/notebooks")).await;
    let titles: Vec<&str> = notebooks["notebooks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["title"].as_str().unwrap())
        .collect();
    assert_eq!(titles, ["Home"]);
    assert_eq!(
        get_status(
            &phone,
            format!("{base}/api/notes/{}", work["note_id"].as_str().unwrap())
        )
        .await,
        404
    );
    let write = phone
        .post(format!("{base}/api/notes"))
        .json(&json!({"title": "x", "body": ""}))
        .send()
        .await
        .unwrap();
    assert_eq!(write.status(), 403);
    assert_eq!(
        phone.get(format!("{base}/api/devices")).send().await.unwrap().status(),
        403
    );
    // The cookie alone opens nothing: the page's secret goes with it.
    let mut only_cookie = reqwest::header::HeaderMap::new();
    only_cookie.insert("cookie", cookie.parse().unwrap());
    assert_eq!(
        get_status(&tls_client(&q, only_cookie), format!("{base}/api/notebooks")).await,
        401
    );

    // The file keeps neither the token nor a code.
    let devices = std::fs::read_to_string(q.dir().join("home/.config/quire/devices.json")).unwrap();
    let token = cookie.split('.').nth(1).unwrap();
    assert!(!devices.contains(token) && !devices.contains(&code.replace('-', "")));
    let listed = ok(q.run(&["device", "list"])).stdout;
    assert!(
        listed.contains("phone  Home, read-only") && listed.contains("tablet  all notebooks  code not used yet"),
        "{listed}"
    );

    ok(q.run(&["device", "revoke", "phone"]));
    let refused = phone.get(format!("{base}/api/notebooks")).send().await.unwrap();
    assert_eq!(refused.status(), 401, "the next request of an ended device is refused");
    assert!(
        failed(q.run(&["device", "revoke", "phone"]))
            .stderr
            .contains("no device named")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_sign_ins_are_limited() {
    let q = Quire::new();
    let (_server, url, base) = serve_with(&q, &[], &["--listen", "127.0.0.1:0", "--tls-self-signed"]);
    let code = q.run(&["--json", "device", "pair", "phone"]).json()["code"]
        .as_str()
        .unwrap()
        .to_owned();
    let http = tls_client(&q, Default::default());
    // A passkey is a name's, never an address's: asked from the IP address, the server says so.
    let options = http
        .post(format!("{base}/pair/passkey/options"))
        .header("origin", &base)
        .send()
        .await
        .unwrap();
    assert_eq!(options.status(), 400);
    assert!(options.text().await.unwrap().contains("IP address"));
    // Passkeys that are no device's count as failed sign-ins, as wrong codes and keys do.
    let named = base.replace("127.0.0.1", "localhost");
    for _ in 0..2 {
        let unknown = http
            .post(format!("{named}/pair/passkey"))
            .header("origin", &named)
            .json(&json!({"id": "AAAA", "client_data_json": "e30", "authenticator_data": "", "signature": ""}))
            .send()
            .await
            .unwrap();
        assert_eq!(unknown.status(), 400);
        assert!(unknown.text().await.unwrap().contains("no longer paired"));
    }
    for _ in 0..4 {
        let wrong = http
            .post(format!("{base}/pair"))
            .json(&json!({"code": "AAAAA-AAAAA"}))
            .send()
            .await
            .unwrap();
        assert_eq!(wrong.status(), 400);
        let key = http.get(format!("{base}/?token=wrong")).send().await.unwrap();
        assert_eq!(key.status(), 401);
    }
    // Ten failed from this address: even the right code waits now.
    let limited = http
        .post(format!("{base}/pair"))
        .json(&json!({"code": code}))
        .send()
        .await
        .unwrap();
    assert_eq!(limited.status(), 429);
    let said: Value = limited.json().await.unwrap();
    assert!(said["error"].as_str().unwrap().contains("try again in"), "{said}");
    // The key itself always opens: nobody's wrong attempts lock the person out.
    assert_eq!(http.get(&url).send().await.unwrap().status(), 303);
    let wrong_key = http.get(format!("{base}/?token=wrong")).send().await.unwrap();
    assert_eq!(wrong_key.status(), 429, "a wrong key waits too");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_code_made_for_another_workspace_pairs_nothing_here() {
    let q = Quire::new();
    let (_server, _url, base) = serve_with(&q, &[], &["--listen", "127.0.0.1:0", "--tls-self-signed"]);
    let other = q.dir().join("other.quire");
    let other = other.to_str().unwrap();
    // The same configuration (the same devices' file), another workspace.
    let made = q
        .command()
        .args(["--json", "--workspace", other, "device", "pair", "phone"])
        .output()
        .unwrap();
    assert!(made.status.success(), "{made:?}");
    let code = serde_json::from_slice::<Value>(&made.stdout).unwrap()["code"]
        .as_str()
        .unwrap()
        .to_owned();
    let refused = tls_client(&q, Default::default())
        .post(format!("{base}/pair"))
        .json(&json!({ "code": code }))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 400);
    // Not used up: the server of that workspace takes it.
    assert!(
        ok(q.run(&["device", "list"]))
            .stdout
            .contains("phone  all notebooks  code not used yet")
    );
}

#[test]
fn plain_http_beyond_loopback_is_refused() {
    let q = Quire::new();
    let run = failed(q.run(&["serve", "--listen", "0.0.0.0:0"]));
    assert!(
        run.stderr.contains("--tls-self-signed") && run.stderr.contains("--public-url"),
        "{}",
        run.stderr
    );
    let run = failed(q.run(&["serve", "--addr", "0.0.0.0:0"]));
    assert!(run.stderr.contains("--listen"), "{}", run.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_device_changes_the_server_and_a_limited_one_hears_only_of_its_notebooks() {
    let q = Quire::new();
    ok(q.run(&["notebook", "add", "Home"]));
    ok(q.run(&["notebook", "add", "Work"]));
    let home = q
        .run(&[
            "--json", "note", "add", "--title", "Shopping", "--body", "Milk", "-n", "Home",
        ])
        .json();
    let work = q
        .run(&[
            "--json", "note", "add", "--title", "Salaries", "--body", "x", "-n", "Work",
        ])
        .json();
    let (_server, _url, base) = serve_with(&q, &[], &["--listen", "127.0.0.1:0", "--tls-self-signed"]);
    let full = q.run(&["--json", "device", "pair", "laptop"]).json();
    let (_, _, laptop) = redeem(&q, &base, full["code"].as_str().unwrap()).await;
    // A plugin is a command run on the computer: no device adds one, a full one neither.
    let plugin = json!({"name": "x", "command": "sh", "args": ["-c", "true"]});
    let refused = laptop
        .post(format!("{base}/api/plugins"))
        .json(&plugin)
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 403);
    // Nor is it offered the form that adds a model.
    let settings = get_json(&laptop, format!("{base}/api/settings")).await;
    assert_eq!(settings["can_add_models"], false, "{settings}");
    let sync = laptop
        .post(format!("{base}/api/sync/setup"))
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(sync.status(), 403);

    let limited = q
        .run(&["--json", "device", "pair", "phone", "--notebook", "Home"])
        .json();
    let (_, _, phone) = redeem(&q, &base, limited["code"].as_str().unwrap()).await;
    assert_eq!(get_status(&phone, format!("{base}/api/reviews/1")).await, 403);
    let reviews = get_json(&phone, format!("{base}/api/reviews")).await;
    assert_eq!(reviews["sets"], json!([]));
    // Its change stream tells of Home's note, never of Work's.
    let mut stream = phone.get(format!("{base}/api/events")).send().await.unwrap();
    assert_eq!(stream.status(), 200);
    let edit = |id: &str, body: &str| json!({"note_id": id, "body": body}).to_string();
    ok(q.run(&[
        "tools",
        "call",
        "update_note",
        &edit(work["note_id"].as_str().unwrap(), "y"),
    ]));
    ok(q.run(&[
        "tools",
        "call",
        "update_note",
        &edit(home["note_id"].as_str().unwrap(), "Oat milk"),
    ]));
    let mut heard = String::new();
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(20);
    while !heard.contains(home["note_id"].as_str().unwrap()) {
        let chunk = tokio::time::timeout_at(deadline, stream.chunk())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        heard.push_str(&String::from_utf8_lossy(&chunk));
    }
    assert!(!heard.contains(work["note_id"].as_str().unwrap()), "{heard}");
}

/// A save queued offline, sent with the computer's session as `offline` (a request to `/api/notes/{id}/offline`).
async fn send_offline(offline: &reqwest::RequestBuilder, session: &str, save: &Value) -> Value {
    let request = offline.try_clone().unwrap().header("cookie", session).json(save);
    request.send().await.unwrap().json().await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_offline_save_is_applied_once_and_a_note_trashed_meanwhile_keeps_the_text() {
    let q = Quire::new();
    let note = q
        .run(&["--json", "note", "add", "--title", "Plan", "--body", "Milk\nEggs"])
        .json();
    let id = note["note_id"].as_str().unwrap().to_owned();
    let (_server, base, session, http) = super::open_session(&q, &[]).await;
    let read: Value = http
        .get(format!("{base}/api/notes/{id}"))
        .header("cookie", &session)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let updated = read["updated"].as_str().unwrap_or_else(|| panic!("{read}")).to_owned();
    // Meanwhile, on the computer: another line.
    ok(q.run(&[
        "tools",
        "call",
        "update_note",
        &json!({"note_id": id, "body": "Milk\nEggs\nBread"}).to_string(),
    ]));
    let offline = http.post(format!("{base}/api/notes/{id}/offline"));
    let save = json!({
        "save_id": "s-1", "base_updated": updated, "base_title": "Plan", "base_body": "Milk\nEggs",
        "title": "Plan", "body": "Oat milk\nEggs",
    });
    for _ in 0..2 {
        // Sent twice (the first answer lost on the way): applied once.
        let saved = send_offline(&offline, &session, &save).await;
        assert_eq!(saved["note"]["body"], "Oat milk\nEggs\nBread", "{saved}");
    }
    ok(q.run(&["tools", "call", "delete_note", &json!({"note_id": id}).to_string()]));
    let later = json!({
        "save_id": "s-2", "base_updated": updated, "base_title": "Plan", "base_body": "Milk\nEggs",
        "title": "Plan", "body": "Milk\nEggs\nJam",
    });
    let saved = send_offline(&offline, &session, &later).await;
    assert_ne!(saved["note"]["note_id"], id.as_str());
    assert_eq!(saved["note"]["title"], "Plan (written offline)");
    assert_eq!(saved["note"]["body"], "Milk\nEggs\nJam");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_codes_sent_at_once_are_limited_too_and_the_script_goes_gzipped() {
    let q = Quire::new();
    let (_server, _url, base) = serve_with(&q, &[], &["--listen", "127.0.0.1:0", "--tls-self-signed"]);
    let http = tls_client(&q, Default::default());
    let attempts: Vec<_> = (0..30)
        .map(|_| {
            let wrong = http.post(format!("{base}/pair")).json(&json!({"code": "AAAAA-AAAAA"}));
            tokio::spawn(wrong.send())
        })
        .collect();
    let mut statuses = Vec::new();
    for attempt in attempts {
        statuses.push(attempt.await.unwrap().unwrap().status().as_u16());
    }
    let tried = statuses.iter().filter(|s| **s == 400).count();
    assert!(tried <= 10, "at most ten tried at once: {statuses:?}");
    assert_eq!(
        statuses.iter().filter(|s| **s == 429).count(),
        30 - tried,
        "{statuses:?}"
    );
    // What a phone on a slow network waits for, gzipped.
    let script = http
        .get(format!("{base}/assets/app.js"))
        .header("accept-encoding", "gzip")
        .send()
        .await
        .unwrap();
    assert_eq!(script.headers()["content-encoding"], "gzip");
    let bytes = script.bytes().await.unwrap();
    assert_eq!(&bytes[..2], [0x1f, 0x8b], "a gzip stream");
    assert!(bytes.len() < 300 * 1024, "{} bytes", bytes.len());
}
