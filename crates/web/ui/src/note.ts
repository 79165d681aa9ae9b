// The open note: opening and leaving it, its title, tags and to-do state, saving as the user types (a stale save
// shows the conflict and loses nothing), and taking in changes made to it elsewhere.
import { ApiError, api, isOffline, offlineError, type Note } from "./api";
import { confirmDialog } from "./dialog";
import { $, describeError, status } from "./dom";
import { ConflictPanel } from "./conflicts";
import type { NoteEditor } from "./editor";
import { deviceIs, hasQueued, isDevice, keep, newSaveId, queueSave } from "./offline";
import { send as sendOutbox } from "./outbox";
import type { Pane } from "./panes";
import type { Store } from "./store";

const SAVE_DELAY_MS = 600;

/// What the open note asks of the other panes.
export interface NoteNeeds {
  /// The note list drawn again (it marks the open note), loaded again (a title changed), one of its rows focused.
  renderList(): void;
  loadNotes(): Promise<void>;
  focusInList(id: string): void;
  loadTags(): Promise<void>;
  /// The note's views: one shown (Edit, Preview, History), the preview drawn again.
  tab(which: "edit"): Promise<void>;
  renderPreview(): void;
  loadBacklinks(): Promise<void>;
  /// Shows a pane (on a phone).
  showPane(pane: Pane): void;
  /// Asks for the passphrase (a sealed note's Unlock button); whether sealed notes are open now.
  unlock(): Promise<boolean>;
  /// Whether the note is sealed (protected, with a passphrase set).
  sealed(note: Note): boolean;
}

export class OpenNote {
  /// The open note's text as last saved (or loaded).
  savedText = "";
  /// The version stored elsewhere when a save was refused as stale (null when there is no conflict).
  conflict: Note | null = null;
  /// The save in flight, if any.
  saving: Promise<void> = Promise.resolve();
  private saveTimer: number | undefined;
  /// The places sync found changed here and on another device at once, with the person's choice.
  private readonly syncConflicts = new ConflictPanel({
    // A sealed note's too while it is locked: its conflicts are named (their texts open with the passphrase).
    openId: () => this.store.open?.note_id ?? null,
    saveFirst: () => this.saveNow(),
    reload: () => this.refreshOpen(),
  });

  constructor(
    private readonly store: Store,
    private readonly editor: NoteEditor,
    private readonly page: NoteNeeds,
  ) {
    // A title is saved when it is done (Enter, or leaving the field), and links that named the note follow it.
    $("title").oninput = () => ($("save-state").textContent = "Editing…");
    $("title").onchange = () => void this.saveNow();
    // Enter in the title goes on to the text, as in other notes apps.
    $("title").onkeydown = (e) => {
      if (e.key === "Enter" && !e.isComposing) {
        e.preventDefault();
        void this.saveNow();
        if (this.store.open && !this.store.open.in_trash) this.editor.focus();
      }
    };
    $("tags").onchange = () => void this.saveMeta({ tags: this.tagsInput() });
    $("todo").onchange = () => void this.saveMeta({ is_todo: $<HTMLInputElement>("todo").checked });
    $("done").onchange = () => void this.saveMeta({ done: $<HTMLInputElement>("done").checked });
    $("conflict-close").onclick = () => this.hideConflict();
    $("conflict-keep").onclick = () => void this.keepMine();
    $("conflict-load").onclick = () => void this.loadTheirs();
    // A sealed note shown locked opens once unlocked (the lock's change reloads it).
    $("unlock-note").onclick = () => void this.page.unlock();
  }

  async openNote(id: string) {
    if (!(await this.mayLeave())) return;
    const fromList = document.activeElement?.classList.contains("note-item") ?? false;
    await this.saveNow();
    this.store.notify("leaving");
    let note: Note;
    try {
      // A sealed note while locked comes as its title: the Unlock button shows instead of its text.
      note = await api.shownNote(id);
    } catch (e) {
      status(describeError(e), true);
      return;
    }
    this.load(note);
    history.replaceState(null, "", `#note=${note.note_id}`);
    this.page.renderList();
    if (fromList) this.page.focusInList(note.note_id);
    void this.page.tab("edit");
    void this.page.loadBacklinks();
    this.store.notify("focus");
    this.page.showPane("note");
  }

  load(note: Note) {
    this.savedText = note.body;
    this.conflict = null;
    $("conflict").hidden = true;
    $("conflict-keep").hidden = false;
    $("conflict-load").hidden = false;
    $("conflict-close").hidden = true;
    $<HTMLTextAreaElement>("conflict-mine").value = "";
    $("conflict-mine").hidden = true;
    $("empty").hidden = true;
    $("recent").hidden = true;
    $("settings").hidden = true;
    $("note").hidden = false;
    $<HTMLInputElement>("title").value = note.title;
    $("note").classList.toggle("locked", !!note.locked);
    $("locked-panel").hidden = !note.locked;
    $("locked-text").textContent = `“${note.title}” is sealed: its text is encrypted, and opens with the workspace's passphrase.`;
    this.showState(note);
    this.editor.load(note.body, !note.in_trash && !note.locked);
    // The preview shows this note's text, never the one opened before.
    if ($("preview").hidden) $("preview").replaceChildren();
    else this.page.renderPreview();
    this.store.notify("proposals");
    $("save-state").textContent = note.locked ? "Locked" : note.in_trash ? "In the trash: restore it to edit" : "Saved";
    void this.syncConflicts.refresh();
  }

  /// Everything about the open note but its title and text: tags, to-do, lock, trash.
  showState(note: Note) {
    this.store.open = note;
    this.showMeta(note);
    $("lock").hidden = !note.is_protected;
    const sealed = this.page.sealed(note);
    $("lock").textContent = sealed ? "Sealed" : "Protected";
    $("lock").classList.toggle("sealed-mark", sealed);
    $("lock").title = sealed
      ? "Sealed: its text is encrypted on disk and opens with the workspace's passphrase; the assistant never sees it"
      : "Protected: only you read and change it; the assistant never sees it. Its text is not encrypted until a passphrase is set (quire lock init)";
    $("trash").hidden = note.in_trash;
    $("move-note").hidden = note.in_trash;
    $("attach").hidden = note.in_trash || !!note.locked;
    $("protect").textContent = note.is_protected ? "Unprotect" : "Protect";
    $("protect").title = note.is_protected
      ? "Let the assistant and AI clients read and change this note again"
      : "Keep the assistant and AI clients from reading or changing this note";
    $("restore").hidden = !note.in_trash;
    $("purge").hidden = !note.in_trash;
    // A paired device that only reads (the server marks its page) changes nothing.
    const readOnly = deviceIs("read-only");
    for (const id of ["title", "tags", "todo"]) $<HTMLInputElement>(id).disabled = note.in_trash || !!note.locked || readOnly;
    $<HTMLInputElement>("done").disabled = note.in_trash || note.locked || !note.is_todo || readOnly;
    // A save that removed one of two versions settles their conflict.
    if (!$("sync-conflicts").hidden) void this.syncConflicts.refresh();
    this.store.notify("note");
  }

  /// The open note after a change elsewhere (an assistant turn, an undo). Its text is reloaded only when it changed
  /// and nothing here would be lost: unsaved typing and proposed edits stay, and the next save shows the conflict.
  async refreshOpen(elsewhere = false) {
    const note = this.store.open;
    if (!note) return;
    let fresh: Note;
    try {
      fresh = await api.shownNote(note.note_id);
    } catch (e) {
      if (elsewhere && e instanceof ApiError && e.status === 404 && this.store.open?.note_id === note.note_id) {
        status(`“${note.title}” was deleted elsewhere; your text of it is still in the editor to copy.`, true);
        this.editor.setEditable(false);
      }
      return;
    }
    // Protection, the lock and the notebook's path change without `updated` moving: those are compared too.
    const unchanged =
      fresh.updated === note.updated &&
      fresh.is_protected === note.is_protected &&
      fresh.notebook_path === note.notebook_path &&
      JSON.stringify(fresh.tags) === JSON.stringify(note.tags) &&
      !!fresh.locked === !!note.locked;
    if (this.store.open?.note_id !== note.note_id || unchanged) return;
    // Another device's change may have met one made here: both versions are in the text, and the panel says so.
    void this.syncConflicts.refresh();
    // Locked while typing was unsaved: the text stays, and its save asks for the passphrase.
    if (fresh.locked && (this.unsaved() || this.conflict)) return;
    const sameText = fresh.body === this.savedText && fresh.title === note.title && !!fresh.locked === !!note.locked;
    // A conflict shown now is about this newer version: keeping mine saves over it.
    if (this.conflict) this.conflict = fresh;
    if (sameText && fresh.in_trash === note.in_trash) this.showState(fresh);
    else if (this.mergeIn(note, fresh)) {
      if (elsewhere) status(`“${fresh.title}” changed elsewhere; the change is merged into the text here.`);
    } else if (!this.unsaved() && !this.editor.proposals().length && !this.conflict) {
      const scroll = $("note-pane").scrollTop;
      this.load(fresh);
      $("note-pane").scrollTop = scroll;
      if (elsewhere) status(`“${fresh.title}” changed elsewhere; its new version is loaded.`);
    } else if (elsewhere && !this.conflict) {
      status(`“${fresh.title}” changed elsewhere. Your unsaved typing is kept; when it saves you choose which version to keep.`);
    }
  }

  /// A newer version of the open note, merged into the editor around the cursor and any unsaved typing (see
  /// `NoteEditor.mergeFrom`): the next save sends the merged text as a change of that version. Not for a note that
  /// went to the trash, got locked, or holds the assistant's proposals or a conflict: those reload or wait as before.
  private mergeIn(note: Note, fresh: Note): boolean {
    const plain = !fresh.locked && !note.locked && fresh.in_trash === note.in_trash && !fresh.in_trash;
    if (!plain || this.conflict || this.editor.proposals().length) return false;
    if (!this.editor.mergeFrom(this.savedText, fresh.body)) return false;
    this.savedText = fresh.body;
    // A title typed here and not saved stays; else the new one shows.
    const title = $<HTMLInputElement>("title");
    if (title.value === note.title) title.value = fresh.title;
    this.showState(fresh);
    if (!$("preview").hidden) this.page.renderPreview();
    return true;
  }

  /// Whether the open note may be left: unsaved text in a conflict, or proposed edits, are not dropped unasked.
  async mayLeave(): Promise<boolean> {
    if (this.conflict && this.unsaved()) {
      return confirmDialog("Unsaved changes", `Your changes to “${this.store.open?.title}” are not saved (it changed elsewhere). Leave it and lose them?`, "Leave and lose them", true);
    }
    const proposals = this.editor.proposals().length;
    if (proposals) {
      return confirmDialog("Proposed edits", `${proposals} proposed edit${proposals === 1 ? "" : "s"} of the assistant will be dropped. Leave the note?`, "Leave the note");
    }
    return true;
  }

  private tagsInput(): string[] {
    return $<HTMLInputElement>("tags")
      .value.split(",")
      .map((t) => t.trim().replace(/^#/, ""))
      .filter(Boolean);
  }

  unsaved(): boolean {
    const open = this.store.open;
    return !!open && (this.editor.text() !== this.savedText || $<HTMLInputElement>("title").value !== open.title);
  }

  scheduleSave() {
    if (!this.store.open || this.conflict) return;
    $("save-state").textContent = "Editing…";
    window.clearTimeout(this.saveTimer);
    this.saveTimer = window.setTimeout(() => void this.saveNow(), SAVE_DELAY_MS);
  }

  /// Saves what the editor holds, once any save in flight finished. A stale save shows the conflict and keeps the text.
  saveNow(): Promise<void> {
    window.clearTimeout(this.saveTimer);
    this.saving = this.saving.then(async () => {
      const note = this.store.open;
      if (!note || this.conflict) return;
      if (!this.unsaved()) {
        $("save-state").textContent = note.in_trash ? "In the trash: restore it to edit" : "Saved";
        return;
      }
      const body = this.editor.text();
      const title = $<HTMLInputElement>("title").value;
      // While a save of this note made offline waits, the next ones go after it, through the queue, so that the
      // server merges them in order and never takes a later text before an earlier one.
      if (await hasQueued(note.note_id)) {
        await this.queueOffline(note, title, body);
        void sendOutbox();
        return;
      }
      $("save-state").textContent = "Saving…";
      try {
        const renamed = title !== note.title;
        const saved = await api.saveNote(note.note_id, { title, body, update_links: renamed || undefined }, note.updated);
        if (saved.links_updated) {
          status(`Renamed; ${saved.links_updated === 1 ? "1 note linking here now uses" : `${saved.links_updated} notes linking here now use`} the new title.`);
        }
        if (this.store.open?.note_id !== note.note_id) return;
        this.store.open = saved;
        this.savedText = body;
        $("save-state").textContent = this.unsaved() ? "Editing…" : "Saved";
        if (saved.title !== note.title) {
          void this.page.loadNotes();
          this.store.notify("note");
        }
        if (this.unsaved()) this.scheduleSave();
      } catch (e) {
        const theirs = e instanceof ApiError && e.status === 409 ? (e.body as { note?: Note }).note : undefined;
        // Changed elsewhere meanwhile (another device, an AI client): their change merges in around this typing when
        // the two touch different words, and the merged text is saved; else the conflict shows.
        if (offlineError(e)) {
          await this.queueOffline(note, title, body);
          return;
        }
        if (theirs && this.store.open?.note_id === note.note_id && this.mergeIn(note, theirs)) {
          status(`“${theirs.title}” changed elsewhere while you typed; the change is merged into the text here.`);
          this.scheduleSave();
        } else if (e instanceof ApiError && e.status === 409) this.showConflict(e);
        else {
          $("save-state").textContent = "Not saved";
          status(`Not saved: ${describeError(e)}`, true);
        }
      }
    });
    return this.saving;
  }

  /// Keeps a save the server could not take (offline) on this device, to send when it is back ([`outbox.ts`]); the
  /// note as edited is kept too, so that it opens as edited here until then.
  private async queueOffline(note: Note, title: string, body: string) {
    if (note.is_protected || !isDevice()) {
      // A protected note is never kept in the browser; nor is anything of this computer's own page. The text stays
      // in the editor, and is saved when the server answers again.
      $("save-state").textContent = "Not saved: the server cannot be reached (your text stays here; it saves when the server is back)";
      this.scheduleSave();
      return;
    }
    try {
      await queueSave({
        save_id: newSaveId(),
        note_id: note.note_id,
        base_updated: note.updated,
        base_title: note.title,
        base_body: this.savedText,
        title,
        body,
        queued: Date.now(),
      });
    } catch (e) {
      $("save-state").textContent = "Not saved";
      status(`Offline, and this browser cannot keep the edit: ${describeError(e)}`, true);
      return;
    }
    const edited = { ...note, title, body };
    void keep(`/notes/${note.note_id}`, edited);
    if (this.store.open?.note_id === note.note_id) {
      // `updated` stays the version the edit was made on: the server merges against it.
      this.store.open = edited;
      this.savedText = body;
    }
    $("save-state").textContent = isOffline() ? "Offline: kept on this device, sent when the server is back" : "Sending…";
  }

  /// A save queued offline went in: once nothing more of the note waits, the open note shows the note as it is now
  /// (merged), with what was typed since. While more waits, the editor holds the newest text, which is queued.
  offlineSaved(saved: Note, more: boolean) {
    if (!more && this.store.open?.note_id === saved.note_id) void this.refreshOpen(true);
  }

  private showConflict(e: ApiError) {
    const body = e.body as { note?: Note };
    this.conflict = body.note ?? null;
    $("conflict-text").textContent = e.message;
    $("conflict-keep").hidden = false;
    $("conflict-load").hidden = false;
    $("conflict-close").hidden = true;
    $("conflict-mine").hidden = true;
    $("conflict").hidden = false;
    $("save-state").textContent = "Not saved: conflict";
  }

  private async keepMine() {
    const theirs = this.conflict;
    const open = this.store.open;
    if (!open || !theirs) return;
    // Their version is what is stored now: the editor's text and title are saved over it.
    this.store.open = { ...open, updated: theirs.updated, title: theirs.title };
    this.savedText = theirs.body;
    this.conflict = null;
    $("conflict").hidden = true;
    await this.saveNow();
  }

  private async loadTheirs() {
    if (!this.conflict) return;
    const mine = this.editor.text();
    const theirs = this.conflict;
    this.load(theirs);
    const copy = $<HTMLTextAreaElement>("conflict-mine");
    copy.value = mine;
    copy.hidden = false;
    $("conflict").hidden = false;
    $("conflict-text").textContent = "Their version is loaded. Your text is below, to copy what you need; close this when you are done.";
    $("conflict-keep").hidden = true;
    $("conflict-load").hidden = true;
    $("conflict-close").hidden = false;
  }

  private hideConflict() {
    $("conflict").hidden = true;
    $("conflict-mine").hidden = true;
    $<HTMLTextAreaElement>("conflict-mine").value = "";
    $("conflict-close").hidden = true;
    this.editor.focus();
  }

  /// Saves tags or to-do state. When the note changed elsewhere and nothing here is unsaved, its new version is
  /// loaded and the change made on it; with unsaved text, the conflict is shown as for a save of the text.
  private async saveMeta(change: { tags?: string[]; is_todo?: boolean; done?: boolean }) {
    await this.saveNow();
    const note = this.store.open;
    if (!note || this.conflict) return;
    const apply = (base: string) => api.saveNote(note.note_id, change, base);
    let saved: Note;
    try {
      saved = await apply(note.updated);
    } catch (e) {
      if (!(e instanceof ApiError && e.status === 409)) {
        status(describeError(e), true);
        this.showMeta(note);
        return;
      }
      const current = (e.body as { note?: Note }).note;
      if (!current || this.unsaved()) {
        this.showConflict(e);
        this.showMeta(note);
        return;
      }
      this.load(current);
      try {
        saved = await apply(current.updated);
      } catch (again) {
        status(describeError(again), true);
        return;
      }
      status("The note had changed elsewhere; its new version is loaded, with your change.");
    }
    this.store.open = saved;
    this.showMeta(saved);
    await Promise.all([this.page.loadNotes(), change.tags ? this.page.loadTags() : Promise.resolve()]);
  }

  /// The tags and to-do controls as the note has them.
  private showMeta(note: Note) {
    $<HTMLInputElement>("tags").value = note.tags.join(", ");
    $<HTMLInputElement>("todo").checked = note.is_todo;
    $<HTMLInputElement>("done").checked = !!note.todo_completed;
    $<HTMLInputElement>("done").disabled = note.in_trash || !note.is_todo;
  }
}
