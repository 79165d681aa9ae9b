// The Markdown editor: CodeMirror 6 with its undo history, the proposals of the sidebar inline, and a change
// listener for autosave and for following the user's typing while a turn runs. Lists continue on Enter (lists.ts);
// a change of selection is announced as a `quire:selection` event on the editor, for the sidebar.
import { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
import { Language, LanguageSupport, defineLanguageFacet, syntaxHighlighting } from "@codemirror/language";
import { tagHighlighter, tags } from "@lezer/highlight";
import { GFM, parser as markdownParser } from "@lezer/markdown";
import { highlightSelectionMatches, searchKeymap } from "@codemirror/search";
import { type ChangeSet, Compartment, EditorState, type Extension, Transaction } from "@codemirror/state";
import { EditorView, drawSelection, highlightActiveLine, keymap, placeholder } from "@codemirror/view";
import { wordMerge } from "./merge";
import { continueList } from "./lists";
import { proposalClicks, proposalField, type Proposal } from "./proposals";
import { deviceIs } from "./offline";

/// Markdown highlighting from the Lezer parser alone: `@codemirror/lang-markdown` would also bundle the HTML, CSS
/// and JavaScript languages for fenced code, a third of the app's size.
const markdown = () => new LanguageSupport(new Language(defineLanguageFacet(), markdownParser.configure(GFM), [], "markdown"));

/// Markdown's parts as classes that app.css styles (headings sized as in the preview, code in monospace), rather than
/// a generated stylesheet: the page's CSP allows only its own.
const markdownClasses = tagHighlighter([
  { tag: tags.heading1, class: "cm-md-h1" },
  { tag: tags.heading2, class: "cm-md-h2" },
  { tag: tags.heading3, class: "cm-md-h3" },
  { tag: tags.heading4, class: "cm-md-h4" },
  { tag: tags.heading5, class: "cm-md-h5" },
  { tag: tags.heading6, class: "cm-md-h6" },
  { tag: tags.emphasis, class: "cm-md-em" },
  { tag: tags.strong, class: "cm-md-strong" },
  { tag: tags.strikethrough, class: "cm-md-strike" },
  { tag: [tags.link, tags.url], class: "cm-md-link" },
  { tag: tags.monospace, class: "cm-md-code" },
  { tag: tags.quote, class: "cm-md-quote" },
  { tag: [tags.processingInstruction, tags.meta, tags.contentSeparator], class: "cm-md-mark" },
]);

/// Runs `then` with the proposal the cursor is in (or touches); false when there is none.
function atCursor(view: EditorView, then: (id: number) => void): boolean {
  const at = view.state.selection.main.head;
  const found = view.state.field(proposalField).find((p) => p.from <= at && at <= p.to);
  if (!found) return false;
  then(found.id);
  return true;
}

/// Moves the cursor to the next proposal (the first after the cursor, else the first).
function nextProposal(view: EditorView): boolean {
  const proposals = [...view.state.field(proposalField)].sort((a, b) => a.from - b.from);
  if (!proposals.length) return false;
  const at = view.state.selection.main.head;
  const next = proposals.find((p) => p.from > at) ?? proposals[0];
  view.dispatch({ selection: { anchor: next.from }, scrollIntoView: true });
  return true;
}

export interface EditorHooks {
  /// The user changed the text (typing, paste, undo, accepting proposals).
  changed(changes: ChangeSet, tr: Transaction): void;
  proposal(action: "accept" | "reject", id: number): void;
}

export class NoteEditor {
  readonly view: EditorView;
  private readonly editable = new Compartment();

  private readonly extensions: Extension[];

  constructor(parent: HTMLElement, hooks: EditorHooks) {
    this.extensions = [
      history(),
      drawSelection(),
      highlightActiveLine(),
      highlightSelectionMatches(),
      syntaxHighlighting(markdownClasses),
      markdown(),
      EditorView.lineWrapping,
      // The proposal under the cursor: Alt+A accepts it, Alt+R rejects it; Alt+N goes to the next one.
      keymap.of([
        { key: "Enter", run: continueList },
        { key: "Alt-a", run: (view) => atCursor(view, (id) => hooks.proposal("accept", id)) },
        { key: "Alt-r", run: (view) => atCursor(view, (id) => hooks.proposal("reject", id)) },
        { key: "Alt-n", run: nextProposal },
      ]),
      keymap.of([...defaultKeymap, ...historyKeymap, ...searchKeymap, indentWithTab]),
      placeholder("Write in Markdown…"),
      this.editable.of(EditorView.editable.of(true)),
      EditorView.contentAttributes.of({ "aria-label": "Note text", "aria-multiline": "true" }),
      // The page's CSP allows the editor's own stylesheet by this nonce.
      EditorView.cspNonce.of(document.querySelector<HTMLMetaElement>('meta[name="csp-nonce"]')?.content ?? ""),
      proposalField,
      proposalClicks((action, id) => hooks.proposal(action, id)),
      EditorView.updateListener.of((update) => {
        for (const tr of update.transactions) {
          if (tr.docChanged) hooks.changed(tr.changes, tr);
        }
        if (update.selectionSet || update.docChanged) update.view.dom.dispatchEvent(new CustomEvent("quire:selection", { bubbles: true }));
      }),
    ];
    this.view = new EditorView({ parent, state: EditorState.create({ doc: "", extensions: this.extensions }) });
  }

  /// Replaces the text with a note's, with a fresh undo history and no proposals.
  load(text: string, editable: boolean) {
    this.view.setState(EditorState.create({ doc: text, extensions: this.extensions }));
    this.setEditable(editable);
  }

  text(): string {
    return this.view.state.doc.toString();
  }

  /// Brings in a version of the text written elsewhere (`base` was the text saved here, `theirs` the newer one)
  /// around what was typed here since `base`: their changes go in as edits, by whole words, so the cursor, the
  /// selection, the undo history and the unsaved typing all stay. Returns false, changing nothing, when their changes
  /// touch the words typed here (the save then shows the conflict, as before).
  mergeFrom(base: string, theirs: string): boolean {
    const changes = wordMerge(base, theirs, this.text());
    if (!changes) return false;
    this.view.dispatch({
      changes,
      annotations: [Transaction.addToHistory.of(false), Transaction.remote.of(true)],
    });
    return true;
  }

  /// The assistant's edits proposed in the text, stale ones included.
  proposals(): Proposal[] {
    return this.view.state.field(proposalField);
  }

  setEditable(wanted: boolean) {
    // A paired device that only reads edits nothing (the server refuses its writes anyway).
    const on = wanted && !deviceIs("read-only");
    this.view.dispatch({ effects: this.editable.reconfigure(EditorView.editable.of(on)) });
  }

  focus() {
    this.view.focus();
  }
}

