// The JSON API of `quire serve`, called with the session cookie and the session's secret. Every failure becomes an
// ApiError with the server's message, which the UI shows as it is, and its kind, which the UI branches on.

import type {
  Accepted,
  AddedAttachment,
  Backlinks,
  ChangeEvent,
  ChangeNews,
  ChangeSetEntry,
  ChatHistory,
  ChatList,
  ChatMessage,
  ChatSummary,
  CreatedNotebook,
  Deleted,
  ErrorKind,
  History,
  LedgerView,
  AgentList,
  AgentTested,
  NewAgent,
  AutomationEntry,
  AutomationList,
  AutomationRun,
  LockInitialized,
  LockState,
  Note,
  NoteLinks,
  NewModel,
  NotebookChanged,
  NotePage,
  NotebookList,
  RevisionList,
  RevisionView,
  SavedNote,
  SearchResults,
  SemanticResults,
  SemanticSettings,
  Settings,
  SyncSettings,
  SyncConflictView,
  ConflictResolved,
  SyncView,
  TagList,
  TrashState,
  TurnEvent,
  Undone,
  WireEdit,
  PluginList,
  PluginView,
  NewPlugin,
  ReviewDecision,
  ReviewList,
  ReviewOutcome,
  ReviewSet,
  QueryResult,
  TaskChanged,
  FieldWritten,
  OpenedNote,
  TemplateList,
  DeviceList,
  PairRequest,
  PairingCode,
  OfflineSave,
  OfflineSaved,
} from "./generated";
import { forgetKept, keep, keepable, kept } from "./offline";

// Every shape the API sends is generated from the Rust types that serialize it (`cargo xtask codegen`).
export type { AddedAttachment, ReviewList, ReviewOutcome, ReviewSet, SyncConflictView };
export type { QueryResult, OpenedNote };
export type QueryRow = QueryResult["rows"][number];
export type { ChangeEvent, ChatMessage, ChatSummary, ErrorKind, LockState, NewModel, Note, NotePage, Settings, SyncView, TurnEvent, WireEdit };
export type NotebookEntry = NotebookList["notebooks"][number];
export type NoteSummary = NotePage["notes"][number];
export type SearchHit = SearchResults["results"][number] | SemanticResults["results"][number];
export type Revision = RevisionView;
export type ChangeSetView = ChangeSetEntry;
export type ChangeView = ChangeSetEntry["changes"][number];

export class ApiError extends Error {
  /// What kind of refusal it is (the body's `kind`; null when the answer carried none).
  readonly kind: ErrorKind | null;

  constructor(
    readonly status: number,
    message: string,
    readonly body: unknown,
  ) {
    super(message);
    const kind = body && typeof body === "object" && "kind" in body ? body.kind : null;
    this.kind = typeof kind === "string" ? (kind as ErrorKind) : null;
  }
}

// The session's secret. Browsers send the session cookie to every port of 127.0.0.1, so any local server the
// browser visits gets it; the API also wants this secret, which no other server sees: the address `quire serve`
// prints redirects to `/#session=SECRET` (a fragment, which browsers never send), and the page keeps it in its
// storage, which is per origin, so per port. Every API call sends it as `X-Quire-Session`; images the browser
// loads by itself (attachments in the preview) carry it as `?session=` (see markdown.ts).
const SESSION_KEY = "quire-session";
let secret = "";

function adoptSession() {
  const params = new URLSearchParams(location.hash.slice(1));
  const given = params.get("session");
  try {
    if (given) localStorage.setItem(SESSION_KEY, given);
    secret = given ?? localStorage.getItem(SESSION_KEY) ?? "";
  } catch {
    // Storage is switched off: the secret lasts as long as this page.
    secret = given ?? "";
  }
  if (given) {
    params.delete("session");
    const rest = params.toString();
    history.replaceState(null, "", rest ? `#${rest}` : location.pathname + location.search);
  }
}
adoptSession();

/// The session's secret, for URLs the browser loads by itself.
export const sessionSecret = (): string => secret;

const SESSION_LOST =
  "This page has no session with the server (it was restarted, another session was opened, or this device was ended). Open the address that `quire serve` printed again, or pair this device again at /pair.";

/// Asks the person for the passphrase when an answer says a sealed note is locked; resolves to whether the
/// workspace is unlocked now (lock.ts sets it).
let askToUnlock: ((why: string) => Promise<boolean>) | null = null;
/// Told after each answer but the lock's own: a request may have used the key, which starts the unlock period again.
let answered: (() => void) | null = null;

export function whenLocked(ask: (why: string) => Promise<boolean>, afterAnswer: () => void) {
  askToUnlock = ask;
  answered = afterAnswer;
}

/// The note a refusal carries when it is a read of a sealed note while the workspace is locked (its title, no text).
export function lockedNote(e: unknown): Note | null {
  if (!(e instanceof ApiError) || e.kind !== "locked") return null;
  const note = (e.body as { note?: Note | null } | null)?.note;
  return note ?? null;
}

/// A call to the API. A refusal because a sealed note is locked asks for the passphrase (unless `unlockFirst` is
/// false) and, once unlocked, makes the call again.
async function call<T>(method: string, path: string, body?: unknown, unlockFirst = true): Promise<T> {
  try {
    return await send<T>(method, path, body);
  } catch (e) {
    if (unlockFirst && e instanceof ApiError && e.kind === "locked" && askToUnlock && (await askToUnlock(e.message))) {
      return send<T>(method, path, body);
    }
    throw e;
  }
}

/// An answer `boot.js` asked for while the script loaded, the first time the app asks for the same (once only).
function takeEarly(method: string, path: string): Promise<Response> | undefined {
  const early = (window as { quireEarly?: Map<string, Promise<Response>> }).quireEarly;
  const answer = method === "GET" ? early?.get(path) : undefined;
  early?.delete(path);
  return answer;
}

async function send<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { "x-quire-session": secret };
  // A file goes as it is, with its own type; anything else as JSON.
  const file = body instanceof Blob ? body : null;
  if (file) headers["content-type"] = file.type || "application/octet-stream";
  else if (body !== undefined) headers["content-type"] = "application/json";
  let response: Response;
  try {
    response = await (takeEarly(method, path) ??
      fetch(`/api${path}`, {
        method,
        credentials: "same-origin",
        headers,
        body: file ?? (body === undefined ? undefined : JSON.stringify(body)),
      }));
  } catch {
    // The server cannot be reached (offline, or it stopped): a list or a note this device kept stands in for it.
    setOffline(true);
    if (method === "GET" && keepable(path)) {
      const value = await kept(path);
      if (value !== undefined) return value as T;
    }
    throw new ApiError(0, method === "GET" ? OFFLINE_NOT_KEPT : OFFLINE, null);
  }
  setOffline(false);
  const text = await response.text();
  let value: unknown = null;
  try {
    value = text ? JSON.parse(text) : null;
  } catch {
    value = { error: text };
  }
  if (response.status === 401) sessionEnded();
  if (!response.ok) {
    const message =
      response.status === 401
        ? SESSION_LOST
        : value && typeof value === "object" && "error" in value && typeof value.error === "string"
          ? value.error
          : `${response.status} ${response.statusText}`;
    throw new ApiError(response.status, message, value);
  }
  if (!path.startsWith("/lock")) answered?.();
  if (method === "GET" && keepable(path)) void keep(path, value);
  return value as T;
}

/// The session ended (this device was ended, or the server's key replaced): nothing it kept stays on the device,
/// and the page says so once (`quire:session-ended`), rather than at the next thing the person does.
function sessionEnded() {
  void forgetKept();
  if (ended) return;
  ended = true;
  document.dispatchEvent(new Event("quire:session-ended"));
}
let ended = false;

const OFFLINE = "The server cannot be reached: check the connection (or that quire serve runs), then try again.";
const OFFLINE_NOT_KEPT = "The server cannot be reached, and this device kept no copy of that: it keeps the lists and the notes opened lately.";

let offline = false;

/// Whether the last call found the server out of reach.
export const isOffline = (): boolean => offline;

/// Whether an error is the server being out of reach (rather than a refusal).
export const offlineError = (e: unknown): boolean => e instanceof ApiError && e.status === 0;

function setOffline(now: boolean) {
  if (offline === now) return;
  offline = now;
  document.dispatchEvent(new Event(now ? "quire:offline" : "quire:online"));
}

const q = (params: Record<string, string | number | boolean | undefined | null>): string => {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== "") search.set(key, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : "";
};

export const api = {
  /// A note's links as core resolved them: the target as written, and the note it means (none when unresolved).
  links: (id: string) => call<NoteLinks>("GET", `/notes/${id}/links`),
  settings: () => call<Settings>("GET", "/settings"),
  /// Whether a passphrase is set and sealed notes are open now (asking does not keep them open).
  lock: () => call<LockState>("GET", "/lock"),
  unlock: (passphrase: string) => call<LockState>("POST", "/lock/unlock", { passphrase }, false),
  lockNow: () => call<LockState>("POST", "/lock/lock"),
  /// Sets the workspace's passphrase (as `quire lock init`); the answer holds the recovery key, shown once.
  initLock: (passphrase: string) => call<LockInitialized>("POST", "/lock/init", { passphrase }, false),
  /// Sync as Settings shows it.
  syncSettings: () => call<SyncSettings>("GET", "/sync/settings"),
  /// Starts syncing with a new target ("init") or joins another device's ("join").
  setUpSync: (setup: { action: "init" | "join"; target: string; name: string; passphrase: string; credentials: SyncCredentials }) =>
    call<SyncSettings>("POST", "/sync/setup", setup),
  leaveSync: () => call<SyncSettings>("POST", "/sync/leave"),
  /// Where sync with the other devices stands (phase "off" when this workspace does not sync).
  sync: () => call<SyncView>("GET", "/sync"),
  /// Sync as soon as possible.
  syncNow: () => call<SyncView>("POST", "/sync"),
  /// The places in a note another device changed at the same time as this one (both versions are in the note).
  /// The conflicts still open, of one note or (null) of every note.
  syncConflicts: (noteId: string | null) =>
    call<SyncConflictView[]>("GET", noteId === null ? "/sync/conflicts" : `/sync/conflicts${q({ note: noteId })}`),
  /// Keeps "mine", "theirs", "both" or "merged" of one.
  resolveConflict: (id: number, keep: "mine" | "theirs" | "both" | "merged") =>
    call<ConflictResolved>("POST", `/sync/conflicts/${id}`, { keep }),
  /// Adds a chat model (kept in the server's config.toml, the key with it; never sent back).
  addModel: (model: NewModel) => call<Settings>("POST", "/models", model),
  /// The plugins (MCP servers) with their state and tools.
  plugins: () => call<PluginList>("GET", "/plugins"),
  /// Adds a plugin: kept in the server's config.toml, started, its tools offered.
  addPlugin: (plugin: NewPlugin) => call<PluginView>("POST", "/plugins", plugin),
  removePlugin: (name: string) => call<void>("DELETE", `/plugins/${encodeURIComponent(name)}`),
  /// The paired devices and the codes not yet used (on the computer's own session only).
  devices: () => call<DeviceList>("GET", "/devices"),
  /// A one-time code that pairs a device, with the address to open and its QR code.
  pairDevice: (request: PairRequest) => call<PairingCode>("POST", "/devices", request),
  /// Ends a device (or its unused code) at once.
  revokeDevice: (name: string) => call<void>("DELETE", `/devices/${encodeURIComponent(name)}`),
  semantic: () => call<SemanticSettings>("GET", "/semantic"),
  installModel: (model: string) => call<SemanticSettings>("POST", "/semantic/install", { model }),
  notebooks: () => call<NotebookList>("GET", "/notebooks"),
  createNotebook: (title: string, parent_id: string | null) =>
    call<CreatedNotebook>("POST", "/notebooks", { title, parent_id }),
  renameNotebook: (id: string, title: string) => call<NotebookChanged>("PATCH", `/notebooks/${id}`, { title }),
  moveNotebook: (id: string, parent_id: string) => call<NotebookChanged>("PATCH", `/notebooks/${id}`, { parent_id }),
  deleteNotebook: (id: string) => call<Deleted>("DELETE", `/notebooks/${id}`),
  notes: (params: { notebook_id?: string; tag?: string; in_trash?: boolean; offset?: number; sort?: string }) =>
    call<NotePage>("GET", `/notes${q({ ...params, limit: 100 })}`),
  /// A note whole. A sealed note while locked is refused (`locked`, with the note's title in `lockedNote`) without
  /// asking for the passphrase: the page shows it locked, with an Unlock button.
  note: (id: string) => call<Note>("GET", `/notes/${id}`, undefined, false),
  /// A note as the page shows it: whole, or a sealed one while locked as its title without its text (`locked`).
  shownNote: async (id: string): Promise<Note> => {
    try {
      return await call<Note>("GET", `/notes/${id}`, undefined, false);
    } catch (e) {
      const locked = lockedNote(e);
      if (locked) return locked;
      throw e;
    }
  },
  createNote: (title: string, notebook_id: string | null) =>
    call<Note>("POST", "/notes", { title, body: "", notebook_id }),
  saveNote: (
    id: string,
    change: { title?: string; body?: string; tags?: string[]; is_todo?: boolean; done?: boolean; update_links?: boolean },
    base_updated: string,
  ) => call<SavedNote>("PUT", `/notes/${id}`, { ...change, base_updated }),
  /// Sends a save queued while offline: saved, or merged into the note as it is now by sync's rule.
  saveOffline: (id: string, save: OfflineSave) => call<OfflineSaved>("POST", `/notes/${id}/offline`, save),
  /// Adds a file to a note as its attachment; the answer has the Markdown that shows it.
  attach: (id: string, file: File) =>
    call<AddedAttachment>("POST", `/notes/${id}/attachments${q({ name: file.name })}`, file),
  moveNote: (id: string, notebook_id: string) => call<Note>("POST", `/notes/${id}/move`, { notebook_id }),
  protectNote: (id: string, protect: boolean) => call<Note>("POST", `/notes/${id}/protect`, { protected: protect }),
  allNotes: (offset = 0) => call<NotePage>("GET", `/all-notes${q({ offset: offset || undefined, limit: 100 })}`),
  trashNote: (id: string) => call<TrashState>("POST", `/notes/${id}/trash`),
  restoreNote: (id: string) => call<TrashState>("POST", `/notes/${id}/restore`),
  purgeNote: (id: string) => call<Deleted>("POST", `/notes/${id}/purge`),
  tags: () => call<TagList>("GET", "/tags"),
  search: (query: string, semantic: boolean, offset = 0, limit?: number) =>
    call<SearchResults | SemanticResults>("GET", `/search${q({ query, semantic, offset: offset || undefined, limit })}`),
  backlinks: (id: string) => call<Backlinks>("GET", `/notes/${id}/backlinks`),
  revisions: (id: string) => call<RevisionList>("GET", `/notes/${id}/revisions`),
  restoreRevision: (id: string, revision: number) =>
    call<Note>("POST", `/notes/${id}/revisions/${revision}/restore`),
  history: (note_id?: string) => call<History>("GET", `/history${q({ note_id })}`),
  /// What AI read: of a note, of a client, or (neither named) everything with the clients.
  ledger: (of: { note_id?: string; client?: string } = {}) => call<LedgerView>("GET", `/ledger${q(of)}`),
  agents: () => call<AgentList>("GET", "/agents"),
  addAgent: (agent: NewAgent) => call<AgentList>("POST", "/agents", agent),
  removeAgent: (name: string) => call<AgentList>("DELETE", `/agents/${encodeURIComponent(name)}`),
  testAgent: (name: string) => call<AgentTested>("POST", `/agents/${encodeURIComponent(name)}/test`),
  automations: () => call<AutomationList>("GET", "/automations"),
  addAutomation: (entry: AutomationEntry) => call<AutomationList>("POST", "/automations", entry),
  removeAutomation: (name: string) => call<AutomationList>("DELETE", `/automations/${encodeURIComponent(name)}`),
  enableAutomation: (name: string, enabled: boolean) =>
    call<AutomationList>("POST", `/automations/${encodeURIComponent(name)}/enabled`, { enabled }),
  runAutomation: (name: string) => call<AutomationRun>("POST", `/automations/${encodeURIComponent(name)}/run`),
  /// `withLater`: also undo the later changes that touched the same things (what a refused undo offers).
  undo: (change_set_id: string, withLater = false) =>
    call<Undone>("POST", `/history/${change_set_id}/undo${withLater ? "?with_later=true" : ""}`),
  reviews: (all = false) => call<ReviewList>("GET", `/reviews${all ? "?all=true" : ""}`),
  review: (id: number) => call<ReviewSet>("GET", `/reviews/${id}`),
  /// Nothing named: every change that waits.
  decideReview: (id: number, accept: boolean, decision: ReviewDecision = {}) =>
    call<ReviewOutcome>("POST", `/reviews/${id}/${accept ? "accept" : "reject"}`, decision),
  chats: (note_id?: string) => call<ChatList>("GET", `/chats${q({ note_id })}`),
  chat: (id: string) => call<ChatHistory>("GET", `/chats/${id}`),
  dropChatSummary: (id: string) => call<void>("DELETE", `/chats/${id}/summary`),
  approve: (turn: string, call_id: string, allow: boolean) =>
    call<unknown>("POST", `/turns/${encodeURIComponent(turn)}/approve`, { call_id, allow }),
  answer: (turn: string, question_id: string, action: "accept" | "decline" | "cancel", content?: Record<string, unknown>) =>
    call<unknown>("POST", `/turns/${encodeURIComponent(turn)}/answer`, { question_id, action, content }),
  cancel: (turn: string) => call<unknown>("POST", `/turns/${encodeURIComponent(turn)}/cancel`),
  /// Runs a query (Dataview's language); `note_id` is the note it is written in (`this`).
  query: (query: string, note_id: string | null) => call<QueryResult>("POST", "/query", { query, note_id }),
  /// Marks a task done or open again; `text` is the task as shown (a changed line is refused).
  taskDone: (note_id: string, line: number, done: boolean, text: string) =>
    call<TaskChanged>("POST", "/tasks/done", { note_id, line, done, text }),
  /// Sets a field of a note (its inline field's line, or its label).
  setField: (note_id: string, name: string, value: string) =>
    call<FieldWritten>("POST", `/notes/${note_id}/field`, { name, value }),
  /// Opens the day's (or the week's) note, made from its template the first time.
  today: (week = false) => call<OpenedNote>("POST", "/today", { week }),
  templates: () => call<TemplateList>("GET", "/templates"),
  fromTemplate: (template: string, title: string, notebook_id: string | null) =>
    call<OpenedNote>("POST", "/notes/from-template", { template, title, notebook_id }),
  accept: (note_id: string, base: string, edits: WireEdit[], turn_actor: unknown) =>
    call<Accepted>("POST", `/notes/${note_id}/accept`, {
      base,
      edits,
      turn_actor,
    }),
};

/// Starts a chat turn and yields its events as they arrive. Aborting `signal` closes the stream, which stops the
/// turn on the server and keeps what it wrote.
export async function* startTurn(request: unknown, signal: AbortSignal): AsyncGenerator<TurnEvent> {
  const response = await fetch("/api/turns", {
    method: "POST",
    credentials: "same-origin",
    headers: { "content-type": "application/json", accept: "text/event-stream", "x-quire-session": secret },
    body: JSON.stringify(request),
    signal,
  });
  if (!response.ok || !response.body) {
    const text = await response.text();
    let message = `${response.status} ${response.statusText}`;
    let body: unknown = text;
    try {
      body = JSON.parse(text);
      message = (body as { error?: string }).error ?? message;
    } catch {}
    if (response.status === 401) message = SESSION_LOST;
    throw new ApiError(response.status, message, body);
  }
  yield* serverEvents(response.body) as AsyncGenerator<TurnEvent>;
}

/// The server-sent events of a response body, each as its event name and its JSON data.
async function* serverEvents(body: ReadableStream): AsyncGenerator<{ event: string; data: unknown }> {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let end: number;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event = "message";
      const data: string[] = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) event = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      }
      if (data.length) yield { event, data: JSON.parse(data.join("\n")) };
    }
  }
}

/// What happened elsewhere: changes written, and review sets staged to, decided or dropped.
/// A remote sync target's password or keys, as Settings sends them (quire-sync's `Credentials`); blank ones are not kept.
export type SyncCredentials = {
  webdav_password?: string;
  s3_access_key_id?: string;
  s3_secret_access_key?: string;
  s3_region?: string;
  s3_endpoint?: string;
};

export type WorkspaceNews = { changes: ChangeEvent[]; reviews: number[] };

/// The news from now on, a batch at a time: the server ends each stream after a while, and the next one starts where
/// it stopped. Stops when `signal` aborts; waits and tries again when the server is away.
export async function* changeEvents(signal: AbortSignal): AsyncGenerator<WorkspaceNews> {
  let after: number | null = null;
  let reviews_after: number | null = null;
  let failures = 0;
  while (!signal.aborted) {
    try {
      const response = await fetch(`/api/events${q({ after, reviews_after })}`, {
        credentials: "same-origin",
        headers: { accept: "text/event-stream", "x-quire-session": secret },
        signal,
      });
      if (response.status === 401) sessionEnded();
      if (!response.ok || !response.body) throw new ApiError(response.status, response.statusText, null);
      failures = 0;
      for await (const { event, data } of serverEvents(response.body)) {
        const news = data as ChangeNews;
        after = news.seq;
        reviews_after = news.review_seq;
        if (event === "changes" && (news.changes?.length || news.reviews?.length)) {
          yield { changes: news.changes ?? [], reviews: news.reviews ?? [] };
        }
      }
    } catch {
      if (signal.aborted) return;
      failures++;
    }
    // A stream that ended on time is opened again at once; a failure waits longer each time (at most a minute).
    if (failures) await new Promise((r) => setTimeout(r, Math.min(60_000, 1000 * 2 ** failures)));
  }
}
