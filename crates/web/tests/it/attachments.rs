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
