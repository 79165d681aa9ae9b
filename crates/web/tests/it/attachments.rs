//! Attachments through the web API on a real loopback server: an image is served as itself for the preview, anything
//! else (an SVG, which can carry script, included) only as a download; the session is needed as for all of `/api`.

use quire_core::{Actor, NewAttachment, Workspace, testing};
use quire_web::{WebModels, WebOptions};

use crate::support::{Session, client, serve};

const KEY: &str = "0123456789abcdef0123456789abcdef-key";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn images_show_inline_and_everything_else_downloads() {
    let ws = Workspace::open_in_memory().unwrap();
    let (png, svg) = ws
        .write(&Actor::User, |w| {
            let note = testing::note("Trip", "![map](quire://attachment/x)").create(w)?;
            let attach = |w: &mut quire_core::Writer<'_>, title: &str, mime: &str, data: &[u8]| {
                w.add_attachment(
                    &note,
                    NewAttachment {
                        title: title.into(),
                        mime: mime.into(),
                        data: data.to_vec(),
                        text: None,
                    },
                )
                .map(|a| a.id)
            };
            let png = attach(w, "map.png", "image/png", b"\x89PNG\r\n\x1a\nfake")?;
            let svg = attach(w, "logo.svg", "image/svg+xml", b"<svg onload='alert(1)'/>")?;
            Ok::<_, quire_core::Error>((png, svg))
        })
        .unwrap();
    let base = serve(ws, WebOptions::new(KEY), WebModels::default()).await;
    let http = client();
    let without = http.get(format!("{base}/api/attachments/{png}")).send().await.unwrap();
    assert_eq!(without.status(), 401);
    let session = Session::open(&base, KEY).await;
    let (cookie, secret) = (&session.cookie, &session.secret);
    let get = |id: String| {
        let request = session.request(reqwest::Method::GET, &format!("/attachments/{id}"));
        async move { request.send().await.unwrap() }
    };
    // The preview's `<img>` cannot send a header: the secret comes in the query instead; the cookie alone is refused.
    let by_query = http
        .get(format!("{base}/api/attachments/{png}?session={secret}"))
        .header("cookie", cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(by_query.status(), 200);
    let cookie_only = http
        .get(format!("{base}/api/attachments/{png}"))
        .header("cookie", cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(cookie_only.status(), 401);
    let image = get(png).await;
    assert_eq!(image.status(), 200);
    assert_eq!(image.headers()["content-type"], "image/png");
    assert_eq!(image.bytes().await.unwrap().as_ref(), b"\x89PNG\r\n\x1a\nfake");
    let vector = get(svg).await;
    assert_eq!(vector.headers()["content-type"], "application/octet-stream");
    assert_eq!(
        vector.headers()["content-disposition"],
        "attachment; filename=\"logo.svg\""
    );
    assert_eq!(get("nope".into()).await.status(), 404);
}

/// ux-2 #7: a file added from the editor (pasted, dropped, picked) is stored as the note's attachment with the
/// Markdown that shows it; an empty file, one over the limit and a note in the trash are refused, adding nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_from_the_editor_becomes_the_notes_attachment() {
    let ws = Workspace::open_in_memory().unwrap();
    let (note, gone) = ws
        .write(&Actor::User, |w| {
            let note = testing::note("Trip", "Day one.").create(w)?;
            let gone = testing::note("Old", "x").create(w)?;
            w.trash_note(&gone)?;
            Ok::<_, quire_core::Error>((note, gone))
        })
        .unwrap();
    let base = serve(ws.clone(), WebOptions::new(KEY), WebModels::default()).await;
    let session = Session::open(&base, KEY).await;
    let upload = |note: &str, name: &str, mime: &str, data: Vec<u8>| {
        let request = session
            .request(reqwest::Method::POST, &format!("/notes/{note}/attachments?name={name}"))
            .header("content-type", mime)
            .body(data);
        async move { request.send().await.unwrap() }
    };
    let added = upload(&note, "map%5B1%5D.png", "image/png", b"\x89PNG\r\n\x1a\nfake".to_vec()).await;
    assert_eq!(added.status(), 200);
    let added: serde_json::Value = added.json().await.unwrap();
    let id = added["attachment_id"].as_str().unwrap();
    assert_eq!(added["title"], "map[1].png");
    assert_eq!(added["mime"], "image/png");
    assert_eq!(added["markdown"], format!("![map\\[1\\].png](quire://attachment/{id})"));
    // A file the browser gives no type: typed by its name; any other file is a link, not an image.
    let pdf: serde_json::Value = upload(&note, "plan.pdf", "", b"%PDF-1.4".to_vec())
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(pdf["mime"], "application/pdf");
    assert!(pdf["markdown"].as_str().unwrap().starts_with("[plan.pdf]("), "{pdf}");

    let empty = upload(&note, "empty.txt", "text/plain", Vec::new()).await;
    assert_eq!(empty.status(), 400);
    let huge = upload(
        &note,
        "huge.bin",
        "application/octet-stream",
        vec![0; quire_core::MAX_ATTACHMENT_BYTES + 1],
    )
    .await;
    assert_eq!(huge.status(), 400);
    let said: serde_json::Value = huge.json().await.unwrap();
    assert!(said["error"].as_str().unwrap().contains("the limit is"), "{said}");
    let trashed = upload(&gone, "late.png", "image/png", b"png".to_vec()).await;
    assert!(trashed.status().is_client_error(), "{}", trashed.status());
    let titles: Vec<String> = ws
        .read(&Actor::User, |r| {
            Ok::<_, quire_core::Error>(r.attachments(&note)?.into_iter().map(|a| a.title).collect())
        })
        .unwrap();
    assert_eq!(titles, ["map[1].png", "plan.pdf"]);
    assert!(ws.read(&Actor::User, |r| r.attachments(&gone)).unwrap().is_empty());
}
