// What the page keeps in the browser so that quire opens without the server (a phone on a train): the answers of
// the lists and of the notes opened lately, and the saves made meanwhile, queued until the server is back. It keeps
// no protected note (so no sealed one): their answers are never stored, and one that becomes protected is dropped.
// The shell (the page and its script) is the service worker's (assets/sw.js).
//
// Stores of the "quire-offline" database: "kept" (an API path → its answer and when), "queue" (saves waiting) and
// "shared" (what the phone's share sheet sent, written by the service worker).

import type { Note, OfflineSave } from "./generated";

const DB = "quire-offline";
/// How many notes stay kept (the most recently opened); lists are few and small.
const MOST_NOTES = 50;

export type QueuedSave = OfflineSave & { note_id: string; queued: number };
export type SharedItem = { title: string; text: string; url: string; files: { name: string; type: string; data: ArrayBuffer }[]; at: number };

let opened: Promise<IDBDatabase> | null = null;

function db(): Promise<IDBDatabase> {
  opened ??= new Promise((resolve, reject) => {
    const open = indexedDB.open(DB, 1);
    open.onupgradeneeded = () => {
      for (const store of ["kept", "queue", "shared"]) {
        if (!open.result.objectStoreNames.contains(store)) {
          open.result.createObjectStore(store, store === "kept" ? undefined : { autoIncrement: true });
        }
      }
    };
    open.onsuccess = () => resolve(open.result);
    open.onerror = () => reject(open.error);
  });
  return opened;
}

function done<T>(request: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

async function store(name: string, mode: IDBTransactionMode = "readonly"): Promise<IDBObjectStore> {
  return (await db()).transaction(name, mode).objectStore(name);
}

/// The answers worth keeping: the lists the page opens with, and a note whole.
export function keepable(path: string): boolean {
  const bare = path.split("?")[0];
  return ["/notebooks", "/notes", "/all-notes", "/tags", "/settings", "/lock"].includes(bare) || /^\/notes\/[^/]+$/.test(bare);
}

const isNote = (value: unknown): value is Note =>
  !!value && typeof value === "object" && "note_id" in value && "body" in value && "is_protected" in value;

/// Whether this page is a paired device's (the server marks it): only a device keeps anything. The computer's own
/// page has its server beside it, and what a page on 127.0.0.1 keeps, any later server on that port could read.
export const isDevice = (): boolean => !!document.body.dataset.device;

/// Whether this page is a paired device's that is `mark`: "read-only" (it makes no write), "limited" (to some
/// notebooks), as the server marks the page it serves.
export const deviceIs = (mark: "read-only" | "limited"): boolean => !!document.body.dataset.device?.split(" ").includes(mark);

/// Keeps an answer of `path` (never a protected note's: that one is dropped instead).
export async function keep(path: string, value: unknown): Promise<void> {
  if (!isDevice()) return;
  try {
    const kept = await store("kept", "readwrite");
    if (isNote(value) && (value.is_protected || value.locked)) {
      await done(kept.delete(path));
      return;
    }
    await done(kept.put({ value, at: Date.now() }, path));
    if (isNote(value)) await forgetOldNotes();
  } catch {
    // No storage (a private window, a full disk): the page works online as before.
  }
}

/// The notebooks whose notes this device keeps whole ("keep on this device"), by id.
const PINNED = "quire-pinned-notebooks";

export function pinned(): string[] {
  try {
    const ids: unknown = JSON.parse(localStorage.getItem(PINNED) ?? "[]");
    return Array.isArray(ids) ? ids.filter((id): id is string => typeof id === "string") : [];
  } catch {
    return [];
  }
}

export function setPinned(id: string, on: boolean) {
  const now = pinned().filter((p) => p !== id);
  if (on) now.push(id);
  try {
    localStorage.setItem(PINNED, JSON.stringify(now));
  } catch {}
}

/// Past the 50 notes opened last, the oldest kept go; a pinned notebook's notes stay.
async function forgetOldNotes() {
  const kept = await store("kept", "readwrite");
  const keys = (await done(kept.getAllKeys())) as string[];
  const keep = new Set(pinned());
  const all = await Promise.all(
    keys.filter((k) => /^\/notes\/[^/?]+$/.test(k)).map(async (k) => [k, (await done(kept.get(k))) as { at: number; value: Note }] as const),
  );
  const notes = all.filter(([, entry]) => !keep.has(entry.value.notebook_id)).map(([k]) => k);
  if (notes.length <= MOST_NOTES) return;
  const entries = await Promise.all(notes.map(async (k) => [k, ((await done(kept.get(k))) as { at: number }).at] as const));
  entries.sort((a, b) => a[1] - b[1]);
  const tx = await store("kept", "readwrite");
  for (const [k] of entries.slice(0, entries.length - MOST_NOTES)) tx.delete(k);
}

/// The kept answer of `path`, if there is one.
export async function kept(path: string): Promise<unknown> {
  try {
    const entry = (await done((await store("kept")).get(path))) as { value: unknown } | undefined;
    return entry?.value;
  } catch {
    return undefined;
  }
}

/// A new id for a queued save: the server applies a save of one id once.
export const newSaveId = (): string => crypto.randomUUID();

/// The queued save of a note, with its key.
async function queuedFor(queue: IDBObjectStore, noteId: string): Promise<[IDBValidKey, QueuedSave] | null> {
  const keys = (await done(queue.getAllKeys())) as IDBValidKey[];
  const values = (await done(queue.getAll())) as QueuedSave[];
  const at = values.findIndex((v) => v.note_id === noteId);
  return at < 0 ? null : [keys[at], values[at]];
}

/// Queues a save made while the server could not be reached; a later save of the same note replaces the text (with
/// an id of its own) but keeps the version the first was made on (what the server will merge against).
export async function queueSave(save: QueuedSave): Promise<void> {
  const queue = await store("queue", "readwrite");
  const found = await queuedFor(queue, save.note_id);
  if (found) {
    const [key, item] = found;
    await done(queue.put({ ...item, title: save.title, body: save.body, queued: save.queued, save_id: newSaveId() }, key));
  } else {
    await done(queue.add(save));
  }
  announce();
}

/// Whether a save of the note waits: its later saves go after it, through the queue.
export async function hasQueued(noteId: string): Promise<boolean> {
  try {
    return (await queuedFor(await store("queue"), noteId)) !== null;
  } catch {
    return false;
  }
}

/// A queued save the server took (`sent`): gone from the queue, unless the person typed meanwhile and it holds a
/// newer text; that one stays, now made on the text sent (so the server merges it against what it holds, which has
/// the text sent in it). Whether something of the note still waits.
export async function settle(key: IDBValidKey, sent: QueuedSave): Promise<boolean> {
  const queue = await store("queue", "readwrite");
  const now = (await done(queue.get(key))) as QueuedSave | undefined;
  if (!now || now.save_id === sent.save_id) {
    await done(queue.delete(key));
    announce();
    return false;
  }
  await done(queue.put({ ...now, base_body: sent.body, base_title: sent.title, base_updated: sent.base_updated }, key));
  announce();
  return true;
}

/// Drops what the page kept (not the saves waiting, which are the person's own words): the session ended.
export async function forgetKept(): Promise<void> {
  try {
    await done((await store("kept", "readwrite")).clear());
  } catch {}
}

/// The saves waiting, each with its key.
export async function queued(): Promise<[IDBValidKey, QueuedSave][]> {
  try {
    const queue = await store("queue");
    const keys = (await done(queue.getAllKeys())) as IDBValidKey[];
    const values = (await done(queue.getAll())) as QueuedSave[];
    return keys.map((k, i) => [k, values[i]]);
  } catch {
    return [];
  }
}

/// What the share sheet sent, oldest first, each with its key.
export async function shared(): Promise<[IDBValidKey, SharedItem][]> {
  try {
    const items = await store("shared");
    const keys = (await done(items.getAllKeys())) as IDBValidKey[];
    const values = (await done(items.getAll())) as SharedItem[];
    return keys.map((k, i) => [k, values[i]]);
  } catch {
    return [];
  }
}

export async function unshare(key: IDBValidKey): Promise<void> {
  await done((await store("shared", "readwrite")).delete(key));
}

/// Tells the page that the queue changed (the top bar shows how many saves wait).
function announce() {
  document.dispatchEvent(new Event("quire:queue"));
}
