//! A plugin's answer as quire's: the object the model reads, media for the UI, all of it under the output cap.

use base64::Engine as _;
use quire_tools::{ContentItem, PluginOutput, ToolError};
use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};
use serde_json::json;

/// The MCP Apps extension's identifier.
pub(crate) const APPS_EXTENSION: &str = "io.modelcontextprotocol/ui";

/// The media type of an MCP Apps `ui://` resource: an HTML document a host shows in a sandboxed frame.
pub const APP_MIME_TYPE: &str = "text/html;profile=mcp-app";

/// Turns a plugin's result into quire's. The model reads `{"text": ...}` (every text block, in order) and
/// `structured` (the `structuredContent`, if any), plus a line per piece of media saying what the user was shown;
/// the media go to the UI. The whole answer is cut at `cap` bytes: text first kept, then media that still fit.
pub(crate) fn convert(result: CallToolResult, cap: usize, plugin: &str) -> Result<PluginOutput, ToolError> {
    let passed_on = serde_json::to_value(&result).ok();
    let mut texts: Vec<String> = Vec::new();
    let mut media: Vec<ContentItem> = Vec::new();
    let mut shown: Vec<String> = Vec::new();
    for block in result.content {
        match block {
            ContentBlock::Text(text) => texts.push(text.text),
            ContentBlock::Image(image) => {
                shown.push(format!("an image ({}) shown to the user", image.mime_type));
                media.push(ContentItem::Image {
                    data: image.data,
                    mime_type: image.mime_type,
                });
            }
            ContentBlock::Audio(audio) => {
                shown.push(format!("a sound ({}) the user can play", audio.mime_type));
                media.push(ContentItem::Audio {
                    data: audio.data,
                    mime_type: audio.mime_type,
                });
            }
            ContentBlock::ResourceLink(link) => {
                shown.push(format!("a link to {} ({})", link.name, link.uri));
                media.push(ContentItem::ResourceLink {
                    uri: link.uri,
                    name: link.name,
                    description: link.description,
                    mime_type: link.mime_type,
                });
            }
            ContentBlock::Resource(embedded) => match embedded.resource {
                ResourceContents::TextResourceContents {
                    uri, mime_type, text, ..
                } => {
                    // An embedded text resource is text the model should read.
                    texts.push(format!("[{uri}]\n{text}"));
                    media.push(ContentItem::Resource {
                        uri,
                        mime_type,
                        text: Some(text),
                        blob: None,
                    });
                }
                ResourceContents::BlobResourceContents {
                    uri, mime_type, blob, ..
                } => {
                    shown.push(format!("a file {uri} the user can open"));
                    media.push(ContentItem::Resource {
                        uri,
                        mime_type,
                        text: None,
                        blob: Some(blob),
                    });
                }
                _ => {}
            },
            _ => {}
        }
    }
    let is_error = result.is_error == Some(true);
    let mut text = texts.join("\n");
    if is_error {
        let message = if text.trim().is_empty() {
            format!("The plugin {plugin} reported a failure without saying why.")
        } else {
            cut(&text, cap.min(16 * 1024)).0
        };
        return Err(ToolError::new(message));
    }
    let mut structured = result.structured_content;
    // Servers send structured content as text too (the spec asks them to, for older clients), and SDKs wrap a plain
    // answer as `{"result": ...}`: the model reads one copy.
    if let Some(value) = &structured {
        let wrapped_text = value.as_object().is_some_and(|o| o.len() == 1)
            && value.get("result").and_then(serde_json::Value::as_str) == Some(text.as_str());
        let same_json = serde_json::from_str::<serde_json::Value>(&text).is_ok_and(|parsed| &parsed == value);
        if wrapped_text || same_json {
            structured = None;
        }
    }
    let structured_size = structured.as_ref().map_or(0, |s| s.to_string().len());
    let total = text.len() + structured_size + media.iter().map(item_size).sum::<usize>();
    let mut notes: Vec<String> = Vec::new();
    if total > cap {
        // Text first: it is what the model reads. Structured content goes whole or not at all.
        let mut room = cap;
        if structured_size > room / 2 {
            structured = None;
            notes.push("its structured content was left out".into());
        } else {
            room -= structured_size;
        }
        if text.len() > room {
            let (kept, _) = cut(&text, room);
            notes.push(format!("its text was cut after {} of {} bytes", kept.len(), text.len()));
            text = kept;
        }
        room = room.saturating_sub(text.len());
        let before = media.len();
        media.retain(|item| {
            let size = item_size(item);
            if size <= room {
                room -= size;
                true
            } else {
                false
            }
        });
        if media.len() < before {
            notes.push(format!("{} of its media were left out", before - media.len()));
        }
    }
    let mut value = json!({ "text": text });
    if let Some(structured) = structured {
        value["structured"] = structured;
    }
    if !shown.is_empty() {
        value["media"] = json!(shown);
    }
    if !notes.is_empty() {
        value["truncated"] = json!(format!(
            "The answer was {total} bytes, over the {cap} bytes quire passes on: {}.",
            notes.join("; ")
        ));
    }
    Ok(PluginOutput {
        value,
        content: media,
        // Cut answers are sent as quire made them (with the note saying so).
        passed_on: passed_on.filter(|_| notes.is_empty()),
    })
}

/// The HTML of a `ui://` resource read from the plugin, as media to show with the result.
pub(crate) fn ui_item(uri: &str, contents: Vec<ResourceContents>) -> Option<ContentItem> {
    contents.into_iter().find_map(|c| match c {
        ResourceContents::TextResourceContents { text, mime_type, .. } => Some(ContentItem::Resource {
            uri: uri.to_owned(),
            mime_type: Some(mime_type.unwrap_or_else(|| APP_MIME_TYPE.to_owned())),
            text: Some(text),
            blob: None,
        }),
        ResourceContents::BlobResourceContents { blob, mime_type, .. } => {
            let bytes = base64::engine::general_purpose::STANDARD.decode(blob).ok()?;
            Some(ContentItem::Resource {
                uri: uri.to_owned(),
                mime_type: Some(mime_type.unwrap_or_else(|| APP_MIME_TYPE.to_owned())),
                text: Some(String::from_utf8(bytes).ok()?),
                blob: None,
            })
        }
        _ => None,
    })
}

pub(crate) fn item_size(item: &ContentItem) -> usize {
    match item {
        ContentItem::Text { text } => text.len(),
        ContentItem::Image { data, .. } | ContentItem::Audio { data, .. } => data.len(),
        ContentItem::Resource { text, blob, .. } => {
            text.as_ref().map_or(0, String::len) + blob.as_ref().map_or(0, String::len)
        }
        ContentItem::ResourceLink { uri, name, .. } => uri.len() + name.len(),
    }
}

/// The longest prefix of `text` of at most `max` bytes that ends on a character boundary.
fn cut(text: &str, max: usize) -> (String, bool) {
    if text.len() <= max {
        return (text.to_owned(), false);
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    (text[..end].to_owned(), true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(content: Vec<ContentBlock>) -> CallToolResult {
        CallToolResult::success(content)
    }

    #[test]
    fn text_over_the_cap_is_cut_and_the_model_told() {
        let big = "é".repeat(10_000);
        let out = convert(result(vec![ContentBlock::text(big)]), 1001, "p").unwrap();
        let text = out.value["text"].as_str().unwrap();
        assert_eq!(text.len(), 1000, "cut on a character boundary");
        assert!(out.value["truncated"].as_str().unwrap().contains("over the 1001 bytes"));
    }

    #[test]
    fn media_go_to_the_ui_and_the_model_hears_of_them() {
        let out = convert(
            result(vec![
                ContentBlock::text("here"),
                ContentBlock::image("AAAA", "image/png"),
            ]),
            1000,
            "p",
        )
        .unwrap();
        assert_eq!(out.value["text"], "here");
        assert_eq!(out.value["media"][0], "an image (image/png) shown to the user");
        assert_eq!(out.content.len(), 1);
    }

    #[test]
    fn structured_content_that_repeats_the_text_is_sent_once() {
        let mut wrapped = result(vec![ContentBlock::text("Forgot Lyon.")]);
        wrapped.structured_content = Some(json!({"result": "Forgot Lyon."}));
        assert_eq!(
            convert(wrapped, 1000, "p").unwrap().value,
            json!({"text": "Forgot Lyon."})
        );
        let mut same = result(vec![ContentBlock::text(r#"{"sum": 3}"#)]);
        same.structured_content = Some(json!({"sum": 3}));
        assert_eq!(
            convert(same, 1000, "p").unwrap().value,
            json!({"text": r#"{"sum": 3}"#})
        );
        let mut more = result(vec![ContentBlock::text("The sum is 3.")]);
        more.structured_content = Some(json!({"sum": 3}));
        assert_eq!(convert(more, 1000, "p").unwrap().value["structured"], json!({"sum": 3}));
    }

    #[test]
    fn an_error_result_is_a_tool_error_with_its_text() {
        let mut failed = result(vec![ContentBlock::text("no such city")]);
        failed.is_error = Some(true);
        assert_eq!(convert(failed, 1000, "p").unwrap_err().message(), "no such city");
    }
}
