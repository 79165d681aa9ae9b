// Markdown lists in the editor: Enter after an item starts the next one (numbered on, task boxes unchecked), Enter on
// an empty item ends the list. `@codemirror/lang-markdown` has this, but it would bring three more languages along.
import { syntaxTree } from "@codemirror/language";
import { EditorSelection, type EditorState } from "@codemirror/state";
import type { EditorView } from "@codemirror/view";

/// An item's line: indent and quote marks, the bullet or number, the space after it, a task box, the text.
const ITEM = /^(\s*(?:>\s?)*\s*)([-*+]|(\d{1,9})([.)]))(\s+)(\[[ xX]\]\s+)?(.*)$/;

/// Whether `pos` is inside code, where a `-` is not a list.
function inCode(state: EditorState, pos: number): boolean {
  for (let node: any = syntaxTree(state).resolveInner(pos, -1); node; node = node.parent) {
    if (node.name === "FencedCode" || node.name === "CodeBlock") return true;
  }
  return false;
}

/// Enter in a list item: continue the list, or end it on an empty item. False elsewhere (the default Enter runs).
export function continueList(view: EditorView): boolean {
  const { state } = view;
  const range = state.selection.main;
  if (state.selection.ranges.length > 1 || !range.empty || inCode(state, range.head)) return false;
  const line = state.doc.lineAt(range.head);
  const item = ITEM.exec(line.text);
  if (!item) return false;
  const [, lead, bullet, number, delimiter, space, box, text] = item;
  const markerEnd = line.from + lead.length + bullet.length + space.length + (box?.length ?? 0);
  // Before the marker: an ordinary new line.
  if (range.head < markerEnd) return false;
  if (!text.trim() && range.head === line.to) {
    // An empty item ends the list: its marker goes (the quote marks stay), and a blank line follows the list, so
    // that the next line is not read as more of the last item.
    const quote = lead.replace(/\s+$/, "").replace(/^\s+/, "");
    const insert = `${quote}\n${quote ? `${quote} ` : ""}`;
    view.dispatch({
      changes: { from: line.from, to: line.to, insert },
      selection: EditorSelection.cursor(line.from + insert.length),
      scrollIntoView: true,
      userEvent: "input",
    });
    return true;
  }
  const next = number !== undefined ? `${Number(number) + 1}${delimiter}` : bullet;
  const insert = `\n${lead}${next}${space}${box ? "[ ] " : ""}`;
  // The text after the cursor moves to the new item.
  const after = state.doc.sliceString(range.head, line.to);
  const trimmed = after.length - after.trimStart().length;
  view.dispatch({
    changes: { from: range.head, to: range.head + trimmed, insert },
    selection: EditorSelection.cursor(range.head + insert.length),
    scrollIntoView: true,
    userEvent: "input",
  });
  return true;
}
