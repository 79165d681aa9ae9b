// Actions on notes that ask first: protecting or unprotecting the open note, and creating the note a link names.
import { api } from "./api";
import { confirmDialog } from "./dialog";
import { describeError, status } from "./dom";
import type { App } from "./main";

/// Protects the open note (the assistant and AI clients no longer read or change it), or unprotects it.
export async function toggleProtection(app: App) {
  const note = app.open;
  if (!note) return;
  const protect = !note.is_protected;
  if (!protect) {
    const sure = await confirmDialog(
      "Unprotect note",
      `Unprotect “${note.title}”? The assistant and AI clients will be able to read and change it again.`,
      "Unprotect",
    );
    if (!sure) return;
  }
  await app.saveNow();
  try {
    const changed = await api.protectNote(note.note_id, protect);
    if (app.open?.note_id === note.note_id) app.showState(changed);
    status(
      protect
        ? `“${note.title}” is protected: the assistant and AI clients can no longer read or change it.`
        : `“${note.title}” is no longer protected.`,
    );
    app.chat.focusChanged();
    await Promise.all([app.loadNotes(false), app.loadTree()]);
  } catch (e) {
    status(describeError(e), true);
  }
}

/// A link named a note that does not exist: offer to create it (in the open note's notebook) and open it.
export async function offerToCreate(app: App, title: string) {
  title = title.trim();
  if (!title) return;
  const sure = await confirmDialog("Create note", `No note is titled “${title}” yet. Create it?`, `Create “${title}”`);
  if (!sure) return;
  try {
    const created = await api.createNote(title, app.open && !app.open.in_trash ? app.open.notebook_id : null);
    await Promise.all([app.loadNotes(false), app.loadTree()]);
    await app.openNote(created.note_id);
    status(`Created “${title}”.`);
  } catch (e) {
    status(`“${title}” was not created: ${describeError(e)}`, true);
  }
}
