//! The consent page and the plugins a grant reaches (issue 53).

use std::sync::Arc;
use std::time::Duration;

use quire_mcp::oauth::OAuthStore;
use quire_tools::{Exposure, PluginTool, ToolRegistry};
use serde_json::json;

use super::{KEY, REDIRECT, VERIFIER, challenge, serve_with};

/// Issue 53: the consent page lists the plugins the server offers (not one kept to quire's own agent), and a grant
/// given with "only these" reaches those only.
#[tokio::test]
async fn the_consent_page_lists_the_plugins_and_the_grant_keeps_the_ones_ticked() {
    let tools = ToolRegistry::builtin();
    for (plugin, exposure) in [
        ("weather", Exposure::All),
        ("mail", Exposure::All),
        ("diary", Exposure::Sidebar),
    ] {
        let tool = PluginTool::read_only(
            format!("{plugin}__look"),
            "Look",
            "Looks.",
            json!({"type": "object"}),
            |_| Box::pin(async { Ok(json!({}).into()) }),
        );
        tools.register(tool.in_plugin(plugin).exposed_to(exposure)).unwrap();
    }
    let server = serve_with(Duration::from_secs(3600), Arc::new(tools)).await;
    let client = server.register(REDIRECT).await;
    let params = [
        ("response_type", "code"),
        ("client_id", client.as_str()),
        ("redirect_uri", REDIRECT),
        ("code_challenge", &challenge(VERIFIER)),
        ("code_challenge_method", "S256"),
        ("resource", &format!("{}/mcp", server.base)),
    ];
    let page = server.authorize(&params).await.text().await.unwrap();
    let signed = server
        .consent(&page, &[("key", KEY), ("decision", "signin")], &server.base)
        .await;
    assert_eq!(signed.status(), 200);
    let page = signed.text().await.unwrap();
    assert!(page.contains("Plugins it may use"), "{page}");
    assert!(
        page.contains("value=\"weather\"") && page.contains("value=\"mail\""),
        "{page}"
    );
    assert!(
        !page.contains("value=\"diary\""),
        "a plugin kept to the sidebar is not offered: {page}"
    );
    let answer = server
        .consent(
            &page,
            &[
                ("key", KEY),
                ("plugins", "some"),
                ("plugin", "weather"),
                ("decision", "allow"),
            ],
            &server.base,
        )
        .await;
    assert_eq!(answer.status(), 302, "{:?}", answer.text().await);
    let location = url::Url::parse(answer.headers()["location"].to_str().unwrap()).unwrap();
    let code = location
        .query_pairs()
        .find(|(k, _)| k == "code")
        .unwrap()
        .1
        .into_owned();
    let (status, tokens) = server.exchange(&client, &code).await;
    assert_eq!(status, 200, "{tokens}");
    let grants = server.store.grants().unwrap();
    assert_eq!(grants[0].plugins, Some(vec!["weather".to_owned()]));
    let grant = grants[0].named_token().grant;
    assert_eq!(grant.plugins, Some(["weather".to_owned()].into()));
}
