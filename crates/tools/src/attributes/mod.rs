//! Tools about attributes (labels and relations) and the backlinks relations make.

pub mod delete_attribute;
pub mod get_attributes;
pub mod get_backlinks;
pub mod set_attribute;

use crate::prelude::*;

/// The two kinds of attribute.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AttributeType {
    /// A text value.
    #[default]
    Label,
    /// Points at a note; the value is its id.
    Relation,
}

impl From<quire_core::AttributeKind> for AttributeType {
    fn from(kind: quire_core::AttributeKind) -> AttributeType {
        match kind {
            quire_core::AttributeKind::Label => AttributeType::Label,
            quire_core::AttributeKind::Relation => AttributeType::Relation,
        }
    }
}

/// What a label's value holds, when it is not text.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ValueType {
    /// Text (the default).
    #[default]
    Text,
    /// JSON.
    Json,
}

/// An attribute of a note.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct AttributeInfo {
    /// The attribute's id, for delete_attribute.
    pub attribute_id: String,
    /// The note that has it.
    pub note_id: String,
    /// label or relation.
    #[serde(rename = "type")]
    pub kind: AttributeType,
    /// The attribute's name.
    pub name: String,
    /// A label's value (a json label's is the value itself: true, 42, ["a"]...), or a relation's target note id.
    pub value: serde_json::Value,
    /// json for a label that holds a structured value (a list, number, boolean, map or null); absent for text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_type: Option<ValueType>,
    /// For a relation, the title of the note it points at.
    pub target_title: Option<String>,
    /// Whether `value` was shortened here (its start and end kept): do not write it back as it is.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub value_is_shortened: bool,
}

/// Label values in outputs are shortened beyond this many characters.
const VALUE_CHARS: usize = 1_000;

pub(crate) fn attribute_info(r: &Reader<'_>, a: quire_core::Attribute) -> Result<AttributeInfo, ToolError> {
    let target_title = match a.kind {
        // A target purged since keeps the relation readable, without a title.
        quire_core::AttributeKind::Relation => r
            .note_summary(&a.value)
            .ok()
            .map(|n| crate::budget::shorten(&n.title, crate::types::TITLE_CHARS)),
        quire_core::AttributeKind::Label => None,
    };
    let shortened = crate::budget::shorten(&a.value, VALUE_CHARS);
    let value_is_shortened = shortened != a.value;
    // A structured value is shown as itself, unless too long to show whole (then as its shortened JSON text).
    let (value, value_type) = match a.json() {
        Some(json) if !value_is_shortened => (json, Some(ValueType::Json)),
        Some(_) => (serde_json::Value::String(shortened), Some(ValueType::Json)),
        None => (serde_json::Value::String(shortened), None),
    };
    Ok(AttributeInfo {
        attribute_id: a.id,
        note_id: a.note_id,
        kind: a.kind.into(),
        name: a.name,
        // A long label value is shortened (start and end kept); the note's own text is the place for long text.
        value_is_shortened,
        value,
        value_type,
        target_title,
    })
}
