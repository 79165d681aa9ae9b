// The conflicts sync found in the open note: places another device changed at the same time as this one. Both
// versions are in the note's text, whole; this panel shows them side by side and keeps what the person chooses
// (this device's, the other's, both, or the two merged by words where they changed different words).
import { api, type SyncConflictView } from "./api";
import { $, describeError, el, status } from "./dom";

/// What the panel asks of the open note.
export interface ConflictNeeds {
  /// The note whose conflicts are shown, if one is open (and not being typed into unsaved).
  openId(): string | null;
  /// Whether the open note has typing not saved yet: choosing waits for the save.
  saveFirst(): Promise<void>;
  /// The open note loaded again after a choice changed its text.
  reload(): Promise<void>;
}

function lines(label: string, text: string): HTMLElement {
  const shown = text === "" ? "(the lines removed)" : text.replace(/\n$/, "");
  return el("div", { class: "version" }, el("strong", { text: label }), el("pre", { text: shown }));
}

export class ConflictPanel {
  /// The note the panel last showed, so that an answer for a note left since is dropped.
  private shownFor: string | null = null;

  constructor(private readonly needs: ConflictNeeds) {
    // The conflicts as sync's top bar last read them: the open note's are shown again when they differ from what the
    // panel shows (found by sync, or chosen elsewhere).
    document.addEventListener("quire:conflicts", (event) => {
      const id = this.needs.openId();
      const all = (event as CustomEvent<SyncConflictView[]>).detail ?? [];
      const now = all.filter((c) => c.note_id === id).map((c) => c.id).join(",");
      if (id && now !== this.shownIds) void this.refresh();
    });
  }

  /// The conflicts the panel shows, by id.
  private shownIds = "";

  /// Shows the open note's conflicts (none: the panel hides).
  async refresh() {
    const id = this.needs.openId();
    const panel = $("sync-conflicts");
    if (!id) {
      panel.hidden = true;
      this.shownIds = "";
      return;
    }
    let found: SyncConflictView[];
    try {
      found = await api.syncConflicts(id);
    } catch {
      // Sync's state could not be read: the note is shown as it is.
      return;
    }
    if (this.needs.openId() !== id) return;
    this.shownFor = id;
    this.shownIds = found.map((c) => c.id).join(",");
    panel.replaceChildren(...found.map((c) => this.card(c)));
    panel.hidden = found.length === 0;
  }

  private card(c: SyncConflictView): HTMLElement {
    if (c.sealed) {
      // A sealed note's conflict opens with the passphrase: the next look after unlocking shows its versions (and
      // merges edits kept beside the note).
      const text = c.aside
        ? `Edits made on this device wait beside this note: ${c.device} sealed it before they arrived. Unlock the workspace to merge them in; where both changed the same lines you will choose.`
        : `This note was changed here and on ${c.device} at the same time, in the same lines. It is sealed: unlock the workspace to see both versions and choose.`;
      return el("div", { class: "sync-conflict", "data-id": String(c.id), "data-sealed": "true" }, el("p", { text }));
    }
    const choose = (keep: "mine" | "theirs" | "both" | "merged", text: string, title: string) => {
      const button = el("button", { type: "button", text, title, "data-keep": keep });
      button.onclick = () => void this.keep(c, keep, button);
      return button;
    };
    const buttons = [
      choose("mine", "Keep this device's", "Remove the other version from the note"),
      choose("theirs", `Keep ${c.device}'s`, "Remove this device's version from the note"),
      choose("both", "Keep both", "Leave both versions in the note, one after the other"),
    ];
    if (c.merged !== null) {
      buttons.splice(2, 0, choose("merged", "Keep both changes merged", `The two merged by words: ${c.merged.trim()}`));
    }
    return el(
      "div",
      { class: "sync-conflict", "data-id": String(c.id) },
      el("p", {
        text: `This note was changed here and on ${c.device} at the same time, in the same lines. Both versions are in the text below; choose what to keep.`,
      }),
      el("div", { class: "versions" }, lines("This device", c.mine), lines(c.device, c.theirs)),
      ...(c.merged !== null ? [lines("Both changes merged", c.merged)] : []),
      el("div", { class: "choices" }, ...buttons),
    );
  }

  private async keep(c: SyncConflictView, keep: "mine" | "theirs" | "both" | "merged", button: HTMLButtonElement) {
    button.disabled = true;
    try {
      await this.needs.saveFirst();
      await api.resolveConflict(c.id, keep);
      status(keep === "both" ? "Both versions stay in the note." : "Kept. History can undo it.");
      await this.needs.reload();
    } catch (e) {
      status(describeError(e), true);
    } finally {
      button.disabled = false;
      if (this.shownFor === c.note_id) await this.refresh();
    }
  }
}
