// History: the open note's History view (its earlier versions with a line diff, restorable, and the changes made to
// it), the list of change sets with their Undo buttons, and what reloads after an undo or an assistant turn.
import { ApiError, api, type ChangeSetView, type Note } from "./api";
import { confirmDialog } from "./dialog";
import { lineDiff } from "./diff";
import { $, attempt, describeError, el, status } from "./dom";
import type { NoteEditor } from "./editor";
import { noteLedger } from "./ledger";
import type { Store } from "./store";

/// What the history asks of the other panes.
export interface HistoryNeeds {
  /// The open note: its typing saved first, a version of it shown, its newer version taken in.
  saveNow(): Promise<void>;
  load(note: Note): void;
  refreshOpen(): Promise<void>;
  /// The notebook tree, the note list and the tags loaded again.
  loadTree(): Promise<void>;
  loadNotes(): Promise<void>;
  loadTags(): Promise<void>;
}

export class NoteHistory {
  constructor(
    private readonly store: Store,
    private readonly editor: NoteEditor,
    private readonly page: HistoryNeeds,
  ) {
    store.subscribe("changed", () => void this.afterUndo());
  }

  async render() {
    const note = this.store.open;
    const box = $("history");
    if (!note) return;
    await this.page.saveNow();
    box.replaceChildren(el("p", { class: "hint", text: "Loading…" }));
    try {
      const [{ revisions }, { change_sets }] = await Promise.all([api.revisions(note.note_id), api.history(note.note_id)]);
      const current = this.editor.text();
      box.replaceChildren(el("h3", { text: "Revisions" }));
      if (!revisions.length) box.append(el("p", { class: "hint", text: "No earlier versions yet." }));
      for (const r of revisions) {
        const details = el("details", { class: "revision" }, el("summary", { text: `${new Date(r.created).toLocaleString()}: “${r.title}” before a change by ${r.actor}` }));
        details.addEventListener("toggle", () => {
          if (!details.open || details.querySelector(".diff")) return;
          details.append(diffView(r.body, current));
          const restore = el("button", { type: "button", text: "Restore this version" });
          restore.onclick = () =>
            void attempt(async () => {
              const restored = await api.restoreRevision(note.note_id, r.revision);
              this.page.load(restored);
              status("Restored; the text before is kept as a revision.");
              await this.render();
            });
          details.append(restore);
        });
        box.append(details);
      }
      box.append(el("h3", { text: "Changes" }));
      box.append(changeSetList(change_sets, () => void this.afterUndo()));
      const read = el("div", { id: "note-ledger" }, el("p", { class: "hint", text: "Loading…" }));
      box.append(el("h3", { text: "What AI read" }), read);
      void noteLedger(read, note.note_id);
    } catch (e) {
      box.replaceChildren(el("p", { class: "error", text: describeError(e) }));
    }
  }

  /// After an undo (or an assistant turn that changed notes): the open note, the tree, the list, the tags and the
  /// History view show what is stored now.
  async afterUndo() {
    await this.page.refreshOpen();
    await Promise.all([this.page.loadTree(), this.page.loadNotes(), this.page.loadTags()]);
    if (!$("history").hidden) await this.render();
  }
}

/// A line diff of two texts: removed lines, added lines, and the unchanged ones around them.
function diffView(before: string, after: string): HTMLElement {
  const box = el("pre", { class: "diff", "aria-label": "Differences from the current text" });
  box.append(el("span", { class: "hint", text: "− only in this version, + only in the current text\n" }));
  const lines = lineDiff(before, after);
  if (lines.every((l) => l.kind === "same")) box.append(el("span", { class: "hint", text: "Same as the current text." }));
  for (const line of lines) {
    const prefix = line.kind === "add" ? "+ " : line.kind === "del" ? "− " : "  ";
    box.append(el("span", { class: `diff-${line.kind}`, text: `${prefix}${line.text}\n` }));
  }
  return box;
}

/// Change sets, newest first, each with what it changed and an Undo button (`afterUndo` runs after an undo).
export function changeSetList(sets: ChangeSetView[], afterUndo: () => void): HTMLElement {
  const list = el("ul", { class: "change-sets" });
  if (!sets.length) list.append(el("li", { class: "hint", text: "No changes yet." }));
  for (const set of sets) {
    const shown = set.changes.slice(0, 8).map((c) => `${c.verb} ${c.what}`);
    if (set.changes.length > 8) shown.push(`and ${set.changes.length - 8} more`);
    const what = shown.join("; ");
    const item = el("li", {}, el("span", { class: "who", text: `${new Date(set.created).toLocaleString()} · ${set.by}` }), el("span", { text: what }));
    // An undo says so, and what it undid.
    if (set.undoes) {
      const of = `Undo of ${set.undoes.by}'s change of ${new Date(set.undoes.created).toLocaleString()}`;
      item.insertBefore(el("span", { class: "undo-of", text: of }), item.children[1]);
    }
    if (set.undone) item.append(el("span", { class: "hint", text: ` (undone)` }));
    else {
      const undo = el("button", { type: "button", text: set.actor.startsWith("agent") ? "Undo this turn" : "Undo" });
      undo.onclick = async () => {
        try {
          const done = await api.undo(set.change_set_id);
          status(`Undid ${done.undone_changes} change${done.undone_changes === 1 ? "" : "s"}.`);
          afterUndo();
        } catch (e) {
          // Something changed the same things since: say so in words, and offer to undo that later change too.
          if (!(e instanceof ApiError && e.kind === "changed_since")) {
            status(describeError(e), true);
            return;
          }
          const both = await confirmDialog(
            "Undo the later change too?",
            `${describeError(e)} Undoing both puts everything back as it was before this change, as one step you can undo again.`,
            "Undo both",
          );
          if (!both) return;
          try {
            const done = await api.undo(set.change_set_id, true);
            const later = done.undone_later_change_set_ids.length;
            status(`Undid this change and ${later} later change${later === 1 ? "" : "s"} that touched the same things.`);
            afterUndo();
          } catch (again) {
            status(describeError(again), true);
          }
        }
      };
      item.append(undo);
    }
    list.append(item);
  }
  return list;
}
