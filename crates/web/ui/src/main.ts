// quire's web app: notebooks, notes, the editor and the assistant sidebar, over the JSON API of `quire serve`.
import { ChangeSet } from "@codemirror/state";
import { ApiError, api, type Note, type NoteSummary, type NotebookEntry } from "./api";
import { Chat } from "./chat";
import { NoteEditor } from "./editor";
import { lineDiff } from "./diff";
import { $, describeError, el, status } from "./dom";
import { ask, confirmDialog } from "./dialog";
import { quireTarget, renderMarkdown, taskBoxes, taskMarks } from "./markdown";
import { modelForm } from "./models";
import { SemanticModel } from "./semantic";
import { draggableNote, moveOpenNote, renderTree, wireTreeKeys } from "./tree";
import { emptyList, showEmptyPane } from "./empty";
import { followChanges } from "./live";
import { Panes, showHelp, wireShortcuts } from "./panes";
import { offerToCreate, toggleProtection } from "./noteactions";
import { dropProposals, proposalField, wireEdits, type Proposal } from "./proposals";

/// Where the note list comes from.
export type Source =
  | { kind: "notebook"; id: string; title: string }
  | { kind: "all" }
  | { kind: "tag"; tag: string }
  | { kind: "trash" }
  | { kind: "search"; query: string; semantic: boolean };

const SAVE_DELAY_MS = 600;

/// How deep `![[Note]]` embeds go (a note embedding itself, or a loop of notes, stops at the first repeat anyway).
const MAX_EMBED_DEPTH = 3;

/// Search results per page.
const SEARCH_PAGE = 50;

/// How long typing in the search box pauses before the search runs.
const SEARCH_DELAY_MS = 300;

class App {
  notebooks: NotebookEntry[] = [];
  source: Source = { kind: "notebook", id: "_root", title: "Top level" };
  /// What the list showed before a search: clearing the search goes back there, and a new note made meanwhile goes
  /// into that notebook.
  beforeSearch: Source = { kind: "notebook", id: "_root", title: "Top level" };
  notes: NoteSummary[] = [];
  offset = 0;
  listTicket = 0;
  /// The note in the editor, as last saved (or loaded).
  open: Note | null = null;
  savedText = "";
  saveTimer: number | undefined;
  saving: Promise<void> = Promise.resolve();
  conflict: Note | null = null;
  editor: NoteEditor;
  chat: Chat;
  semantic = new SemanticModel();
  panes = new Panes();

  constructor() {
    this.editor = new NoteEditor($("editor"), {
      changed: (changes) => this.onEdit(changes),
      proposal: (action, id) => void this.decide(action === "accept" ? [id] : [], action === "reject" ? [id] : []),
    });
    this.chat = new Chat(this);
    this.wire();
  }

  wire() {
    $("new-notebook").onclick = () => void this.newNotebook(null);
    $("new-note").onclick = () => void this.newNote();
    $("more").onclick = () => void this.loadNotes(true);
    $("sort").onchange = () => void this.loadNotes(false);
    $("todos-only").onchange = () => this.renderNotes();
    $("search-form").onsubmit = (e) => {
      e.preventDefault();
      this.search();
    };
    // Search as you type, once the typing pauses.
    $("search").addEventListener("input", () => {
      window.clearTimeout(this.searchTimer);
      this.searchTimer = window.setTimeout(() => this.search(), SEARCH_DELAY_MS);
    });
    // A title is saved when it is done (Enter, or leaving the field), and links that named the note follow it.
    $("title").oninput = () => ($("save-state").textContent = "Editing…");
    $("title").onchange = () => void this.saveNow();
    // Enter in the title goes on to the text, as in other notes apps.
    $("title").onkeydown = (e) => {
      if (e.key === "Enter" && !e.isComposing) {
        e.preventDefault();
        void this.saveNow();
        if (this.open && !this.open.in_trash) this.editor.focus();
      }
    };
    $("tags").onchange = () => void this.saveMeta({ tags: this.tagsInput() });
    $("todo").onchange = () => void this.saveMeta({ is_todo: $<HTMLInputElement>("todo").checked });
    $("done").onchange = () => void this.saveMeta({ done: $<HTMLInputElement>("done").checked });
    $("trash").onclick = () => void this.trash();
    $("move-note").onclick = () => void moveOpenNote(this);
    $("protect").onclick = () => void toggleProtection(this);
    $("conflict-close").onclick = () => this.hideConflict();
    $("help-button").onclick = () => showHelp();
    wireTreeKeys();
    wireShortcuts({
      newNote: () => void this.newNote(),
      search: () => {
        this.panes.show("list");
        $("search").focus();
      },
      assistant: () => {
        this.panes.show("assistant");
        $("message").focus();
      },
      editor: () => {
        if (!this.open) return;
        this.panes.show("note");
        void this.tab("edit").then(() => this.editor.focus());
      },
    });
    $("restore").onclick = () => void this.restoreFromTrash();
    $("purge").onclick = () => void this.purge();
    $("conflict-keep").onclick = () => void this.keepMine();
    $("conflict-load").onclick = () => void this.loadTheirs();
    $("accept-all").onclick = () => void this.decide(this.proposals().filter((p) => !p.stale).map((p) => p.id), []);
    $("reject-all").onclick = () => void this.decide([], this.proposals().map((p) => p.id));
    $("recent-button").onclick = () => void this.showRecent();
    $("settings-button").onclick = () => void this.showSettings();
    $("semantic").onchange = () => {
      this.semantic.render();
      // The same words, searched the other way.
      if ($<HTMLInputElement>("search").value.trim()) this.search();
    };
    for (const tab of ["edit", "preview", "history"] as const) $(`tab-${tab}`).onclick = () => void this.tab(tab);
    document.querySelector(".tabs")?.addEventListener("keydown", (e) => {
      const key = (e as KeyboardEvent).key;
      if (key !== "ArrowRight" && key !== "ArrowLeft") return;
      const tabs = ["edit", "preview", "history"];
      const current = tabs.findIndex((t) => $(`tab-${t}`).getAttribute("aria-selected") === "true");
      const next = tabs[(current + (key === "ArrowRight" ? 1 : tabs.length - 1)) % tabs.length];
      void this.tab(next as "edit");
      $(`tab-${next}`).focus();
    });
    $("preview").addEventListener("click", (e) => {
      const box = (e.target as HTMLElement).closest<HTMLElement>(".task-box.interactive");
      if (box) this.toggleTask(box);
    });
    $("preview").addEventListener("keydown", (e) => {
      const box = (e.target as HTMLElement).closest<HTMLElement>(".task-box.interactive");
      if (box && (e.key === " " || e.key === "Enter")) {
        e.preventDefault();
        this.toggleTask(box);
      }
    });
    document.addEventListener("click", (e) => {
      const anchor = (e.target as HTMLElement).closest("a");
      if (!anchor) return;
      const target = quireTarget(anchor);
      if (!target) return;
      e.preventDefault();
      void this.follow(target);
    });
    // A link to a note that does not exist yet (markdown.ts marks it and says so on a click) offers to create it;
    // a tag chip searches for its tag.
    document.addEventListener("quire:create-note", (e) => void offerToCreate(this, (e as CustomEvent<{ title?: string }>).detail?.title ?? ""));
    document.addEventListener("quire:search", (e) => {
      const query = (e as CustomEvent<{ query?: string }>).detail?.query;
      if (!query) return;
      $<HTMLInputElement>("search").value = query;
      this.search();
    });
    window.addEventListener("beforeunload", (e) => {
      if (this.open && this.unsaved()) {
        void this.saveNow();
        e.preventDefault();
      }
    });
  }

  searchTimer: number | undefined;

  /// Searches for what the box holds (the notebook list again when it is empty); nothing when it already shows that.
  search() {
    window.clearTimeout(this.searchTimer);
    const semantic = $<HTMLInputElement>("semantic").checked;
    const query = semantic ? $<HTMLInputElement>("search").value.trim() : asYouType($<HTMLInputElement>("search").value);
    const s = this.source;
    if (query) {
      if (s.kind === "search" && s.query === query && s.semantic === semantic) return;
      void this.show({ kind: "search", query, semantic });
    } else if (s.kind === "search") void this.show(this.beforeSearch);
  }

  async start() {
    await Promise.all([this.loadTree(), this.loadTags(), this.chat.loadSettings(), this.semantic.load()]);
    await this.show(this.source);
    followChanges(this);
    void this.showEmpty();
    const wanted = new URLSearchParams(location.hash.slice(1)).get("note");
    // Opening a note shows what the assistant sees; with none open, say so here.
    if (wanted) await this.openNote(wanted);
    else this.chat.focusChanged();
  }

  /// The note pane with no note: a welcome on a workspace with no notes at all.
  async showEmpty() {
    let firstRun = false;
    try {
      firstRun = this.notebooks.length === 0 && (await api.allNotes()).total === 0;
    } catch {
      // The welcome is extra: without it the pane says how to start.
    }
    showEmptyPane(this, firstRun);
  }

  /// Somebody changed the workspace (the quire command, an AI client, the assistant, this page): the tree, the tags,
  /// the list and the open note show it.
  async changedElsewhere(changes: import("./api").ChangeEvent[]) {
    const focused = (document.activeElement as HTMLElement | null)?.dataset.note;
    const before = JSON.stringify(this.notes);
    const refreshList = this.source.kind !== "search" ? this.loadNotes(false, true) : Promise.resolve();
    await Promise.all([this.loadTree(), this.loadTags(), refreshList]);
    if (focused && JSON.stringify(this.notes) !== before) document.querySelector<HTMLElement>(`#notes [data-note="${focused}"]`)?.focus();
    if (this.open && changes.some((c) => c.id === this.open?.note_id || c.entity === "attachment" || c.entity === "attribute")) {
      await this.saving;
      await this.refreshOpen(true);
    }
    if (!$("empty").hidden) void this.showEmpty();
  }

  // ---- notebooks and tags ----

  async loadTree() {
    try {
      this.notebooks = (await api.notebooks()).notebooks;
    } catch (e) {
      status(`Notebooks could not be loaded: ${describeError(e)}`, true);
      return;
    }
    renderTree(this);
  }

  sameSource(s: Source): boolean {
    const c = this.source;
    if (c.kind !== s.kind) return false;
    if (c.kind === "notebook" && s.kind === "notebook") return c.id === s.id;
    if (c.kind === "tag" && s.kind === "tag") return c.tag === s.tag;
    return true;
  }

  async loadTags() {
    try {
      const { tags } = await api.tags();
      $("tag-list").replaceChildren(
        ...tags.filter((t) => t.note_count > 0).map((t) => {
          const b = el("button", { type: "button", class: "tree-item", text: `#${t.name} (${t.note_count})` });
          b.onclick = () => void this.show({ kind: "tag", tag: t.name });
          return el("li", {}, b);
        }),
      );
    } catch (e) {
      status(`Tags could not be loaded: ${describeError(e)}`, true);
    }
  }

  async newNotebook(parent: string | null) {
    const inside = parent ? this.notebooks.find((n) => n.notebook_id === parent) : undefined;
    await ask({
      title: "New notebook",
      label: inside ? `Name of the new notebook inside “${inside.title}”` : "Name of the new notebook",
      confirm: "Create",
      empty: "Give the notebook a name.",
      submit: async (title) => {
        await api.createNotebook(title, parent);
        status(`Created notebook “${title}”.`);
        await this.loadTree();
      },
    });
  }

  async renameNotebook(nb: NotebookEntry) {
    await ask({
      title: "Rename notebook",
      label: `New name for “${nb.title}”`,
      value: nb.title,
      confirm: "Rename",
      empty: "Give the notebook a name.",
      submit: async (title) => {
        if (title === nb.title) return;
        await api.renameNotebook(nb.notebook_id, title);
        status(`Renamed “${nb.title}” to “${title}”.`);
        await this.loadTree();
      },
    });
  }

  async moveNotebook(nb: NotebookEntry) {
    // Not into itself or one of its own notebooks.
    const choices: [string, string][] = [
      ["_root", "Top level"],
      ...this.notebooks
        .filter((n) => n.notebook_id !== nb.notebook_id && !n.path.startsWith(`${nb.path}/`))
        .map((n): [string, string] => [n.notebook_id, n.path]),
    ];
    await ask({
      title: "Move notebook",
      label: `Move “${nb.title}” into`,
      choices,
      confirm: "Move",
      submit: async (parent) => {
        await api.moveNotebook(nb.notebook_id, parent);
        status(`Moved “${nb.title}”.`);
        await this.loadTree();
      },
    });
  }

  async deleteNotebook(nb: NotebookEntry) {
    const sure = await confirmDialog(
      "Delete notebook",
      `Delete the notebook “${nb.title}”? Only an empty notebook can be deleted: move its notes and notebooks out first.`,
      "Delete",
      true,
    );
    if (!sure) return;
    await this.attempt(async () => {
      await api.deleteNotebook(nb.notebook_id);
      status(`Deleted notebook “${nb.title}”.`);
      if (this.source.kind === "notebook" && this.source.id === nb.notebook_id) this.source = { kind: "notebook", id: "_root", title: "Top level" };
      await Promise.all([this.loadTree(), this.show(this.source)]);
    });
  }

  /// Runs a change and shows the server's refusal (a guard, a conflict) as a message instead of failing.
  async attempt(run: () => Promise<void>) {
    try {
      await run();
    } catch (e) {
      status(describeError(e), true);
    }
  }

  // ---- the note list ----

  async show(source: Source) {
    if (source.kind === "search" && this.source.kind !== "search") this.beforeSearch = this.source;
    this.source = source;
    this.offset = 0;
    this.notes = [];
    const title =
      source.kind === "notebook"
        ? source.title
        : source.kind === "all"
          ? "All notes"
          : source.kind === "tag"
            ? `#${source.tag}`
            : source.kind === "trash"
              ? "Trash"
              : `Search: ${source.query}`;
    $("list-title").textContent = title;
    await this.loadNotes(false);
    if (source.kind !== "search") void this.loadTree();
  }

  /// `quiet`: a refresh after a change elsewhere; the list is drawn again only when it changed.
  async loadNotes(more: boolean, quiet = false) {
    const before = JSON.stringify(this.notes);
    const s = this.source;
    const list = $("notes");
    // A list asked for later wins over one still on its way (a slow search by meaning, then a click on a notebook).
    const ticket = ++this.listTicket;
    list.setAttribute("aria-busy", "true");
    try {
      if (s.kind === "search") {
        const page = await api.search(s.query, s.semantic, more ? this.offset : 0, SEARCH_PAGE);
        if (ticket !== this.listTicket) return;
        const found = page.results.map((r) => ({ ...r }));
        this.notes = more ? [...this.notes, ...found] : found;
        this.offset = page.offset + page.results.length;
        const total = (page as { total?: number }).total;
        $("more").hidden = !page.has_more;
        $("more").textContent = total === undefined ? "Load more" : `Load more (${total - this.offset} left)`;
        $("list-title").textContent =
          total === undefined
            ? `Search: ${s.query}`
            : `Search: ${s.query} (${total.toLocaleString()} found${total > this.notes.length ? `, ${this.notes.length} shown` : ""})`;
      } else if (s.kind === "all") {
        const page = await api.allNotes(more ? this.offset : 0);
        if (ticket !== this.listTicket) return;
        this.notes = more ? [...this.notes, ...page.notes] : page.notes;
        this.offset = page.offset + page.notes.length;
        $("more").hidden = !page.has_more;
        $("more").textContent = `Load more (${page.total - this.offset} left)`;
      } else {
        const page = await api.notes({
          notebook_id: s.kind === "notebook" ? s.id : undefined,
          tag: s.kind === "tag" ? s.tag : undefined,
          in_trash: s.kind === "trash" ? true : undefined,
          offset: more ? this.offset : 0,
          sort: $<HTMLSelectElement>("sort").value,
        });
        if (ticket !== this.listTicket) return;
        this.notes = more ? [...this.notes, ...page.notes] : page.notes;
        this.offset = page.offset + page.notes.length;
        $("more").hidden = !page.has_more;
        $("more").textContent = `Load more (${page.total - this.offset} left)`;
      }
      if (!quiet || JSON.stringify(this.notes) !== before) this.renderNotes();
    } catch (e) {
      if (ticket !== this.listTicket) return;
      this.notes = [];
      $("more").hidden = true;
      $("notes").replaceChildren(el("li", { class: "error list-error", text: describeError(e) }));
      status(describeError(e), true);
    } finally {
      if (ticket === this.listTicket) list.removeAttribute("aria-busy");
    }
  }

  renderNotes() {
    const todosOnly = $<HTMLInputElement>("todos-only").checked;
    const notes = this.notes.filter((n) => !todosOnly || n.is_todo);
    const list = $("notes");
    list.replaceChildren(
      ...notes.map((n) => {
        const label = `${n.is_todo ? (n.todo_completed ? "☑ " : "☐ ") : ""}${n.title || "Untitled"}${n.is_protected ? " · protected" : ""}`;
        const button = el("button", { type: "button", class: "note-item" }, el("span", { class: "note-title", text: label }));
        const meta = [n.notebook_path, ...n.tags.map((t) => `#${t}`)].filter(Boolean).join(" · ");
        if (meta) button.append(el("span", { class: "note-meta-line", text: meta }));
        const snippet = (n as { snippet?: string }).snippet;
        if (snippet) button.append(highlighted(snippet));
        if (this.open?.note_id === n.note_id) button.setAttribute("aria-current", "true");
        button.dataset.note = n.note_id;
        button.onclick = () => void this.openNote(n.note_id);
        if (!n.in_trash) draggableNote(button, n);
        return el("li", {}, button);
      }),
    );
    if (!notes.length) list.append(emptyList(this, todosOnly && this.notes.length > 0));
  }

  async newNote() {
    // While a search shows, the note goes where the person was before searching.
    const place = this.source.kind === "search" ? this.beforeSearch : this.source;
    const notebook = place.kind === "notebook" && place.id !== "_root" ? place.id : null;
    await this.attempt(async () => {
      const note = await api.createNote("Untitled", notebook);
      await Promise.all([this.loadNotes(false), this.loadTree()]);
      await this.openNote(note.note_id);
      $<HTMLInputElement>("title").select();
      $("title").focus();
    });
  }

  // ---- the open note ----

  async openNote(id: string) {
    if (!(await this.mayLeave())) return;
    const fromList = document.activeElement?.classList.contains("note-item") ?? false;
    await this.saveNow();
    this.chat.leaveNote();
    let note: Note;
    try {
      note = await api.note(id);
    } catch (e) {
      status(describeError(e), true);
      return;
    }
    this.load(note);
    history.replaceState(null, "", `#note=${note.note_id}`);
    this.renderNotes();
    if (fromList) document.querySelector<HTMLElement>(`#notes [data-note="${note.note_id}"]`)?.focus();
    void this.tab("edit");
    void this.loadBacklinks();
    this.chat.focusChanged();
    this.panes.show("note");
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
    this.showState(note);
    this.editor.load(note.body, !note.in_trash);
    // The preview shows this note's text, never the one opened before.
    if ($("preview").hidden) $("preview").replaceChildren();
    else this.renderPreview();
    this.updateProposalBar();
    $("save-state").textContent = note.in_trash ? "In the trash: restore it to edit" : "Saved";
  }

  /// Everything about the open note but its title and text: tags, to-do, lock, trash.
  showState(note: Note) {
    this.open = note;
    this.showMeta(note);
    $("lock").hidden = !note.is_protected;
    $("trash").hidden = note.in_trash;
    $("move-note").hidden = note.in_trash;
    $("protect").textContent = note.is_protected ? "Unprotect" : "Protect";
    $("protect").title = note.is_protected
      ? "Let the assistant and AI clients read and change this note again"
      : "Keep the assistant and AI clients from reading or changing this note";
    $("restore").hidden = !note.in_trash;
    $("purge").hidden = !note.in_trash;
    for (const id of ["title", "tags", "todo"]) $<HTMLInputElement>(id).disabled = note.in_trash;
    $<HTMLInputElement>("done").disabled = note.in_trash || !note.is_todo;
    this.chat.showFocus();
  }

  /// The open note after a change elsewhere (an assistant turn, an undo). Its text is reloaded only when it changed
  /// and nothing here would be lost: unsaved typing and proposed edits stay, and the next save shows the conflict.
  async refreshOpen(elsewhere = false) {
    const note = this.open;
    if (!note) return;
    let fresh: Note;
    try {
      fresh = await api.note(note.note_id);
    } catch (e) {
      if (elsewhere && e instanceof ApiError && e.status === 404 && this.open?.note_id === note.note_id) {
        status(`“${note.title}” was deleted elsewhere; your text of it is still in the editor to copy.`, true);
        this.editor.setEditable(false);
      }
      return;
    }
    // Protection and the notebook's path change without `updated` moving: those are compared too.
    const unchanged =
      fresh.updated === note.updated && fresh.is_protected === note.is_protected && fresh.notebook_path === note.notebook_path;
    if (this.open?.note_id !== note.note_id || unchanged) return;
    const sameText = fresh.body === this.savedText && fresh.title === note.title;
    // A conflict shown now is about this newer version: keeping mine saves over it.
    if (this.conflict) this.conflict = fresh;
    if (sameText && fresh.in_trash === note.in_trash) this.showState(fresh);
    else if (!this.unsaved() && !this.proposals().length && !this.conflict) {
      const scroll = $("note-pane").scrollTop;
      this.load(fresh);
      $("note-pane").scrollTop = scroll;
      if (elsewhere) status(`“${fresh.title}” changed elsewhere; its new version is loaded.`);
    } else if (elsewhere && !this.conflict) {
      status(`“${fresh.title}” changed elsewhere. Your unsaved typing is kept; when it saves you choose which version to keep.`);
    }
  }

  /// Whether the open note may be left: unsaved text in a conflict, or proposed edits, are not dropped unasked.
  async mayLeave(): Promise<boolean> {
    if (this.conflict && this.unsaved()) {
      return confirmDialog("Unsaved changes", `Your changes to “${this.open?.title}” are not saved (it changed elsewhere). Leave it and lose them?`, "Leave and lose them", true);
    }
    const proposals = this.proposals().length;
    if (proposals) {
      return confirmDialog("Proposed edits", `${proposals} proposed edit${proposals === 1 ? "" : "s"} of the assistant will be dropped. Leave the note?`, "Leave the note");
    }
    return true;
  }

  tagsInput(): string[] {
    return $<HTMLInputElement>("tags")
      .value.split(",")
      .map((t) => t.trim().replace(/^#/, ""))
      .filter(Boolean);
  }

  unsaved(): boolean {
    return !!this.open && (this.editor.text() !== this.savedText || $<HTMLInputElement>("title").value !== this.open.title);
  }

  onEdit(changes: ChangeSet) {
    this.chat.userChanged(changes);
    this.updateProposalBar();
    this.scheduleSave();
  }

  scheduleSave() {
    if (!this.open || this.conflict) return;
    $("save-state").textContent = "Editing…";
    window.clearTimeout(this.saveTimer);
    this.saveTimer = window.setTimeout(() => void this.saveNow(), SAVE_DELAY_MS);
  }

  /// Saves what the editor holds, once any save in flight finished. A stale save shows the conflict and keeps the text.
  saveNow(): Promise<void> {
    window.clearTimeout(this.saveTimer);
    this.saving = this.saving.then(async () => {
      const note = this.open;
      if (!note || this.conflict) return;
      if (!this.unsaved()) {
        $("save-state").textContent = note.in_trash ? "In the trash: restore it to edit" : "Saved";
        return;
      }
      const body = this.editor.text();
      const title = $<HTMLInputElement>("title").value;
      $("save-state").textContent = "Saving…";
      try {
        const renamed = title !== note.title;
        const saved = await api.saveNote(note.note_id, { title, body, update_links: renamed || undefined }, note.updated);
        if (saved.links_updated) {
          status(`Renamed; ${saved.links_updated} note${saved.links_updated === 1 ? "" : "s"} linking here now use the new title.`);
        }
        if (this.open?.note_id !== note.note_id) return;
        this.open = saved;
        this.savedText = body;
        $("save-state").textContent = this.unsaved() ? "Editing…" : "Saved";
        if (saved.title !== note.title) {
          void this.loadNotes(false);
          this.chat.showFocus();
        }
        if (this.unsaved()) this.scheduleSave();
      } catch (e) {
        if (e instanceof ApiError && e.status === 409) this.showConflict(e);
        else {
          $("save-state").textContent = "Not saved";
          status(`Not saved: ${describeError(e)}`, true);
        }
      }
    });
    return this.saving;
  }

  showConflict(e: ApiError) {
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

  async keepMine() {
    const theirs = this.conflict;
    if (!this.open || !theirs) return;
    // Their version is what is stored now: the editor's text and title are saved over it.
    this.open = { ...this.open, updated: theirs.updated, title: theirs.title };
    this.savedText = theirs.body;
    this.conflict = null;
    $("conflict").hidden = true;
    await this.saveNow();
  }

  async loadTheirs() {
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

  hideConflict() {
    $("conflict").hidden = true;
    $("conflict-mine").hidden = true;
    $<HTMLTextAreaElement>("conflict-mine").value = "";
    $("conflict-close").hidden = true;
    this.editor.focus();
  }

  /// Saves tags or to-do state. When the note changed elsewhere and nothing here is unsaved, its new version is
  /// loaded and the change made on it; with unsaved text, the conflict is shown as for a save of the text.
  async saveMeta(change: { tags?: string[]; is_todo?: boolean; done?: boolean }) {
    await this.saveNow();
    const note = this.open;
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
    this.open = saved;
    this.showMeta(saved);
    await Promise.all([this.loadNotes(false), change.tags ? this.loadTags() : Promise.resolve()]);
  }

  /// The tags and to-do controls as the note has them.
  showMeta(note: Note) {
    $<HTMLInputElement>("tags").value = note.tags.join(", ");
    $<HTMLInputElement>("todo").checked = note.is_todo;
    $<HTMLInputElement>("done").checked = !!note.todo_completed;
    $<HTMLInputElement>("done").disabled = note.in_trash || !note.is_todo;
  }

  async trash() {
    const note = this.open;
    if (!note) return;
    await this.saveNow();
    await this.attempt(async () => {
      await api.trashNote(note.note_id);
      status(`“${note.title}” is in the trash; restore it from there.`);
      this.load(await api.note(note.note_id));
      await Promise.all([this.loadNotes(false), this.loadTree()]);
    });
  }

  async restoreFromTrash() {
    const note = this.open;
    if (!note) return;
    await this.attempt(async () => {
      await api.restoreNote(note.note_id);
      status(`Restored “${note.title}”.`);
      this.load(await api.note(note.note_id));
      await Promise.all([this.loadNotes(false), this.loadTree()]);
    });
  }

  async purge() {
    const note = this.open;
    if (!note || !(await confirmDialog("Delete for good", `Delete “${note.title}” for good? This cannot be undone.`, "Delete forever", true))) return;
    await this.attempt(async () => {
      await api.purgeNote(note.note_id);
      status(`Deleted “${note.title}” for good.`);
      this.open = null;
      $("note").hidden = true;
      $("empty").hidden = false;
      void this.showEmpty();
      history.replaceState(null, "", "#");
      this.chat.focusChanged();
      await Promise.all([this.loadNotes(false), this.loadTree()]);
    });
  }

  /// The open note's links as core resolved them (by title, alias or path), by their target as written.
  private linkCache: { key: string; links: Map<string, string> } | null = null;

  private async resolvedLinks(): Promise<Map<string, string>> {
    const note = this.open;
    if (!note) return new Map();
    const key = `${note.note_id}@${note.updated}`;
    if (this.linkCache?.key !== key) {
      const { links } = await api.links(note.note_id);
      const resolved = links.flatMap((l): [string, string][] => (l.note_id ? [[l.target.toLowerCase(), l.note_id]] : []));
      this.linkCache = { key, links: new Map(resolved) };
    }
    return this.linkCache.links;
  }

  /// The id of the note a link's target means: as core resolved the open note's link (a title, an alias, a path),
  /// else the note titled so (the exact title first, ignoring case), if there is one.
  async findByTitle(title: string): Promise<string | null> {
    const resolved = (await this.resolvedLinks()).get(title.toLowerCase());
    if (resolved) return resolved;
    const { results } = await api.search(`title:"${title.replace(/"/g, "")}"`, false);
    const exact = results.find((r) => r.title === title) ?? results.find((r) => r.title.toLowerCase() === title.toLowerCase());
    return (exact ?? null)?.note_id ?? null;
  }

  async follow(target: { id?: string; title?: string; heading?: string }) {
    if (target.id) return this.openNote(target.id);
    const title = target.title ?? "";
    try {
      if (title && title.toLowerCase() !== this.open?.title.toLowerCase()) {
        const found = await this.findByTitle(title);
        if (!found) {
          await offerToCreate(this, title);
          return;
        }
        await this.openNote(found);
      }
      if (target.heading) this.showHeading(target.heading);
    } catch (e) {
      status(describeError(e), true);
    }
  }

  /// Puts the cursor on the open note's heading of that text and scrolls to it (the editor's, or the preview's).
  showHeading(heading: string) {
    const wanted = heading.trim().toLowerCase();
    const previewHeading = [...$("preview").querySelectorAll<HTMLElement>("h1, h2, h3, h4, h5, h6")].find(
      (h) => h.textContent?.trim().toLowerCase() === wanted,
    );
    if (!$("preview").hidden && previewHeading) {
      previewHeading.scrollIntoView({ block: "start" });
      return;
    }
    const doc = this.editor.view.state.doc;
    for (let n = 1; n <= doc.lines; n++) {
      const line = doc.line(n);
      const match = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line.text);
      if (match && match[1].trim().toLowerCase() === wanted) {
        this.editor.view.dispatch({ selection: { anchor: line.from }, scrollIntoView: true });
        this.editor.focus();
        return;
      }
    }
    status(`“${this.open?.title}” has no heading “${heading}”; it opened at the top.`);
  }

  async loadBacklinks() {
    const note = this.open;
    const box = $("backlinks");
    box.replaceChildren();
    if (!note) return;
    try {
      const { backlinks } = await api.backlinks(note.note_id);
      if (!backlinks.length) return;
      box.append(
        el("h3", { text: "Linked from" }),
        el(
          "ul",
          {},
          ...backlinks.map((b) => {
            const a = el("a", { href: `quire://note/${b.note_id}`, text: b.title });
            const li = el("li", {}, a, b.relation ? ` (${b.relation})` : "");
            if (b.snippet) li.append(el("div", { class: "hint backlink-snippet", text: b.snippet }));
            return li;
          }),
        ),
      );
    } catch {
      // Backlinks are extra: a failure leaves the box empty.
    }
  }

  // ---- views: edit, preview, history ----

  async tab(which: "edit" | "preview" | "history") {
    for (const t of ["edit", "preview", "history"]) {
      $(`tab-${t}`).setAttribute("aria-selected", String(t === which));
      $(`tab-${t}`).tabIndex = t === which ? 0 : -1;
    }
    $("editor").hidden = which !== "edit";
    $("preview").hidden = which !== "preview";
    $("history").hidden = which !== "history";
    if (which === "preview") this.renderPreview();
    if (which === "history") await this.renderHistory();
  }

  /// Counts preview renderings, so an embed that arrives after the preview changed is dropped.
  previewTicket = 0;

  renderPreview() {
    const note = this.open;
    const preview = $("preview");
    const ticket = ++this.previewTicket;
    // The link targets that name no note render as links that offer to create it.
    // A link that several notes may mean is unresolved too, but not missing: only one with no candidate is.
    const missing = new Set(
      (note?.unresolved_links ?? []).filter((l) => l.candidates.length === 0).map((l) => l.target.toLowerCase()),
    );
    preview.innerHTML = renderMarkdown(this.editor.text(), { attachments: note?.attachments, interactiveTasks: !!note && !note.in_trash }, missing);
    void this.fillEmbeds(preview, 1, new Set(note ? [note.title.toLowerCase()] : []), ticket);
  }

  /// Puts each `![[Note]]` placeholder's note in its place (its section, for `![[Note#Heading]]`), and theirs in
  /// turn, up to MAX_EMBED_DEPTH deep; a note already on the way (a loop) is left as a link.
  async fillEmbeds(root: HTMLElement, depth: number, seen: Set<string>, ticket: number) {
    const placeholders = [...root.querySelectorAll<HTMLElement>(".embed[data-embed-title]:not([data-filled])")].filter(
      (p) => p.parentElement?.closest(".embed-body") === (root.classList.contains("embed-body") ? root : null),
    );
    await Promise.all(
      placeholders.map(async (placeholder) => {
        placeholder.dataset.filled = "true";
        const title = placeholder.dataset.embedTitle ?? "";
        const heading = placeholder.dataset.heading ?? "";
        if (!title) return;
        if (seen.has(title.toLowerCase()) || depth > MAX_EMBED_DEPTH) {
          placeholder.append(el("span", { class: "hint", text: ` (not embedded again: ${seen.has(title.toLowerCase()) ? "it embeds itself" : "too deep"})` }));
          return;
        }
        let note: Note;
        try {
          const found = await this.findByTitle(title);
          if (!found) {
            placeholder.append(el("span", { class: "hint", text: " (no note has this title)" }));
            return;
          }
          note = await api.note(found);
        } catch (e) {
          placeholder.append(el("span", { class: "hint", text: ` (${describeError(e)})` }));
          return;
        }
        if (ticket !== this.previewTicket) return;
        const body = el("div", { class: "embed-body markdown" });
        body.innerHTML = renderMarkdown(heading ? section(note.body, heading) : note.body, { attachments: note.attachments });
        placeholder.classList.add("filled");
        placeholder.append(body);
        await this.fillEmbeds(body, depth + 1, new Set([...seen, title.toLowerCase()]), ticket);
      }),
    );
  }

  /// Marks a task of the open note done or not done, from its box in the preview: the `[ ]` of its line in the text
  /// changes (one undo step in the editor) and the note is saved.
  toggleTask(box: HTMLElement) {
    const note = this.open;
    if (!note || note.in_trash) return;
    const boxes = taskBoxes($("preview"));
    const index = boxes.indexOf(box);
    const text = this.editor.text();
    const marks = taskMarks(text);
    if (index < 0 || marks.length !== boxes.length) {
      status("This box could not be matched to a line of the text; change it in the editor.", true);
      return;
    }
    const mark = marks[index];
    this.editor.view.dispatch({
      changes: { from: mark.at, to: mark.at + 1, insert: mark.checked ? " " : "x" },
      userEvent: "input.task",
    });
    const scroll = $("note-pane").scrollTop;
    this.renderPreview();
    $("note-pane").scrollTop = scroll;
    taskBoxes($("preview"))[index]?.focus();
  }

  async renderHistory() {
    const note = this.open;
    const box = $("history");
    if (!note) return;
    await this.saveNow();
    box.replaceChildren(el("p", { class: "hint", text: "Loading…" }));
    try {
      const [{ revisions }, { change_sets }] = await Promise.all([api.revisions(note.note_id), api.history(note.note_id)]);
      const current = this.editor.text();
      box.replaceChildren(el("h3", { text: "Revisions" }));
      if (!revisions.length) box.append(el("p", { class: "hint", text: "No earlier versions yet." }));
      for (const r of revisions) {
        const details = el("details", { class: "revision" }, el("summary", { text: `${new Date(r.created).toLocaleString()}: “${r.title}” before a change by ${r.actor}` }));
        details.addEventListener("toggle", () => {
          if (!details.open || details.querySelector(".diff")) return;
          details.append(diffView(r.body, current));
          const restore = el("button", { type: "button", text: "Restore this version" });
          restore.onclick = () =>
            void this.attempt(async () => {
              const restored = await api.restoreRevision(note.note_id, r.revision);
              this.load(restored);
              status("Restored; the text before is kept as a revision.");
              await this.renderHistory();
            });
          details.append(restore);
        });
        box.append(details);
      }
      box.append(el("h3", { text: "Changes" }));
      box.append(changeSetList(change_sets, () => void this.afterUndo()));
    } catch (e) {
      box.replaceChildren(el("p", { class: "error", text: describeError(e) }));
    }
  }

  /// Shows one of the note pane's screens (recent changes, settings) in place of the note; returns it and a button
  /// that brings the note back.
  async showScreen(id: "recent" | "settings"): Promise<[HTMLElement, HTMLButtonElement]> {
    await this.saveNow();
    const box = $(id);
    for (const other of ["note", "empty", "recent", "settings"]) if (other !== id) $(other).hidden = true;
    box.hidden = false;
    const close = el("button", { type: "button", text: this.open ? "Back to the note" : "Close" });
    close.onclick = () => {
      box.hidden = true;
      if (this.open) $("note").hidden = false;
      else $("empty").hidden = false;
    };
    return [box, close];
  }

  async showRecent() {
    const [box, close] = await this.showScreen("recent");
    box.replaceChildren(el("h2", { text: "Recent changes" }), el("p", { class: "hint", text: "Loading…" }));
    try {
      const { change_sets } = await api.history();
      box.replaceChildren(
        el("h2", { text: "Recent changes" }),
        el("p", { class: "hint", text: "What you, the assistant and AI clients changed, newest first. Undo takes a whole turn back." }),
        changeSetList(change_sets, () => void this.afterUndo()),
      );
      box.prepend(close);
    } catch (e) {
      box.append(el("p", { class: "error", text: describeError(e) }));
    }
  }

  async showSettings() {
    const [box, close] = await this.showScreen("settings");
    const assistant = el("div", {}, el("p", { class: "hint", text: "Loading…" }));
    box.replaceChildren(
      close,
      el("h2", { text: "Settings" }),
      el("h3", { text: "Search by meaning" }),
      el("div", { id: "semantic-panel" }),
      el("h3", { text: "Assistant" }),
      assistant,
    );
    this.semantic.render();
    void this.semantic.load();
    try {
      const settings = await api.settings();
      const added = () => {
        void this.chat.loadSettings();
        void this.showSettings();
      };
      assistant.replaceChildren(
        settings.models.length
          ? el("ul", {}, ...settings.models.map((m) => el("li", { text: `${m.name}${m.name === m.model ? "" : ` (${m.model})`}${m.is_default ? ", the default" : ""}` })))
          : el("p", { text: settings.setup_hint ?? "No model is configured." }),
        ...(settings.can_add_models ? [el("h4", { text: "Add a model" }), modelForm(added)] : []),
        el("p", {
          class: "hint",
          text: "Models are kept in quire's config.toml ([chat] and [[chat.models]]); one added here is offered at once, and quire chat offers it too. A change made to the file by hand counts once quire serve is started again.",
        }),
      );
    } catch (e) {
      assistant.replaceChildren(el("p", { class: "error", text: describeError(e) }));
    }
  }

  async afterUndo() {
    await this.refreshOpen();
    await Promise.all([this.loadTree(), this.loadNotes(false), this.loadTags()]);
    if (!$("history").hidden) await this.renderHistory();
  }

  // ---- proposals ----

  proposals(): Proposal[] {
    return this.editor.view.state.field(proposalField);
  }

  updateProposalBar() {
    const all = this.proposals();
    const open = all.filter((p) => !p.stale).length;
    $("proposal-bar").hidden = all.length === 0;
    $("proposal-count").textContent = `${all.length} proposed edit${all.length === 1 ? "" : "s"}${all.length - open ? ` (${all.length - open} stale)` : ""}`;
    $<HTMLButtonElement>("accept-all").disabled = open === 0;
  }

  /// Applies the accepted proposals as one undo step and saves them once, through the agent's edit acceptance;
  /// drops the rejected ones.
  async decide(accept: number[], reject: number[]) {
    const note = this.open;
    const view = this.editor.view;
    if (reject.length) view.dispatch({ effects: dropProposals.of(reject) });
    const accepted = this.proposals().filter((p) => accept.includes(p.id) && !p.stale);
    if (!note || !accepted.length) {
      this.updateProposalBar();
      return;
    }
    await this.saveNow();
    if (this.conflict) return;
    this.editor.setEditable(false);
    try {
      const base = this.editor.text();
      const done = await api.accept(note.note_id, base, wireEdits(base, accepted), this.chat.turnActor);
      view.dispatch({
        changes: accepted.map((p) => ({ from: p.from, to: p.to, insert: p.insert })),
        effects: dropProposals.of(accepted.map((p) => p.id)),
        userEvent: "input.ai",
      });
      this.savedText = this.editor.text();
      if (done.body !== this.savedText) status("The saved text differs from the editor's; reload the note.", true);
      this.open = await api.note(note.note_id);
      $("save-state").textContent = "Saved";
      status(`Accepted ${accepted.length} edit${accepted.length === 1 ? "" : "s"}. Ctrl+Z takes ${accepted.length === 1 ? "it" : "them"} back.`);
    } catch (e) {
      status(`Not accepted: ${describeError(e)}`, true);
    } finally {
      this.editor.setEditable(!note.in_trash);
      this.updateProposalBar();
      this.editor.focus();
    }
  }
}

/// The part of a Markdown text under the heading `heading`: from that heading to the next one of the same or a
/// higher level (the whole text when no heading has that text).
function section(markdown: string, heading: string): string {
  const lines = markdown.split("\n");
  const wanted = heading.trim().toLowerCase();
  const level = (line: string) => /^(#{1,6})\s/.exec(line)?.[1].length ?? 0;
  const start = lines.findIndex((l) => level(l) > 0 && l.replace(/^#{1,6}\s+/, "").replace(/\s*#*\s*$/, "").trim().toLowerCase() === wanted);
  if (start < 0) return markdown;
  const depth = level(lines[start]);
  let end = start + 1;
  while (end < lines.length && !(level(lines[end]) > 0 && level(lines[end]) <= depth)) end++;
  return lines.slice(start, end).join("\n");
}

/// A search snippet, its matched words (wrapped in `<mark>` by the search) marked; everything else is text.
function highlighted(snippet: string): HTMLElement {
  const box = el("span", { class: "note-snippet" });
  for (const part of snippet.split(/(<mark>[^<]*<\/mark>)/)) {
    const match = /^<mark>([^<]*)<\/mark>$/.exec(part);
    box.append(match ? el("mark", { text: match[1] }) : part);
  }
  return box;
}

/// A line diff of two texts: removed lines, added lines, and the unchanged ones around them.
function diffView(before: string, after: string): HTMLElement {
  const box = el("pre", { class: "diff", "aria-label": "Differences from the current text" });
  box.append(el("span", { class: "hint", text: "− only in this version, + only in the current text\n" }));
  const lines = lineDiff(before, after);
  if (lines.every((l) => l.kind === "same")) box.append(el("span", { class: "hint", text: "Same as the current text." }));
  for (const line of lines) {
    const prefix = line.kind === "add" ? "+ " : line.kind === "del" ? "− " : "  ";
    box.append(el("span", { class: `diff-${line.kind}`, text: `${prefix}${line.text}\n` }));
  }
  return box;
}

function changeSetList(sets: import("./api").ChangeSetView[], afterUndo: () => void): HTMLElement {
  const list = el("ul", { class: "change-sets" });
  if (!sets.length) list.append(el("li", { class: "hint", text: "No changes yet." }));
  for (const set of sets) {
    const shown = set.changes.slice(0, 8).map((c) => `${c.verb} ${c.what}`);
    if (set.changes.length > 8) shown.push(`and ${set.changes.length - 8} more`);
    const what = shown.join("; ");
    const item = el("li", {}, el("span", { class: "who", text: `${new Date(set.created).toLocaleString()} · ${set.actor}` }), el("span", { text: what }));
    if (set.undone) item.append(el("span", { class: "hint", text: ` (undone)` }));
    else {
      const undo = el("button", { type: "button", text: set.actor.startsWith("agent") ? "Undo this turn" : "Undo" });
      undo.onclick = async () => {
        try {
          const done = await api.undo(set.change_set_id);
          status(`Undid ${done.undone_changes} change${done.undone_changes === 1 ? "" : "s"}.`);
          afterUndo();
        } catch (e) {
          // Something changed the same things since: say so in words, and offer to undo that later change too.
          if (!(e instanceof ApiError && e.status === 409 && describeError(e).startsWith("Cannot undo:"))) {
            status(describeError(e), true);
            return;
          }
          const both = await confirmDialog(
            "Undo the later change too?",
            `${describeError(e)} Undoing both puts everything back as it was before this change, as one step you can undo again.`,
            "Undo both",
          );
          if (!both) return;
          try {
            const done = await api.undo(set.change_set_id, true);
            const later = done.undone_later_change_set_ids.length;
            status(`Undid this change and ${later} later change${later === 1 ? "" : "s"} that touched the same things.`);
            afterUndo();
          } catch (again) {
            status(describeError(again), true);
          }
        }
      };
      item.append(undo);
    }
    list.append(item);
  }
  return list;
}

/// A word search as the box is typed in: the last word, while it is plain letters and digits, matches as a prefix
/// (`alph` finds "alpha"), as people expect of a search box; quoted phrases, `tag:` and other filters stay as typed.
export function asYouType(text: string): string {
  const query = text.trim();
  if (!query || /\s$/.test(text)) return query;
  const words = query.split(/\s+/);
  const last = words[words.length - 1];
  if (!/^[\p{L}\p{N}]{2,}$/u.test(last)) return query;
  words[words.length - 1] = `${last}*`;
  return words.join(" ");
}

export type { App };

const app = new App();
void app.start();
