//! [`Page`]: one page of a tool's list (notes, tags, backlinks, changes...), with the fields every list shares
//! (`total`, `offset`, `has_more`) and one rule for `has_more`. The list keeps its own name on the wire (`notes`,
//! `tags`), which its item type gives through [`Listed`], so a page serializes exactly as the hand-written outputs
//! did and the model sees the same contract.

use std::borrow::Cow;
use std::collections::BTreeMap;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::de::DeserializeOwned;
use serde::ser::SerializeMap as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// An item a tool lists in pages: the name its list has in the tool's output, and what the list holds.
pub trait Listed: Serialize + DeserializeOwned + JsonSchema {
    /// The list's field in the output (`"notes"`, `"tags"`).
    const FIELD: &'static str;
    /// The list's description in the output schema (what it holds, in which order).
    const ABOUT: &'static str;
}

/// One page of a list: the items that fit, where the page starts and whether more follow. Serialized as
/// `{"total", "offset", "has_more", T::FIELD: [...]}`; a tool whose output says more puts it beside the page with
/// `#[serde(flatten)]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Page<T> {
    /// How many items there are in all.
    pub total: u64,
    /// The offset this page starts at.
    pub offset: u64,
    /// Whether items follow this page: a cut for the budget, or items beyond it.
    pub has_more: bool,
    /// The items.
    pub items: Vec<T>,
}

impl<T: Serialize> Page<T> {
    /// The page of `items`, the ones read at `offset` of `total`, cut to fit the budget of a page
    /// ([`crate::budget::PAGE_TOKENS`]). `has_more` holds whenever a next page, at `offset` plus the items
    /// returned, would not be empty.
    pub(crate) fn fitted(mut items: Vec<T>, total: u64, offset: u64) -> Page<T> {
        let cut = crate::budget::fit(&mut items, crate::budget::PAGE_TOKENS);
        let has_more = cut || offset.saturating_add(items.len() as u64) < total;
        Page {
            total,
            offset,
            has_more,
            items,
        }
    }
}

impl<T: Listed> Serialize for Page<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(4))?;
        map.serialize_entry("total", &self.total)?;
        map.serialize_entry("offset", &self.offset)?;
        map.serialize_entry("has_more", &self.has_more)?;
        map.serialize_entry(T::FIELD, &self.items)?;
        map.end()
    }
}

impl<'de, T: Listed> Deserialize<'de> for Page<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Page<T>, D::Error> {
        // Through a map of values, which works flattened too (serde hands a flattened field the rest of the map).
        let mut map = BTreeMap::<String, Value>::deserialize(deserializer)?;
        fn take<T: DeserializeOwned, E: serde::de::Error>(
            map: &mut BTreeMap<String, Value>,
            key: &str,
        ) -> Result<T, E> {
            let value = map
                .remove(key)
                .ok_or_else(|| E::custom(format_args!("missing field `{key}`")))?;
            serde_json::from_value(value).map_err(|e| E::custom(format_args!("{key}: {e}")))
        }
        Ok(Page {
            total: take(&mut map, "total")?,
            offset: take(&mut map, "offset")?,
            has_more: take(&mut map, "has_more")?,
            items: take(&mut map, T::FIELD)?,
        })
    }
}

/// The fields every page has, for their schema (the doc comments are the descriptions the model reads).
#[derive(JsonSchema)]
#[allow(dead_code, reason = "only its schema is used")]
struct Shared {
    /// How many there are in all.
    total: u64,
    /// The offset of this page.
    offset: u64,
    /// Whether more follow: call again with offset = offset + the number returned.
    has_more: bool,
}

impl<T: Listed> JsonSchema for Page<T> {
    fn schema_name() -> Cow<'static, str> {
        format!("PageOf_{}", T::schema_name()).into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let mut schema = Shared::json_schema(generator);
        let mut items = serde_json::json!({
            "type": "array",
            "items": generator.subschema_for::<T>(),
        });
        items["description"] = T::ABOUT.into();
        if let Some(properties) = schema.get_mut("properties").and_then(Value::as_object_mut) {
            properties.insert(T::FIELD.to_owned(), items);
        }
        if let Some(required) = schema.get_mut("required").and_then(Value::as_array_mut) {
            required.push(T::FIELD.into());
        }
        schema.remove("title");
        schema.remove("description");
        schema
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
    struct Word {
        text: String,
    }

    impl Listed for Word {
        const FIELD: &'static str = "words";
        const ABOUT: &'static str = "The words, in order.";
    }

    #[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
    struct Beside {
        source: String,
        #[serde(flatten)]
        page: Page<Word>,
    }

    fn words(n: usize) -> Vec<Word> {
        (0..n).map(|i| Word { text: format!("w{i}") }).collect()
    }

    #[test]
    fn a_page_has_the_lists_own_name_on_the_wire_and_reads_back() {
        let page = Page::fitted(words(2), 5, 1);
        let value = serde_json::to_value(&page).unwrap_or_default();
        assert_eq!(
            value,
            serde_json::json!({"total": 5, "offset": 1, "has_more": true, "words": [{"text": "w0"}, {"text": "w1"}]})
        );
        assert_eq!(serde_json::from_value::<Page<Word>>(value).ok(), Some(page));
        let beside = Beside {
            source: "here".into(),
            page: Page::fitted(words(1), 1, 0),
        };
        let value = serde_json::to_value(&beside).unwrap_or_default();
        assert_eq!(value["source"], "here");
        assert_eq!(value["has_more"], false);
        assert_eq!(serde_json::from_value::<Beside>(value).ok(), Some(beside));
        let missing = serde_json::from_value::<Page<Word>>(serde_json::json!({"total": 1, "offset": 0}));
        assert!(missing.is_err_and(|e| e.to_string().contains("has_more")));
    }

    #[test]
    fn more_follows_when_the_budget_cut_or_items_remain() {
        assert!(!Page::fitted(words(3), 3, 0).has_more);
        assert!(Page::fitted(words(3), 4, 0).has_more);
        assert!(!Page::fitted(words(0), 4, 4).has_more);
        let long = (0..2_000)
            .map(|i| Word {
                text: format!("word number {i}"),
            })
            .collect();
        let cut = Page::fitted(long, 2_000, 0);
        assert!(cut.has_more && cut.items.len() < 2_000);
    }

    #[test]
    fn the_schema_describes_the_shared_fields_and_the_named_list_flattened_too() {
        let schema = crate::output_schema_for::<Beside>();
        let properties = &schema["properties"];
        for field in ["source", "total", "offset", "has_more", "words"] {
            assert!(properties.get(field).is_some(), "{field} missing in {schema}");
        }
        assert_eq!(properties["words"]["description"], "The words, in order.");
        assert_eq!(properties["words"]["items"]["properties"]["text"]["type"], "string");
        let required: Vec<&str> = schema["required"]
            .as_array()
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        for field in ["source", "total", "offset", "has_more", "words"] {
            assert!(required.contains(&field), "{field} not required in {schema}");
        }
    }
}
