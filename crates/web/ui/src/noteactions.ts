// Actions on the open note beyond its text: protecting or unprotecting it, the trash (move there, restore, delete for
// good), and creating the note a link names. Those that cannot be taken back ask first.
import { api, type Note } from "./api";
import { confirmDialog } from "./dialog";
import { $, attempt, describeError, status } from "./dom";
import type { Lock } from "./lock";
import type { Store } from "./store";

/// What the actions ask of the panes.
export interface ActionNeeds {
  /// The open note: its typing saved first, its new state or version shown, another note opened.
  saveNow(): Promise<void>;
  showState(note: Note): void;
  load(note: Note): void;
  openNote(id: string): Promise<void>;
  /// The note list and the notebook tree loaded again.
  loadNotes(): Promise<void>;
  loadTree(): Promise<void>;
  /// The note pane with no note.
  showEmpty(): Promise<void>;
}

export class NoteActions {
  constructor(
    private readonly store: Store,
    private readonly page: ActionNeeds,
    private readonly lock: Lock,
  ) {
    $("trash").onclick = () => void this.trash();
    $("protect").onclick = () => void this.toggleProtection();
    $("restore").onclick = () => void this.restoreFromTrash();
    $("purge").onclick = () => void this.purge();
    // A link to a note that does not exist yet (markdown.ts marks it and says so on a click) offers to create it.
    document.addEventListener("quire:create-note", (e) => void this.offerToCreate((e as CustomEvent<{ title?: string }>).detail?.title ?? ""));
  }

  /// Protects the open note (the assistant and AI clients no longer read or change it; with a passphrase set, its text
  /// is sealed: encrypted on disk), or unprotects it (a sealed note's text is opened for good, so the passphrase is
  /// asked first when the workspace is locked).
  async toggleProtection() {
    const note = this.store.open;
    if (!note) return;
    // A passphrase may have been set since the page loaded (`quire lock init`).
    await this.lock.refresh();
    const protect = !note.is_protected;
    const sealed = this.lock.state.initialized && note.is_protected;
    if (!protect) {
      if (sealed && !this.lock.state.unlocked) {
        const open = await this.lock.unlock(`Unprotecting “${note.title}” stores its text unencrypted again, so it needs the passphrase.`);
        if (!open) return;
      }
      const sure = await confirmDialog(
        "Unprotect note",
        sealed
          ? `Unprotect “${note.title}”? Its text will be stored unencrypted, and the assistant and AI clients will be able to read and change it again.`
          : `Unprotect “${note.title}”? The assistant and AI clients will be able to read and change it again.`,
        "Unprotect",
      );
      if (!sure) return;
    }
    await this.page.saveNow();
    try {
      const changed = await api.protectNote(note.note_id, protect);
      const open = this.store.open;
      if (open?.note_id === note.note_id) {
        // Sealed and locked now, or opened: the note pane changes; otherwise only its state does.
        if (changed.locked || open.locked) this.page.load(changed);
        else this.page.showState(changed);
      }
      status(protectedNews(note.title, protect, this.lock.state.initialized, !!changed.locked));
      this.store.notify("focus");
      await Promise.all([this.page.loadNotes(), this.page.loadTree()]);
    } catch (e) {
      status(describeError(e), true);
    }
  }

  /// A link named a note that does not exist: offer to create it (in the open note's notebook) and open it.
  async offerToCreate(title: string) {
    title = title.trim();
    if (!title) return;
    const sure = await confirmDialog("Create note", `No note is titled “${title}” yet. Create it?`, `Create “${title}”`);
    if (!sure) return;
    try {
      const open = this.store.open;
      const created = await api.createNote(title, open && !open.in_trash ? open.notebook_id : null);
      await Promise.all([this.page.loadNotes(), this.page.loadTree()]);
      await this.page.openNote(created.note_id);
      status(`Created “${title}”.`);
    } catch (e) {
      status(`“${title}” was not created: ${describeError(e)}`, true);
    }
  }

  async trash() {
    const note = this.store.open;
    if (!note) return;
    await this.page.saveNow();
    await attempt(async () => {
      await api.trashNote(note.note_id);
      status(`“${note.title}” is in the trash; restore it from there.`);
      this.page.load(await api.shownNote(note.note_id));
      await Promise.all([this.page.loadNotes(), this.page.loadTree()]);
    });
  }

  async restoreFromTrash() {
    const note = this.store.open;
    if (!note) return;
    await attempt(async () => {
      await api.restoreNote(note.note_id);
      status(`Restored “${note.title}”.`);
      this.page.load(await api.shownNote(note.note_id));
      await Promise.all([this.page.loadNotes(), this.page.loadTree()]);
    });
  }

  async purge() {
    const note = this.store.open;
    if (!note || !(await confirmDialog("Delete for good", `Delete “${note.title}” for good? This cannot be undone.`, "Delete forever", true))) return;
    await attempt(async () => {
      await api.purgeNote(note.note_id);
      status(`Deleted “${note.title}” for good.`);
      this.store.open = null;
      $("note").hidden = true;
      $("empty").hidden = false;
      void this.page.showEmpty();
      history.replaceState(null, "", "#");
      this.store.notify("focus");
      await Promise.all([this.page.loadNotes(), this.page.loadTree()]);
    });
  }
}

/// What protecting or unprotecting did, in words: with no passphrase set, protection keeps the note from AI only.
function protectedNews(title: string, protect: boolean, sealing: boolean, locked: boolean): string {
  if (!protect) return `“${title}” is no longer protected${sealing ? "; its text is stored unencrypted again" : ""}.`;
  if (!sealing) {
    return `“${title}” is protected: the assistant and AI clients can no longer read or change it. Its text is not encrypted until a passphrase is set: run \`quire lock init\` to seal protected notes.`;
  }
  return `“${title}” is protected and sealed: its text is encrypted on disk, and the assistant and AI clients can no longer read or change it.${locked ? " Unlock to read it." : ""}`;
}
