// The saves made while the server could not be reached, sent when it is back (and what the phone's share sheet
// sent, saved as notes once the person says so); the top bar says how many wait. A queued save goes to
// `/api/notes/{id}/offline`, which saves it or merges it into the note as it is now (no word lost; both versions
// where both changed the same words, each with a choice), and applies a save of one id once.

import { ApiError, api, isOffline, offlineError } from "./api";
import { confirmDialog } from "./dialog";
import { $, describeError, status } from "./dom";
import type { OfflineSaved } from "./generated";
import { pinned, queued, setPinned, settle, shared, unshare, type QueuedSave, type SharedItem } from "./offline";

/// Told of each queued save that went in, with whether more of that note still waits (the open note loads it once
/// nothing does).
let onSaved: ((saved: OfflineSaved, more: boolean) => void) | null = null;
/// Told of a note a share became (the page opens it).
let onShared: ((id: string) => void) | null = null;
let sending: Promise<void> = Promise.resolve();

export function followOutbox(hooks: { saved: (saved: OfflineSaved, more: boolean) => void; shared: (id: string) => void }) {
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
    : `${waiting === 1 ? "1 edit" : `${waiting} edits`} made offline to send`;
}

/// Sends what waits, oldest first, one at a time; stops at the first sign of being offline again. A save the server
/// refuses stays queued (said in the top bar) and the rest go on.
export function send(): Promise<void> {
  sending = sending
    .then(async () => {
      await showState();
      const refused = new Set<IDBValidKey>();
      for (;;) {
        const next = (await queued()).find(([key]) => !refused.has(key));
        if (!next) break;
        const [key, save] = next;
        const outcome = await sendOne(key, save);
        if (outcome === "offline") break;
        if (outcome === "refused") refused.add(key);
      }
      if (!isOffline()) await saveShares();
      if (!isOffline()) await keepPinned();
      await showState();
    })
    .catch((e) => status(`Edits made offline could not be sent: ${describeError(e)}`, true));
  return sending;
}

async function sendOne(key: IDBValidKey, save: QueuedSave): Promise<"sent" | "offline" | "refused"> {
  let saved: OfflineSaved;
  try {
    saved = await api.saveOffline(save.note_id, {
      save_id: save.save_id,
      base_updated: save.base_updated,
      base_title: save.base_title,
      base_body: save.base_body,
      title: save.title,
      body: save.body,
    });
  } catch (e) {
    if (offlineError(e)) return "offline";
    status(`“${save.title}”, edited offline, could not be saved (it stays on this device): ${describeError(e)}`, true);
    return "refused";
  }
  const more = await settle(key, save);
  onSaved?.(saved, more);
  const title = `“${saved.note.title}”`;
  if (saved.note.note_id !== save.note_id) status(`${title} was deleted or trashed while you were offline; your text is in a new note.`, true);
  else if (saved.conflicts) status(`${title}: your offline edit and a change made meanwhile touched the same words; both versions are in the note, choose one.`);
  else if (saved.title_not_applied) status(`${title} was renamed meanwhile, so your offline title “${saved.title_not_applied}” was not applied; your text was.`);
  else if (saved.merged) status(`${title}: your offline edit is merged with a change made meanwhile.`);
  else status(`${title}: your offline edit is saved.`);
  return "sent";
}

/// Fetches (and so keeps: `api.ts` keeps what it reads) the notes of the notebooks kept on this device, while the
/// server answers: the list as the page asks for it, then each note but the protected ones.
export async function keepPinned() {
  for (const id of pinned()) {
    try {
      const page = await api.notes({ notebook_id: id, offset: 0, sort: "updated" });
      for (const n of page.notes) if (!n.is_protected) await api.note(n.note_id);
    } catch (e) {
      if (offlineError(e)) return;
      // A notebook gone (deleted, or out of this device's reach) is kept no more.
      if (e instanceof ApiError && e.status === 404) setPinned(id, false);
    }
  }
}

/// Makes a note of each share that waits, once the person says so (any web page could post a share to quire), in the
/// notebook "Inbox" (made when missing), its images attached.
async function saveShares() {
  for (const [key, item] of await shared()) {
    const what = [item.title, item.text, item.url].filter(Boolean).join(" · ").slice(0, 200) || `${item.files.length} file(s)`;
    const files = item.files.length ? ` and ${item.files.length === 1 ? "1 image" : `${item.files.length} images`}` : "";
    if (!(await confirmDialog("Save what was shared?", `“${what}”${files} was shared to quire. Save it as a note in Inbox?`, "Save to Inbox"))) {
      await unshare(key);
      continue;
    }
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
