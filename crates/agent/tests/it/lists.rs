//! The three tool lists of the seed, snapshotted, and the policy.

use quire_agent::{NoteContext, Tier, ToolPolicy, build_tool_list};
use quire_tools::ToolFilter;
use quire_tools::ToolRegistry;

fn names(context: &NoteContext, policy: &ToolPolicy) -> Vec<String> {
    build_tool_list(context, &ToolRegistry::builtin(), policy)
        .into_iter()
        .map(|t| {
            format!(
                "{} ({})",
                t.spec.name,
                if t.tier == Tier::Session {
                    "session"
                } else {
                    "workspace"
                }
            )
        })
        .collect()
}

#[test]
fn the_three_cases() {
    let policy = ToolPolicy::default();
    let none = names(&NoteContext::none(), &policy);
    let focused = names(&NoteContext::focused("n1", "T", "Some text.\n"), &policy);
    let with_block = names(
        &NoteContext::focused("n1", "T", "Text.\n```mermaid\ngraph TD\n```\n"),
        &policy,
    );
    let selected = names(
        &NoteContext::focused("n1", "T", "Some text.\n").with_selection(0, 4),
        &policy,
    );
    insta::assert_json_snapshot!("no_note", none);
    insta::assert_json_snapshot!("focused_note", focused);
    insta::assert_json_snapshot!("selection", selected);
    assert_eq!(with_block.len(), focused.len() + 1);
    assert!(with_block.iter().any(|n| n.starts_with("replace_structured_block")));
}

#[test]
fn policy_limits_workspace_tools() {
    let no_workspace = ToolPolicy {
        no_workspace_tools: true,
        ..ToolPolicy::default()
    };
    assert!(names(&NoteContext::none(), &no_workspace).is_empty());
    let read_only = ToolPolicy {
        filter: ToolFilter {
            read_only: true,
            ..ToolFilter::default()
        },
        ..ToolPolicy::default()
    };
    assert_eq!(names(&NoteContext::none(), &read_only).len(), 12);
    let disabled = ToolPolicy {
        filter: ToolFilter {
            disabled: ["delete_note".to_owned()].into(),
            ..ToolFilter::default()
        },
        ..ToolPolicy::default()
    };
    let offered = names(&NoteContext::none(), &disabled);
    assert!(
        !offered.iter().any(|n| n.starts_with("delete_note"))
            && offered.len() == 21
            && offered.iter().any(|n| n.starts_with("find_tools")),
        "{offered:?}"
    );
}
