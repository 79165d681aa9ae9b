//! The converter's own tests, one point of ENML at a time (the fixture suite in `tests/` covers whole notes).

use std::collections::HashMap;

fn markdown(enml: &str) -> String {
    super::enml_to_markdown(enml, &HashMap::new(), &[], &super::converter()).markdown
}

#[test]
fn a_list_written_beside_the_items_nests_like_one_inside_an_item() {
    let standard = markdown("<en-note><ul><li>a<ul><li>b</li></ul></li><li>c</li></ul></en-note>");
    let sibling = markdown("<en-note><ul><li>a</li><ul><li>b</li></ul><li>c</li></ul></en-note>");
    assert_eq!(sibling, standard);
    assert_eq!(sibling.trim_end(), "- a\n  - b\n- c");
    let divs = markdown(
        "<en-note><ol><li><div>one</div></li><ol><li><div>one.a</div></li><ul><li><div>deep</div></li></ul></ol>\
         <li><div>two</div></li></ol></en-note>",
    );
    assert_eq!(divs.trim_end(), "1. one\n   1. one.a\n      - deep\n2. two");
    // A list that opens a list has no item before it: it gets one of its own.
    let first = markdown("<en-note><ul><ul><li>inner</li></ul><li>outer</li></ul></en-note>");
    assert!(first.contains("inner") && first.contains("- outer"), "{first}");
}

#[test]
fn an_evernote_code_block_is_a_fenced_block_with_its_lines_as_written() {
    let enml = "<en-note><div>Before</div><div style=\"box-sizing: border-box; -en-codeblock: true;\">\
                <div>fn main() {</div><div>    let a_b = 2 * 3; // *not* emphasis</div><div><br/></div>\
                <div>    println!(\"&lt;{a_b}&gt;\");<br/>}</div></div><div>After</div></en-note>";
    assert_eq!(
        markdown(enml),
        "Before\n\n```\nfn main() {\n    let a_b = 2 * 3; // *not* emphasis\n\n    println!(\"<{a_b}>\");\n}\n```\n\nAfter\n"
    );
}
