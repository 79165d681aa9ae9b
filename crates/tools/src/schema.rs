//! JSON Schemas that every model provider accepts: generated with schemars, then reduced to a portable subset.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value};

/// Keywords that OpenAI, Anthropic and Gemini function calling all accept (Gemini's OpenAPI subset is the narrowest).
const PORTABLE_KEYWORDS: &[&str] = &[
    "type",
    "description",
    "properties",
    "required",
    "items",
    "enum",
    "minimum",
    "maximum",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
];

/// The input schema of `T`, as every model provider accepts it: subschemas inlined (no `$ref`), `Option<T>` as an
/// optional `T` (not a `["T", "null"]` type list), enums as string `enum`s, and only the keywords every provider accepts.
pub fn portable_schema_for<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft2020_12()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .into_generator();
    let mut value = generator.into_root_schema_for::<T>().to_value();
    reduce(&mut value);
    // The root's description is the input type's doc comment ("Arguments of ..."): the tool's own description
    // already says what the arguments are for, and every token here is paid on every model request.
    if let Some(map) = value.as_object_mut() {
        map.remove("description");
    }
    if value.get("type").and_then(Value::as_str) == Some("object") && value.get("properties").is_none() {
        value["properties"] = Value::Object(Map::new());
    }
    value
}

fn reduce(value: &mut Value) {
    let Value::Object(map) = value else { return };
    // `Option<T>`: an optional argument is simply not required; "null" is not a type every provider takes.
    if let Some(Value::Array(types)) = map.get("type") {
        let rest: Vec<Value> = types.iter().filter(|t| t.as_str() != Some("null")).cloned().collect();
        if rest.len() == 1 {
            map.insert("type".into(), rest[0].clone());
        }
    }
    // An optional enum lists `null` among its values; the argument is simply left out instead.
    if let Some(Value::Array(values)) = map.get_mut("enum") {
        values.retain(|v| !v.is_null());
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(options)) = map.get(key) {
            let rest: Vec<Value> = options
                .iter()
                .filter(|o| o.get("type").and_then(Value::as_str) != Some("null"))
                .cloned()
                .collect();
            if rest.len() == 1 && rest.len() < options.len() {
                map.remove(key);
                if let Value::Object(inner) = &rest[0] {
                    for (k, v) in inner {
                        map.entry(k.clone()).or_insert_with(|| v.clone());
                    }
                }
            }
        }
    }
    // A choice between documented constants (how schemars writes a doc-commented unit enum) becomes a string enum.
    for key in ["oneOf", "anyOf"] {
        if let Some(Value::Array(options)) = map.get(key)
            && !options.is_empty()
            && options.iter().all(|o| o.get("const").is_some_and(Value::is_string))
        {
            let values: Vec<Value> = options.iter().filter_map(|o| o.get("const").cloned()).collect();
            let notes: Vec<String> = options
                .iter()
                .filter_map(|o| {
                    let text = o.get("description")?.as_str()?.trim_end_matches('.');
                    Some(format!("{}: {text}", o.get("const")?.as_str()?))
                })
                .collect();
            map.remove(key);
            map.insert("type".into(), Value::String("string".into()));
            map.insert("enum".into(), Value::Array(values));
            if !notes.is_empty() {
                let description = map.get("description").and_then(Value::as_str).unwrap_or("").to_owned();
                let joined = [description, format!("{}.", notes.join("; "))]
                    .into_iter()
                    .filter(|s| !s.is_empty())
                    .collect::<Vec<_>>();
                map.insert("description".into(), Value::String(joined.join(" ")));
            }
        }
    }
    if let Some(Value::String(only)) = map.get("const").cloned().as_ref() {
        map.insert("type".into(), Value::String("string".into()));
        map.insert("enum".into(), Value::Array(vec![Value::String(only.clone())]));
    }
    map.retain(|k, _| PORTABLE_KEYWORDS.contains(&k.as_str()));
    // schemars bounds every unsigned integer at 0; the arguments' parser refuses a negative number anyway, with an
    // error that says so, so the bound is not worth its tokens.
    if map.get("minimum").and_then(Value::as_u64) == Some(0) {
        map.remove("minimum");
    }
    if let Some(Value::Object(properties)) = map.get_mut("properties") {
        for property in properties.values_mut() {
            reduce(property);
        }
    }
    if let Some(items) = map.get_mut("items") {
        reduce(items);
    }
}

/// The output schema of `T` as it serialises (nulls included), with subschemas inlined. Outputs are not sent to
/// model providers as function parameters, so they keep the full JSON Schema that MCP clients validate against.
pub fn output_schema_for<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft2020_12()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .for_serialize()
        .into_generator();
    let mut value = generator.into_root_schema_for::<T>().to_value();
    if let Some(map) = value.as_object_mut() {
        map.remove("title");
    }
    standard_formats(&mut value);
    value
}

/// The `format` values of JSON Schema itself; validators such as Ajv warn about any other.
pub const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "uuid",
    "regex",
];

/// Drops the formats schemars invents for Rust's number types (`uint64`, `uint8`, `double`, ...), keeping what they
/// said in standard terms: an unsigned integer has `minimum: 0`.
fn standard_formats(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if let Some(format) = map.get("format").and_then(Value::as_str).map(str::to_owned)
                && !STANDARD_FORMATS.contains(&format.as_str())
            {
                map.remove("format");
                if format.starts_with("uint") {
                    map.entry("minimum").or_insert(Value::from(0));
                }
            }
            map.values_mut().for_each(standard_formats);
        }
        Value::Array(items) => items.iter_mut().for_each(standard_formats),
        _ => {}
    }
}

/// Arguments whose name says all a model needs (the system prompt and the MCP instructions state the paging
/// convention once), so that their descriptions are not paid for on every request.
pub(crate) const SELF_DESCRIBING: &[&str] = &["note_id", "offset"];

/// Checks a tool's input schema against the rules all model providers share: root `type: object` with
/// `properties`, only portable keywords, no `$ref`, every property described (but `note_id` and `offset`), `required` naming real properties.
/// Returns the problems found, each naming where.
pub fn check_portable_schema(schema: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        problems.push("root: type must be \"object\"".to_owned());
    }
    if !schema.get("properties").is_some_and(Value::is_object) {
        problems.push("root: properties must be an object".to_owned());
    }
    walk(schema, "root", &mut problems);
    problems
}

fn walk(schema: &Value, at: &str, problems: &mut Vec<String>) {
    let Some(map) = schema.as_object() else {
        problems.push(format!("{at}: a schema must be an object"));
        return;
    };
    for key in map.keys() {
        if !PORTABLE_KEYWORDS.contains(&key.as_str()) {
            problems.push(format!("{at}: keyword '{key}' is not accepted by every provider"));
        }
    }
    match map.get("type") {
        Some(Value::String(t))
            if ["object", "array", "string", "integer", "number", "boolean"].contains(&t.as_str()) => {}
        other => problems.push(format!("{at}: type must be one JSON type name, found {other:?}")),
    }
    if let Some(values) = map.get("enum")
        && !values
            .as_array()
            .is_some_and(|v| !v.is_empty() && v.iter().all(Value::is_string))
    {
        problems.push(format!("{at}: enum must be a non-empty list of strings"));
    }
    let properties = map.get("properties").and_then(Value::as_object);
    if let Some(required) = map.get("required") {
        for name in required.as_array().into_iter().flatten() {
            if !name
                .as_str()
                .is_some_and(|n| properties.is_some_and(|p| p.contains_key(n)))
            {
                problems.push(format!("{at}: required names {name}, which is not a property"));
            }
        }
    }
    for (name, property) in properties.into_iter().flatten() {
        let here = format!("{at}.{name}");
        if !SELF_DESCRIBING.contains(&name.as_str())
            && property
                .get("description")
                .and_then(Value::as_str)
                .is_none_or(|d| d.trim().is_empty())
        {
            problems.push(format!("{here}: every argument needs a description for the model"));
        }
        walk(property, &here, problems);
    }
    if let Some(items) = map.get("items") {
        walk(items, &format!("{at}[]"), problems);
    }
}
