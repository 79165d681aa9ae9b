// The bar over the editor while the assistant's edits are proposed: how many (and how many went stale), Accept all,
// Reject all; accepting saves the chosen edits once, through the agent's edit acceptance, as one undo step.
import { api, type Note } from "./api";
import { $, describeError, status } from "./dom";
import type { NoteEditor } from "./editor";
import { dropProposals, wireEdits } from "./proposals";
import type { Store } from "./store";

/// The open note's saving, as the bar needs it.
export interface Saving {
  saveNow(): Promise<void>;
  /// Set when a save was refused as stale: nothing is accepted until the conflict is settled.
  readonly conflict: Note | null;
  /// The text as last saved.
  savedText: string;
}

export class ProposalBar {
  /// `turnActor`: the actor of the assistant's last turn, so that accepted edits join its change set.
  constructor(
    private readonly store: Store,
    private readonly editor: NoteEditor,
    private readonly note: Saving,
    private readonly turnActor: () => unknown,
  ) {
    store.subscribe("proposals", () => this.update());
    $("accept-all").onclick = () => void this.decide(editor.proposals().filter((p) => !p.stale).map((p) => p.id), []);
    $("reject-all").onclick = () => void this.decide([], editor.proposals().map((p) => p.id));
  }

  update() {
    const all = this.editor.proposals();
    const open = all.filter((p) => !p.stale).length;
    $("proposal-bar").hidden = all.length === 0;
    $("proposal-count").textContent = `${all.length} proposed edit${all.length === 1 ? "" : "s"}${all.length - open ? ` (${all.length - open} stale)` : ""}`;
    $<HTMLButtonElement>("accept-all").disabled = open === 0;
  }

  /// Applies the accepted proposals as one undo step and saves them once, through the agent's edit acceptance;
  /// drops the rejected ones.
  async decide(accept: number[], reject: number[]) {
    const note = this.store.open;
    const view = this.editor.view;
    if (reject.length) view.dispatch({ effects: dropProposals.of(reject) });
    const accepted = this.editor.proposals().filter((p) => accept.includes(p.id) && !p.stale);
    if (!note || !accepted.length) {
      this.update();
      return;
    }
    await this.note.saveNow();
    if (this.note.conflict) return;
    this.editor.setEditable(false);
    try {
      const base = this.editor.text();
      const done = await api.accept(note.note_id, base, wireEdits(base, accepted), this.turnActor());
      view.dispatch({
        changes: accepted.map((p) => ({ from: p.from, to: p.to, insert: p.insert })),
        effects: dropProposals.of(accepted.map((p) => p.id)),
        userEvent: "input.ai",
      });
      this.note.savedText = this.editor.text();
      if (done.body !== this.note.savedText) status("The saved text differs from the editor's; reload the note.", true);
      this.store.open = await api.note(note.note_id);
      $("save-state").textContent = "Saved";
      status(`Accepted ${accepted.length} edit${accepted.length === 1 ? "" : "s"}. Ctrl+Z takes ${accepted.length === 1 ? "it" : "them"} back.`);
    } catch (e) {
      status(`Not accepted: ${describeError(e)}`, true);
    } finally {
      this.editor.setEditable(!note.in_trash);
      this.update();
      this.editor.focus();
    }
  }
}
