//! Resources: notes, notebooks and attachments, listed and read as the client's actor.

use quire_core::{Actor, testing};
use quire_mcp::ServerOptions;
use quire_test_support::mcp::{Era, connect_in_process};
use rmcp::model::{ClientConfig, ReadResourceRequestParams};

use crate::server;

#[tokio::test]
async fn notes_are_resources() {
    let (server, _, ws) = server(ServerOptions::default());
    let (open, secret) = ws
        .write(&Actor::User, |w| {
            let open = testing::note("Open", "# Open\nhello").create(w)?;
            let secret = testing::note("Secret", "hidden").protected().create(w)?;
            Ok::<_, quire_core::Error>((open, secret))
        })
        .unwrap();
    for era in Era::BOTH {
        let client = connect_in_process(server.clone(), ClientConfig::default(), era).await;
        let listed = client.list_all_resources().await.unwrap();
        let uris: Vec<&str> = listed.iter().map(|r| r.uri.as_str()).collect();
        assert_eq!(
            uris,
            vec![format!("quire://note/{open}")],
            "protected notes are not listed"
        );
        let templates = client.list_all_resource_templates().await.unwrap();
        assert_eq!(templates[0].uri_template, "quire://note/{id}");
        let read = client
            .read_resource(ReadResourceRequestParams::new(format!("quire://note/{open}")))
            .await
            .unwrap();
        assert!(format!("{read:?}").contains("# Open\\nhello"));
        let missing = client
            .read_resource(ReadResourceRequestParams::new("quire://note/nope"))
            .await
            .unwrap_err();
        let expected = if era == Era::Stateless { "-32602" } else { "-32002" };
        assert!(format!("{missing:?}").contains(expected), "{era:?}: {missing:?}");
        let protected = client
            .read_resource(ReadResourceRequestParams::new(format!("quire://note/{secret}")))
            .await;
        assert!(format!("{protected:?}").contains("is protected"), "{protected:?}");
    }
}

#[tokio::test]
async fn notebooks_and_attachments_are_resources() {
    let (server, _, ws) = server(ServerOptions::default());
    let (book, attachment) = ws
        .write(&Actor::User, |w| {
            let book = testing::notebook(w, "Work")?;
            let note = testing::note("Plan", "body").notebook(&book).create(w)?;
            let png = quire_core::NewAttachment {
                title: "pixel.png".into(),
                mime: "image/png".into(),
                data: vec![137, 80, 78, 71],
                text: None,
            };
            let attachment = w.add_attachment(&note, png)?.id;
            Ok::<_, quire_core::Error>((book, attachment))
        })
        .unwrap();
    let client = connect_in_process(server, ClientConfig::default(), Era::Legacy).await;
    let listing = client
        .read_resource(ReadResourceRequestParams::new(format!("quire://notebook/{book}")))
        .await
        .unwrap();
    let listing = serde_json::to_string(&listing).unwrap();
    assert!(
        listing.contains("\\\"path\\\":\\\"Work\\\"") && listing.contains("Plan"),
        "{listing}"
    );
    let blob = client
        .read_resource(ReadResourceRequestParams::new(format!(
            "quire://attachment/{attachment}"
        )))
        .await
        .unwrap();
    let blob = serde_json::to_value(&blob).unwrap();
    assert_eq!(blob["contents"][0]["blob"], "iVBORw==");
    assert_eq!(blob["contents"][0]["mimeType"], "image/png");
}

#[tokio::test]
async fn a_saved_view_is_a_resource_that_runs_its_queries_as_the_client() {
    let (server, _, ws) = server(ServerOptions::default());
    let (view, secret_view) = ws
        .write(&Actor::User, |w| {
            testing::note("Dune", "rating:: 5\n- [ ] finish it 📅 2026-12-10")
                .tags(["book"])
                .create(w)?;
            testing::note("Diary", "rating:: 5\n")
                .tags(["book"])
                .protected()
                .create(w)?;
            let body = "```dataview\nTABLE rating FROM #book\n```\n```query tasks\nTASK WHERE !completed\n```\n";
            let view = testing::note("Reading", body).create(w)?;
            let secret_view = testing::note("Hidden view", body).protected().create(w)?;
            Ok::<_, quire_core::Error>((view, secret_view))
        })
        .unwrap();
    let client = connect_in_process(server, ClientConfig::default(), Era::Legacy).await;
    let templates = client.list_all_resource_templates().await.unwrap();
    assert!(templates.iter().any(|t| t.uri_template == "quire://view/{id}"));
    let read = client
        .read_resource(ReadResourceRequestParams::new(format!("quire://view/{view}")))
        .await
        .unwrap();
    let text = match &read.contents[0] {
        rmcp::model::ResourceContents::TextResourceContents { text, .. } => text.clone(),
        other => panic!("{other:?}"),
    };
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(json["title"], "Reading");
    let views = json["views"].as_array().unwrap();
    assert_eq!(views.len(), 2);
    assert_eq!(views[1]["view"], "tasks");
    let rows = views[0]["result"]["rows"].as_array().unwrap();
    let cells: Vec<String> = rows
        .iter()
        .map(|r| format!("{} {}", r["note"]["title"], r["cells"]))
        .collect();
    // The protected book's tags and rating are not the client's to read: FROM #book does not find it.
    assert_eq!(cells, ["\"Dune\" [5]"]);
    assert_eq!(views[1]["result"]["rows"][0]["task"]["text"], "finish it 📅 2026-12-10");
    let refused = client
        .read_resource(ReadResourceRequestParams::new(format!("quire://view/{secret_view}")))
        .await;
    assert!(format!("{refused:?}").contains("is protected"), "{refused:?}");
}
