//! The suite's resources and resource template, through the public resource API.

use base64::Engine as _;
use quire_mcp::QuireServer;
use quire_mcp::resources::{ResourceBody, StaticResource, TemplateResource};
use serde_json::json;

use crate::media::RED_PIXEL_PNG;

/// The suite's resources, through the public resource API.
pub(crate) fn register(server: &QuireServer) {
    let resources = server.resources();
    resources.add(StaticResource {
        uri: "test://static-text".into(),
        name: "Static text".into(),
        mime_type: "text/plain".into(),
        body: ResourceBody::Text("This is the content of the static text resource.".into()),
    });
    resources.add(StaticResource {
        uri: "test://static-binary".into(),
        name: "Static binary".into(),
        mime_type: "image/png".into(),
        body: ResourceBody::Blob(
            base64::engine::general_purpose::STANDARD
                .decode(RED_PIXEL_PNG)
                .unwrap_or_default(),
        ),
    });
    resources.add(StaticResource {
        uri: "test://watched-resource".into(),
        name: "Watched resource".into(),
        mime_type: "text/plain".into(),
        body: ResourceBody::Text("A resource to subscribe to.".into()),
    });
    resources.add_template(
        TemplateResource::new(
            "test://template/{id}/data",
            "Template data",
            "Data for an id.",
            "application/json",
            |values| {
                let id = values.get("id")?;
                Some(ResourceBody::Text(
                    json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")}).to_string(),
                ))
            },
        )
        .with_completion(|_, typed| {
            ["123", "124", "200"]
                .iter()
                .filter(|v| v.starts_with(typed))
                .map(|v| (*v).to_owned())
                .collect()
        }),
    );
}
