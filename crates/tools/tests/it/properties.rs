//! Properties: arbitrary JSON never panics a tool and always yields an output or an error object; random tool calls
//! never change a protected or system entity.

use proptest::prelude::*;
use quire_tools::ToolActor;
use serde_json::{Value, json};

use crate::fixture::Fixture;

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        "[a-z_{}\"*:-]{0,12}".prop_map(Value::String),
        Just(json!("{plain}")),
        Just(json!("{secret}")),
        Just(json!("_root")),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(
                prop_oneof![
                    Just("note_id".to_owned()),
                    Just("notebook_id".to_owned()),
                    Just("parent_id".to_owned()),
                    Just("query".to_owned()),
                    Just("title".to_owned()),
                    Just("body".to_owned()),
                    Just("edits".to_owned()),
                    Just("find".to_owned()),
                    Just("replace".to_owned()),
                    Just("add".to_owned()),
                    Just("name".to_owned()),
                    Just("type".to_owned()),
                    Just("value".to_owned()),
                    Just("limit".to_owned()),
                    "[a-z]{1,6}",
                ],
                inner,
                0..5
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_arguments_give_an_output_or_an_error_object(tool in 0usize..21, args in json_value()) {
        let fx = Fixture::new();
        let names = fx.tools.names();
        let name = &names[tool % names.len()];
        let result = fx.tools.call(&fx.ws, &ToolActor::mcp("prop"), name, fx.args(args)).unwrap();
        let object = result.value.as_object().expect("an object");
        if result.is_error {
            prop_assert_eq!(object.len(), 1);
            prop_assert!(object["error"].is_string());
            prop_assert!(!object["error"].as_str().unwrap().contains("failed unexpectedly"), "{}: a panic: {}", name, result.value);
        } else {
            prop_assert!(!object.contains_key("error"));
        }
    }

    #[test]
    fn tool_calls_never_change_protected_or_system_entities(
        calls in prop::collection::vec((0usize..21, json_value()), 1..12)
    ) {
        let fx = Fixture::new();
        let before = fx.protected_state().unwrap();
        let names = fx.tools.names();
        for (tool, args) in calls {
            let name = &names[tool % names.len()];
            fx.tools.call(&fx.ws, &ToolActor::agent("prop", 1), name, fx.args(args)).unwrap();
        }
        // Aimed calls at every protected and system target, too.
        for (name, args) in [
            ("update_note", json!({"note_id": "{secret}", "body": "x"})),
            ("delete_note", json!({"note_id": "{in_vault}"})),
            ("rename_notebook", json!({"notebook_id": "_root", "title": "x"})),
            ("move_notebook", json!({"notebook_id": "{vault}", "parent_id": "{work}"})),
            ("manage_tags", json!({"note_id": "{in_vault}", "add": ["x"]})),
            ("delete_attribute", json!({"note_id": "{secret}", "attribute_id": "{secret_label}"})),
        ] {
            fx.tools.call(&fx.ws, &ToolActor::mcp("prop"), name, fx.args(args)).unwrap();
        }
        prop_assert_eq!(fx.protected_state().unwrap(), before);
        prop_assert_eq!(fx.ws.check_integrity().unwrap(), Vec::<String>::new());
    }
}
