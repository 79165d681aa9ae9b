//! MCP content from quire's: the blocks of a tool's or a prompt's media, and the contents of a resource read.

use base64::Engine as _;
use quire_tools::ContentItem;
use rmcp::model::{ContentBlock, ResourceContents};
use serde_json::Value;

use crate::resources::ResourceBody;

/// A resource's body as MCP contents: text as it is, bytes in base64.
pub(crate) fn resource_contents(body: ResourceBody, uri: &str, mime_type: &str) -> ResourceContents {
    match body {
        ResourceBody::Text(text) => ResourceContents::text(text, uri.to_owned()).with_mime_type(mime_type),
        ResourceBody::Blob(bytes) => {
            ResourceContents::blob(base64::engine::general_purpose::STANDARD.encode(bytes), uri.to_owned())
                .with_mime_type(mime_type)
        }
    }
}

/// A content block as MCP JSON.
pub(crate) fn content_json(item: ContentItem) -> Value {
    serde_json::to_value(content_block(item)).unwrap_or(Value::Null)
}

/// The MCP block for a piece of media a tool returned.
pub(crate) fn content_block(item: ContentItem) -> ContentBlock {
    match item {
        ContentItem::Text { text } => ContentBlock::text(text),
        ContentItem::Image { data, mime_type } => ContentBlock::image(data, mime_type),
        ContentItem::Audio { data, mime_type } => ContentBlock::audio(data, mime_type),
        ContentItem::Resource {
            uri,
            mime_type,
            text,
            blob,
        } => {
            let contents = match (text, blob) {
                (_, Some(blob)) => ResourceContents::blob(blob, uri),
                (text, None) => ResourceContents::text(text.unwrap_or_default(), uri),
            };
            ContentBlock::resource(match mime_type {
                Some(mime) => contents.with_mime_type(mime),
                None => contents,
            })
        }
        ContentItem::ResourceLink {
            uri,
            name,
            description,
            mime_type,
        } => {
            let mut link = rmcp::model::Resource::new(uri, name);
            link.description = description;
            link.mime_type = mime_type;
            ContentBlock::resource_link(link)
        }
    }
}
