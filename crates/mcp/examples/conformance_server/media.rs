//! The media the fixtures answer with: a tiny image and sound, embedded resources, text.

use quire_tools::{ContentItem, PluginOutput};
use serde_json::{Value, json};

/// A 1x1 red PNG.
pub(crate) const RED_PIXEL_PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
/// A 44-byte WAV header with no samples.
pub(crate) const SILENT_WAV: &str = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA=";

/// The input schema of a tool without arguments.
pub(crate) fn no_arguments() -> Value {
    json!({"type": "object", "properties": {}})
}

/// A tool output of media only.
pub(crate) fn media(content: Vec<ContentItem>) -> PluginOutput {
    PluginOutput::from(json!({})).with_content(content)
}

/// The red pixel.
pub(crate) fn image() -> ContentItem {
    ContentItem::Image {
        data: RED_PIXEL_PNG.into(),
        mime_type: "image/png".into(),
    }
}

/// An embedded text resource.
pub(crate) fn text_resource(uri: &str, mime_type: &str, text: &str) -> ContentItem {
    ContentItem::Resource {
        uri: uri.into(),
        mime_type: Some(mime_type.into()),
        text: Some(text.into()),
        blob: None,
    }
}

/// A tool output of one text block.
pub(crate) fn text(text: impl Into<String>) -> PluginOutput {
    media(vec![ContentItem::Text { text: text.into() }])
}
