// quire's web app: notebooks, notes, the editor and the assistant sidebar, over the JSON API of `quire serve`. This
// file only puts the parts together at start-up: the store (store.ts) holds what they share, and each pane is a module
// that is handed what it asks of the others.
import { followAttachments } from "./attach";
import { Chat } from "./chat";
import { $, el } from "./dom";
import { NoteEditor } from "./editor";
import { showEmpty } from "./empty";
import { NoteHistory } from "./history";
import { Links } from "./links";
import { followChanges } from "./live";
import { followSync } from "./sync";
import { Lock } from "./lock";
import { OpenNote } from "./note";
import { deviceIs, isDevice } from "./offline";
import { followOutbox } from "./outbox";
import { NoteActions } from "./noteactions";
import { NoteList } from "./notelist";
import { Panes, showHelp, wireShortcuts } from "./panes";
import { ProposalBar } from "./proposalbar";
import { Screens } from "./screens";
import { SearchBox } from "./search";
import { SemanticModel } from "./semantic";
import { Store } from "./store";
import { NotebookTree } from "./tree";
import { NoteViews } from "./views";

const store = new Store();
const lock = new Lock();
followSync((id) => note.openNote(id));
const semantic = new SemanticModel();
const panes = new Panes();
const editor = new NoteEditor($("editor"), {
  changed: (changes) => {
    chat.userChanged(changes);
    store.notify("proposals");
    note.scheduleSave();
  },
  proposal: (action, id) => void bar.decide(action === "accept" ? [id] : [], action === "reject" ? [id] : []),
});
const chat = new Chat(store, editor);

const tree: NotebookTree = new NotebookTree(store, {
  show: (source) => list.show(source),
  loadNotes: () => list.loadNotes(false),
  showPane: (pane) => panes.show(pane),
  saveNow: () => note.saveNow(),
  showState: (open) => note.showState(open),
});
const list: NoteList = new NoteList(store, semantic, { openNote: (id) => note.openNote(id), loadTree: () => tree.load() });
new SearchBox(store, semantic, (source) => list.show(source));

const note: OpenNote = new OpenNote(store, editor, {
  renderList: () => list.render(),
  loadNotes: () => list.loadNotes(false),
  focusInList: (id) => list.focusNote(id),
  loadTags: () => tree.loadTags(),
  tab: (which) => views.tab(which),
  renderPreview: () => views.renderPreview(),
  loadBacklinks: () => links.loadBacklinks(),
  showPane: (pane) => panes.show(pane),
  unlock: () => lock.unlock(),
  sealed: (open) => lock.state.initialized && open.is_protected,
});
const bar = new ProposalBar(store, editor, note, () => chat.turnActor);
const links = new Links(store, editor, { openNote: (id) => note.openNote(id), offerToCreate: (title) => actions.offerToCreate(title) });
const views = new NoteViews(store, editor, { findByTitle: (title) => links.findByTitle(title), renderHistory: () => noteHistory.render() });
followAttachments(editor, store, { renderPreview: () => views.renderPreview() });
const noteHistory = new NoteHistory(store, editor, {
  saveNow: () => note.saveNow(),
  load: (version) => note.load(version),
  refreshOpen: () => note.refreshOpen(),
  loadTree: () => tree.load(),
  loadNotes: () => list.loadNotes(false),
  loadTags: () => tree.loadTags(),
});
const screens = new Screens(store, semantic, {
  saveNow: () => note.saveNow(),
  afterUndo: () => noteHistory.afterUndo(),
  loadModels: () => chat.loadSettings(),
  lockChanged: () => lock.refresh(),
  showNotePane: () => panes.show("note"),
});

/// The note pane with no note open.
const empty = () => showEmpty(store, { newNote: () => void list.newNote(), newNotebook: () => void tree.newNotebook(null) });
const actions = new NoteActions(store, {
  saveNow: () => note.saveNow(),
  showState: (open) => note.showState(open),
  load: (open) => note.load(open),
  openNote: (id) => note.openNote(id),
  loadNotes: () => list.loadNotes(false),
  loadTree: () => tree.load(),
  showEmpty: empty,
}, lock);

// Locking by hand saves the open note's typing first. Locking or unlocking shows the open note as it is now (its text,
// or the Unlock button); a passphrase found set marks sealed notes in the list and the tree.
lock.beforeLock = () => note.saveNow();
lock.onChange((initializedChanged) => {
  void note.refreshOpen();
  if (store.open) note.showState(store.open);
  if (initializedChanged) {
    list.render();
    void tree.load();
  }
});

$("move-note").onclick = () => void tree.moveOpenNote();
$("help-button").onclick = () => showHelp();
wireShortcuts({
  newNote: () => void list.newNote(),
  search: () => {
    panes.show("list");
    $("search").focus();
  },
  assistant: () => {
    panes.show("assistant");
    $("message").focus();
  },
  editor: () => {
    if (!store.open) return;
    panes.show("note");
    void views.tab("edit").then(() => editor.focus());
  },
});
window.addEventListener("beforeunload", (e) => {
  if (store.open && note.unsaved()) {
    void note.saveNow();
    e.preventDefault();
  }
});

/// On a paired device, the app's shell is kept by the service worker, so that quire opens without the server.
if ("serviceWorker" in navigator && isDevice()) {
  navigator.serviceWorker.register("/sw.js").catch(() => {
    // Not over https on another device (a browser allows workers on https and on this computer only): quire works,
    // without opening offline.
  });
}

// A session that ends while the page is open (this device ended in Settings or by `quire device revoke`, or the
// server's key replaced) stops the page at once, and says how to get back in.
document.addEventListener("quire:session-ended", () => {
  const device = isDevice();
  const box = el(
    "div",
    { class: "session-ended", role: "alertdialog", "aria-labelledby": "session-ended-title" },
    el("h2", { id: "session-ended-title", text: device ? "This device is no longer paired" : "This page's session ended" }),
    el("p", {
      text: device
        ? "It was ended on the computer that runs quire, or the server's key was replaced. Text not saved yet is below, to copy."
        : "The server was given a new key, or another session replaced this one. Open the address `quire serve` printed again. Text not saved yet is below, to copy.",
    }),
    ...(store.open && note.unsaved() ? [el("textarea", { readonly: "", "aria-label": "Your unsaved text" }, editor.text())] : []),
    ...(device ? [el("a", { href: "/pair", text: "Pair this device again" })] : []),
  );
  document.body.replaceChildren(box);
});

async function start() {
  followOutbox({
    saved: (saved, more) => {
      note.offlineSaved(saved.note, more);
      void list.loadNotes(false, true);
    },
    shared: (id) => void note.openNote(id),
  });
  // All at once: on a phone on a slow network each round trip is a wait of its own before the first screen.
  await Promise.all([lock.refresh(), tree.load(), tree.loadTags(), chat.loadSettings(), semantic.load(), list.show(store.source)]);
  // A device limited to notebooks has nothing at the top level: its first notebook is where its notes are.
  const first = store.notebooks.find((n) => n.depth === 0);
  if (deviceIs("limited") && !store.notes.length && first) {
    await list.show({ kind: "notebook", id: first.notebook_id, title: first.title });
  }
  followChanges(store, {
    refreshList: () => list.loadNotes(false, true),
    focusInList: (id) => list.focusNote(id),
    loadTree: () => tree.load(),
    loadTags: () => tree.loadTags(),
    saving: () => note.saving,
    refreshOpen: () => note.refreshOpen(true),
    showEmpty: empty,
    reviewsChanged: (ids) => screens.reviewsChanged(ids),
    changesWritten: () => screens.changesWritten(),
    viewsChanged: () => views.refreshQueries(),
  });
  void empty();
  const wanted = new URLSearchParams(location.hash.slice(1)).get("note");
  // Opening a note shows what the assistant sees; with none open, say so here.
  if (wanted) await note.openNote(wanted);
  else store.notify("focus");
}

void start();
