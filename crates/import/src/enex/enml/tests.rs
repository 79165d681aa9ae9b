//! The converter's own tests, one point of ENML at a time (the fixture suite in `tests/` covers whole notes).

use std::collections::HashMap;

use quire_core::Timestamp;

use super::{NoteLink, Task};

fn markdown(enml: &str) -> String {
    convert(enml, &[]).markdown
}

fn convert(enml: &str, tasks: &[Task]) -> super::Converted {
    super::enml_to_markdown(enml, &HashMap::new(), tasks, &super::converter())
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

#[test]
fn inline_styles_become_the_emphasis_markdown_has() {
    let enml = "<en-note><div>plain <span style=\"font-weight:bold\">bold</span> \
                <span style=\"font-style: italic\">it</span> <span style=\"font-weight: 700; font-style:italic\">both</span> \
                <span style=\"text-decoration: line-through\">gone</span> <s>s</s> <strike>k</strike> <del>d</del> \
                <u>under</u> <span style=\"text-decoration:underline\">u2</span> \
                <span style=\"--en-highlight:yellow;-evernote-highlight:true\">hi</span> \
                <span style=\"background-color: rgb(255, 250, 165)\">bg</span> \
                <span style=\"background-color: #ffffff; color: red; font-size: 20px\">plain again</span> \
                x<b> spaced </b>y</div></en-note>";
    assert_eq!(
        markdown(enml),
        "plain **bold** *it* ***both*** ~~gone~~ ~~s~~ ~~k~~ ~~d~~ <u>under</u> <u>u2</u> ==hi== ==bg== plain again \
         x **spaced** y\n"
    );
}

/// Interop finding 2-#1: nested highlights (a web clip's backgrounds, one inside the other) wrote `====`, and bold in
/// bold `****`; one of each is kept.
#[test]
fn emphasis_inside_emphasis_of_its_kind_is_written_once() {
    let enml = "<en-note><div><span style=\"--en-highlight:yellow\">outer \
                <span style=\"background-color:#ffef9e\">inner</span> end</span></div>\
                <div style=\"--en-highlight:red\"><div style=\"--en-highlight:red\"><b>deep <b>bold</b></b></div></div>\
                </en-note>";
    assert_eq!(markdown(enml), "==outer inner end==\n\n==**deep bold**==\n");
}

#[test]
fn hidden_text_is_left_out_and_what_it_separated_stays_apart() {
    let enml = "<en-note><div>Before<div style=\"display:none\">secret</div>after \
                <span style=\"display: none;\">hidden</span>end</div></en-note>";
    let out = markdown(enml);
    assert!(!out.contains("secret") && !out.contains("hidden"), "{out}");
    assert_eq!(out, "Before  \nafter end\n");
}

#[test]
fn what_markdown_cannot_write_as_html_has_it_is_reshaped_to_render() {
    // A link around a heading, `]` in alt text, a data: address on several lines.
    let enml = "<en-note><a href=\"https://x.org\"><h1>Heading link</h1></a>\
                <div><img src=\"data:image/png;base64,AAAA\nBBBB\" alt=\"a ] b [c]\"/></div></en-note>";
    assert_eq!(
        markdown(enml),
        "# [Heading link](https://x.org)\n\n![a \\] b \\[c\\]](data:image/png;base64,AAAABBBB)\n"
    );
    // A run of checkboxes on one line: one task item each.
    let run = "<en-note><div><en-todo checked=\"true\"/>one<br/><en-todo/>two<en-todo/>three</div>\
               <div>Shopping: <en-todo/>milk</div></en-note>";
    assert_eq!(
        markdown(run),
        "- [x] one\n- [ ] two\n- [ ] three\n\nShopping:\n- [ ] milk\n"
    );
}

#[test]
fn broken_markup_is_repaired_as_a_browser_would_and_said() {
    let out = convert(
        "<en-note><div>Text <b>broken<div>unclosed & amp <i>x</div></en-note>",
        &[],
    );
    assert_eq!(out.markdown, "Text **broken**  \n**unclosed & amp *x***\n");
    assert!(out.repaired.is_some_and(|r| r.contains("not well-formed")));
    let cdata = convert(
        "<en-note><div><![CDATA[a <b> c]]></div><div class=x>bare</div></en-note>",
        &[],
    );
    assert_eq!(cdata.markdown, "a \\<b> c  \nbare\n");
    assert!(cdata.repaired.is_some());
    assert!(convert("<en-note><div>fine</div></en-note>", &[]).repaired.is_none());
}

#[test]
fn tasks_take_their_groups_place_and_the_rest_go_at_the_end() {
    let task = |title: &str, done, group: &str, sort: &str, due: Option<&str>| Task {
        title: title.into(),
        done,
        group: group.into(),
        sort: sort.into(),
        due: due.and_then(Timestamp::parse_rfc3339),
        due_day: due.map(|d| d[..10].to_owned()),
        flagged: title == "First",
        reminder_day: (title == "Second").then(|| "2024-03-04".to_owned()),
    };
    let tasks = [
        task("Second", false, "g1", "B", None),
        task("First", true, "g1", "A", Some("2024-03-05T10:00:00Z")),
        task("Elsewhere", false, "g9", "A", None),
    ];
    let enml = "<en-note><div>Intro</div><div style=\"--en-task-group:true; --en-id:G1;\">\
                <div>Content not supported</div></div><div>Outro</div></en-note>";
    assert_eq!(
        convert(enml, &tasks).markdown,
        "Intro\n\n- [x] First 🔼 📅 2024-03-05\n- [ ] Second ⏳ 2024-03-04\n\nOutro\n\n- [ ] Elsewhere\n"
    );
}

#[test]
fn encrypted_text_callouts_and_note_links() {
    let out = convert(
        "<en-note><en-crypt hint=\"pets\" cipher=\"AES\">c2Vj\ncmV0</en-crypt>\
         <div style=\"--en-callout:true\"><div>Callout</div></div>\
         <div>See <a href=\"evernote:///view/1/s1/abc/abc/\">Other  note</a>.</div></en-note>",
        &[],
    );
    assert_eq!(
        out.markdown,
        "Encrypted text (Evernote, AES; hint: pets):\n\n```evernote-encrypted\nc2Vj\ncmV0\n```\n\n> Callout\n\n\
         See [Other note](evernote:///view/1/s1/abc/abc/).\n"
    );
    assert_eq!(
        out.note_links,
        [NoteLink {
            url: "evernote:///view/1/s1/abc/abc/".into(),
            text: "Other note".into()
        }]
    );
}

#[test]
fn a_line_break_holds_in_a_list_item_and_a_table_cell() {
    assert_eq!(
        markdown("<en-note><ol><li><div>Mix</div><div>then rest</div></li><li><div>Bake</div></li></ol></en-note>"),
        "1. Mix  \n   then rest\n2. Bake\n"
    );
    assert_eq!(
        markdown("<en-note><div>Mix<br/>then rest<br/></div><div>Next</div></en-note>"),
        "Mix  \nthen rest  \nNext\n"
    );
    let table = markdown(
        "<en-note><table><tr><td>A</td><td>B</td></tr><tr><td>April<br/>or June</td><td>x | y</td></tr></table></en-note>",
    );
    assert!(
        table.contains("April<br>or June") && table.contains("x \\| y"),
        "{table}"
    );
}

#[test]
fn html_of_other_apps_is_finished_alike() {
    let out = super::html_to_markdown("<p>one<br>two</p><hr><ul><li>a</li></ul>", &super::converter()).unwrap();
    assert_eq!(out, "one  \ntwo\n\n---\n\n- a\n");
}

#[test]
fn text_in_any_script_right_after_a_short_tag_converts() {
    // `</br>` was looked for by slicing five bytes at every `<`, inside a character of these.
    let out = markdown(
        "<en-note><div><b>中文</b></div><ul><li>Привет</li></ul><table><tr><td>好</td></tr></table>\
                        <div></b>é\u{a0}x</div></en-note>",
    );
    assert!(
        out.contains("**中文**") && out.contains("- Привет") && out.contains("好") && out.contains("é x"),
        "{out}"
    );
}

#[test]
fn code_in_a_pre_keeps_its_text_and_loses_its_highlighting() {
    let enml = "<en-note><pre><code class=\"language-rust\"><span style=\"font-weight:bold\">fn</span> main() {<br/>\
                <span style=\"font-style:italic\">// *hi*</span>\n}</code></pre><pre>plain <b>bold</b></pre></en-note>";
    assert_eq!(
        markdown(enml),
        "```rust\nfn main() {\n// *hi*\n}\n```\n\n```\nplain bold\n```\n"
    );
}

#[test]
fn emphasis_split_across_neighbouring_spans_is_one() {
    let enml = "<en-note><div><span style=\"font-weight:bold\">Hello</span><span style=\"font-weight:bold;color:red\">\
                World</span> and <b><i>a</i></b><strong><em>b</em></strong></div></en-note>";
    assert_eq!(markdown(enml), "**HelloWorld** and ***ab***\n");
}

#[test]
fn inline_content_between_lines_is_a_line_of_its_own() {
    // A picture placed after a line, outside any `<div>`, shows on the next line, with no space between.
    let out = markdown(
        "<en-note><div>This is the content</div> <a href=\"https://x.org\">x</a><div><br/></div>\
                        <div>After</div></en-note>",
    );
    assert_eq!(out, "This is the content  \n[x](https://x.org)\n\nAfter\n");
}
