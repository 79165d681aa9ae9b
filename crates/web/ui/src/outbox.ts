// The saves made while the server could not be reached, sent when it is back (and what the phone's share sheet
// sent, saved as notes); the top bar says how many wait. A queued save goes to `/api/notes/{id}/offline`, which saves
// it or merges it into the note as it is now by sync's rule (no word lost; both versions where both changed the same
// lines, each with a choice).

import { api, ApiError, isOffline, offlineError } from "./api";
import { $, describeError, status } from "./dom";
import type { OfflineSaved } from "./generated";
import { queued, shared, unqueue, unshare, type SharedItem } from "./offline";

/// Told of each queued save that went in (the open note loads it).
let onSaved: ((saved: OfflineSaved) => void) | null = null;
/// Told of a note a share became (the page opens it).
let onShared: ((id: string) => void) | null = null;
let sending: Promise<void> = Promise.resolve();

export function followOutbox(hooks: { saved: (saved: OfflineSaved) => void; shared: (id: string) => void }) {
  onSaved = hooks.saved;
  onShared = hooks.shared;
  document.addEventListener("quire:queue", () => void showState());
  document.addEventListener("quire:offline", () => void showState());
  document.addEventListener("quire:online", () => void send());
  window.addEventListener("online", () => void send());
  void send();
}

async function showState() {
  const box = $("offline-state");
  const waiting = (await queued()).length;
  const away = isOffline();
  box.hidden = !away && waiting === 0;
  box.textContent = away
    ? `Offline${waiting ? `: ${waiting === 1 ? "1 edit waits" : `${waiting} edits wait`} for the server` : ": showing what this device kept"}`
    : `Sending ${waiting === 1 ? "1 edit" : `${waiting} edits`} made offline…`;
}

/// Sends what waits, one at a time, in the order it was made; stops at the first sign of being offline again.
export function send(): Promise<void> {
  sending = sending.then(async () => {
    await showState();
    for (const [key, save] of await queued()) {
      try {
        const saved = await api.saveOffline(save.note_id, {
          base_updated: save.base_updated,
          base_title: save.base_title,
          base_body: save.base_body,
          title: save.title,
          body: save.body,
        });
        await unqueue(key);
        onSaved?.(saved);
        if (saved.conflicts) {
          status(`“${saved.note.title}”: your offline edit and a change made meanwhile touched the same lines; both versions are in the note, choose one.`);
        } else if (saved.merged) status(`“${saved.note.title}”: your offline edit is merged with a change made meanwhile.`);
        else status(`“${saved.note.title}”: your offline edit is saved.`);
      } catch (e) {
        if (offlineError(e)) break;
        if (e instanceof ApiError && e.status === 404) {
          // The note was deleted meanwhile: the text becomes a note of its own rather than being lost.
          const note = await api.createNote(`${save.title} (written offline)`, null);
          await api.saveNote(note.note_id, { body: save.body }, note.updated);
          await unqueue(key);
          status(`“${save.title}” was deleted while you were offline; your text is in a new note.`, true);
        } else {
          status(`An edit made offline could not be saved: ${describeError(e)}`, true);
          break;
        }
      }
    }
    await saveShares();
    await showState();
  });
  return sending;
}

/// Makes a note of each share that waits, in the notebook "Inbox" (made when missing), its images attached.
async function saveShares() {
  for (const [key, item] of await shared()) {
    try {
      const id = await saveShare(item);
      await unshare(key);
      status("What you shared is a note in Inbox.");
      onShared?.(id);
    } catch (e) {
      if (!offlineError(e)) status(`What you shared could not be saved: ${describeError(e)}`, true);
      return;
    }
  }
}

async function saveShare(item: SharedItem): Promise<string> {
  const notebooks = await api.notebooks();
  const inbox = notebooks.notebooks.find((n) => n.path === "Inbox") ?? (await api.createNotebook("Inbox", null));
  const firstLine = item.text.split("\n").find((l) => l.trim())?.trim().slice(0, 80);
  const title = item.title.trim() || firstLine || item.url || `Shared ${new Date(item.at).toLocaleString()}`;
  const note = await api.createNote(title, inbox.notebook_id);
  let body = item.text.trim();
  if (item.url && !body.includes(item.url)) body = body ? `${body}\n\n${item.url}` : item.url;
  for (const file of item.files) {
    const added = await api.attach(note.note_id, new File([file.data], file.name || "shared", { type: file.type }));
    body = body ? `${body}\n\n${added.markdown}` : added.markdown;
  }
  // Attaching changed the note: the save is made on the note as it is now.
  if (body) await api.saveNote(note.note_id, { body }, (await api.note(note.note_id)).updated);
  return note.note_id;
}
