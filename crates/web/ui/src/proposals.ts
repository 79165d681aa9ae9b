// Proposed AI edits shown inline in the editor: the replaced text struck through, the new text beside it, with
// accept and reject on each. The proposals follow the user's typing: one whose text the user changed is marked stale
// and can no longer be accepted; the others move with the text. An edit shows by whole words (diff.ts).
import { ChangeSet, EditorState, StateEffect, StateField, Text, Transaction, type Extension } from "@codemirror/state";
import { Decoration, EditorView, WidgetType, type DecorationSet } from "@codemirror/view";
import type { WireEdit } from "./api";
import { wordChanges } from "./diff";

export interface Proposal {
  id: number;
  from: number;
  to: number;
  insert: string;
  stale: boolean;
}

export const setProposals = StateEffect.define<Proposal[]>();
export const dropProposals = StateEffect.define<number[]>();

/// Marks the transaction that applies accepted proposals: it moves the others without making them stale.
export const applyingProposals = Transaction.userEvent.of("input.ai");

export const proposalField = StateField.define<Proposal[]>({
  create: () => [],
  update(value, tr) {
    let next = value;
    if (tr.docChanged && value.length) {
      const accepting = tr.isUserEvent("input.ai");
      next = value.map((p) => {
        const touched = !accepting && tr.changes.touchesRange(p.from, p.to);
        return {
          ...p,
          from: tr.changes.mapPos(p.from, -1),
          to: Math.max(tr.changes.mapPos(p.from, -1), tr.changes.mapPos(p.to, 1)),
          stale: p.stale || touched !== false,
        };
      });
    }
    for (const effect of tr.effects) {
      if (effect.is(setProposals)) next = effect.value;
      if (effect.is(dropProposals)) next = next.filter((p) => !effect.value.includes(p.id));
    }
    return next;
  },
  provide: (field) => EditorView.decorations.from(field, decorations),
});

class Inserted extends WidgetType {
  constructor(readonly proposal: Proposal) {
    super();
  }
  eq(other: Inserted) {
    const [a, b] = [this.proposal, other.proposal];
    return a.id === b.id && a.insert === b.insert && a.stale === b.stale;
  }
  toDOM() {
    const box = document.createElement("span");
    box.className = `cm-ai-proposal${this.proposal.stale ? " cm-ai-stale" : ""}`;
    box.dataset.proposal = String(this.proposal.id);
    if (this.proposal.insert) {
      const ins = document.createElement("ins");
      ins.className = "cm-ai-ins";
      ins.textContent = this.proposal.insert;
      box.append(ins);
    }
    const tools = document.createElement("span");
    tools.className = "cm-ai-tools";
    if (this.proposal.stale) {
      const note = document.createElement("span");
      note.className = "cm-ai-stale-note";
      note.textContent = "stale: you changed this text";
      tools.append(note);
    } else {
      tools.append(button("Accept", "accept", this.proposal.id));
    }
    tools.append(button(this.proposal.stale ? "Dismiss" : "Reject", "reject", this.proposal.id));
    box.append(tools);
    return box;
  }
  ignoreEvent() {
    return false;
  }
}

function button(label: string, action: string, id: number): HTMLButtonElement {
  const b = document.createElement("button");
  b.type = "button";
  b.textContent = label;
  b.className = `cm-ai-${action}`;
  b.dataset.action = action;
  b.dataset.proposal = String(id);
  b.setAttribute("aria-label", `${label} proposed edit ${id}`);
  return b;
}

function decorations(proposals: Proposal[]): DecorationSet {
  const ranges = [];
  for (const p of [...proposals].sort((a, b) => a.from - b.from || a.id - b.id)) {
    if (p.to > p.from) {
      ranges.push(Decoration.mark({ class: p.stale ? "cm-ai-del cm-ai-stale" : "cm-ai-del" }).range(p.from, p.to));
    }
    ranges.push(Decoration.widget({ widget: new Inserted(p), side: 1 }).range(p.to));
  }
  return Decoration.set(ranges, true);
}

/// What a click on a proposal's button asks for.
export function proposalClicks(onAction: (action: "accept" | "reject", id: number) => void): Extension {
  return EditorView.domEventHandlers({
    mousedown(event) {
      const target = event.target as HTMLElement;
      if (target.closest("button[data-action]")) {
        // Keep the editor's selection where it is.
        event.preventDefault();
        return true;
      }
      return false;
    },
    click(event) {
      const target = (event.target as HTMLElement).closest<HTMLElement>("button[data-action]");
      if (!target) return false;
      onAction(target.dataset.action as "accept" | "reject", Number(target.dataset.proposal));
      return true;
    },
  });
}

/// Code point offset of a UTF-16 position in `text` (the agent counts characters, JavaScript counts UTF-16 units).
export function charOffset(text: string, utf16: number): number {
  let chars = 0;
  for (let i = 0; i < utf16 && i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) i++;
    chars++;
  }
  return chars;
}

/// UTF-16 position of a code point offset in `text`.
export function utf16Offset(text: string, chars: number): number {
  let i = 0;
  for (let n = 0; n < chars && i < text.length; n++) {
    const code = text.charCodeAt(i);
    i += code >= 0xd800 && code <= 0xdbff && i + 1 < text.length ? 2 : 1;
  }
  return i;
}

/// The agent's edits (in order, each on the text the previous ones left) as independent changes of `base`, in
/// `base`'s positions: the hunks of the combined change.
export function hunks(base: string, edits: WireEdit[]): { from: number; to: number; insert: string }[] {
  let text = base;
  let combined = ChangeSet.empty(base.length);
  for (const edit of edits) {
    const from = utf16Offset(text, edit.start);
    const to = utf16Offset(text, edit.end);
    if (to < from) continue;
    const change = ChangeSet.of({ from, to, insert: edit.text }, text.length);
    combined = combined.compose(change);
    text = text.slice(0, from) + edit.text + text.slice(to);
  }
  const out: { from: number; to: number; insert: string }[] = [];
  combined.iterChanges((fromA, toA, _fromB, _toB, inserted: Text) => {
    // Only what differs, by whole words: a rewritten paragraph that changed one word shows that word, and changes
    // a few words apart stay separate proposals.
    for (const change of wordChanges(base.slice(fromA, toA), inserted.toString())) {
      out.push({ from: fromA + change.from, to: fromA + change.to, insert: change.insert });
    }
  });
  return out;
}

/// Proposals for the editor now: `hunks` of the turn's base text carried through what the user changed since
/// (`since`); a hunk whose text the user touched is stale.
export function proposalsFor(
  state: EditorState,
  found: { from: number; to: number; insert: string }[],
  since: ChangeSet,
  firstId: number,
): Proposal[] {
  return found.map((h, i) => {
    const touched = since.touchesRange(h.from, h.to) !== false;
    const from = since.mapPos(h.from, -1);
    const to = Math.max(from, since.mapPos(h.to, 1));
    return {
      id: firstId + i,
      from: Math.min(from, state.doc.length),
      to: Math.min(to, state.doc.length),
      insert: h.insert,
      stale: touched,
    };
  });
}

/// The accepted proposals as the agent's edits of `text`: character offsets, last first so that applying them in
/// order equals applying them at once.
export function wireEdits(text: string, accepted: Proposal[]): WireEdit[] {
  return [...accepted]
    .sort((a, b) => b.from - a.from)
    .map((p) => ({ tool: "accepted", start: charOffset(text, p.from), end: charOffset(text, p.to), text: p.insert }));
}
