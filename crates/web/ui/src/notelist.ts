// The note list: what a notebook, a tag, All notes, the trash or a search holds, a page at a time, sorted, filtered
// to to-dos, search hits with their matched words; "+ Note" makes a note where the list is, "Today" opens the day's
// note and "From template" fills a template in.
import { api, type OpenedNote } from "./api";
import { ask } from "./dialog";
import { $, attempt, describeError, el, status } from "./dom";
import { emptyList } from "./empty";
import { isSealed } from "./lock";
import { attachmentUrl } from "./markdown";
import type { SemanticModel } from "./semantic";
import type { Source, Store } from "./store";
import { draggableNote } from "./tree";
import { isDevice, pinned, setPinned } from "./offline";
import { keepPinned } from "./outbox";

/// Search results per page.
const SEARCH_PAGE = 50;

/// What the list asks of the other panes.
export interface ListNeeds {
  /// Opens a note in the note pane.
  openNote(id: string): Promise<void>;
  /// Loads the notebook tree again (its counts).
  loadTree(): Promise<void>;
}

export class NoteList {
  private offset = 0;
  private ticket = 0;
  /// What the list showed when it was last drawn (`shownKey`).
  private shown = "";

  constructor(
    private readonly store: Store,
    private readonly semantic: SemanticModel,
    private readonly page: ListNeeds,
  ) {
    $("new-note").onclick = () => void this.newNote();
    $("today-note").onclick = () => void this.today();
    $("from-template").onclick = () => void this.fromTemplate();
    $("more").onclick = () => void this.loadNotes(true);
    $("sort").onchange = () => void this.loadNotes(false);
    $("todos-only").onchange = () => this.render();
    $("keep-offline").onchange = () => {
      const s = this.store.source;
      if (s.kind !== "notebook") return;
      const on = $<HTMLInputElement>("keep-offline").checked;
      setPinned(s.id, on);
      if (on) void keepPinned().then(() => status(`“${s.title}” is kept on this device.`));
    };
  }

  async show(source: Source) {
    const store = this.store;
    if (source.kind === "search" && store.source.kind !== "search") store.beforeSearch = store.source;
    store.source = source;
    this.offset = 0;
    store.notes = [];
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
    // On a paired device, a notebook can be kept whole, to open without the server.
    const keep = $("keep-label");
    keep.hidden = !(isDevice() && source.kind === "notebook" && source.id !== "_root");
    $<HTMLInputElement>("keep-offline").checked = source.kind === "notebook" && pinned().includes(source.id);
    await this.loadNotes(false);
    if (source.kind !== "search") void this.page.loadTree();
  }

  /// `quiet`: a refresh after a change elsewhere; the list is drawn again only when it changed.
  async loadNotes(more: boolean, quiet = false) {
    const store = this.store;
    const s = store.source;
    const list = $("notes");
    // A list asked for later wins over one still on its way (a slow search by meaning, then a click on a notebook).
    const ticket = ++this.ticket;
    list.setAttribute("aria-busy", "true");
    try {
      if (s.kind === "search") {
        const page = await api.search(s.query, s.semantic, more ? this.offset : 0, SEARCH_PAGE);
        if (ticket !== this.ticket) return;
        const found = page.results.map((r) => ({ ...r }));
        store.notes = more ? [...store.notes, ...found] : found;
        this.offset = page.offset + page.results.length;
        const total = (page as { total?: number }).total;
        $("more").hidden = !page.has_more;
        $("more").textContent = total === undefined ? "Load more" : `Load more (${total - this.offset} left)`;
        $("list-title").textContent =
          total === undefined
            ? `Search: ${s.query}`
            : `Search: ${s.query} (${total.toLocaleString()} found${total > store.notes.length ? `, ${store.notes.length} shown` : ""})`;
      } else if (s.kind === "all") {
        const page = await api.allNotes(more ? this.offset : 0);
        if (ticket !== this.ticket) return;
        store.notes = more ? [...store.notes, ...page.notes] : page.notes;
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
        if (ticket !== this.ticket) return;
        store.notes = more ? [...store.notes, ...page.notes] : page.notes;
        this.offset = page.offset + page.notes.length;
        $("more").hidden = !page.has_more;
        $("more").textContent = `Load more (${page.total - this.offset} left)`;
      }
      // Compared with what the list shows, not with the notes when this load began: a click on another notebook
      // empties the notes before its own load, which a quiet refresh started meanwhile overtakes (then neither drew).
      if (!quiet || this.shownKey() !== this.shown) this.render();
    } catch (e) {
      if (ticket !== this.ticket) return;
      store.notes = [];
      $("more").hidden = true;
      this.shown = "";
      $("notes").replaceChildren(el("li", { class: "error list-error", text: describeError(e) }));
      status(describeError(e), true);
    } finally {
      if (ticket === this.ticket) list.removeAttribute("aria-busy");
    }
  }

  /// What the list shows: the source, its notes and the to-do filter.
  private shownKey(): string {
    return JSON.stringify([this.store.source, this.store.notes, $<HTMLInputElement>("todos-only").checked]);
  }

  render() {
    this.shown = this.shownKey();
    const store = this.store;
    const todosOnly = $<HTMLInputElement>("todos-only").checked;
    const notes = store.notes.filter((n) => !todosOnly || n.is_todo);
    const list = $("notes");
    list.replaceChildren(
      ...notes.map((n) => {
        const label = `${n.is_todo ? (n.todo_completed ? "☑ " : "☐ ") : ""}${n.title || "Untitled"}${n.is_protected ? (isSealed(n) ? " · sealed" : " · protected") : ""}`;
        const title = el("span", { class: isSealed(n) ? "note-title sealed-mark" : "note-title", text: label });
        const button = el("button", { type: "button", class: "note-item" }, title);
        const meta = [n.notebook_path, ...n.tags.map((t) => `#${t}`)].filter(Boolean).join(" · ");
        if (meta) button.append(el("span", { class: "note-meta-line", text: meta }));
        const snippet = (n as { snippet?: string }).snippet;
        if (snippet) button.append(highlighted(snippet));
        if (store.open?.note_id === n.note_id) button.setAttribute("aria-current", "true");
        button.dataset.note = n.note_id;
        button.onclick = () => void this.page.openNote(n.note_id);
        if (!n.in_trash) draggableNote(button, n);
        const item = el("li", {}, button);
        // Words found in an attachment: the file and the page, opened there (a PDF in the browser's own viewer).
        const cited = (n as { found_in?: { attachment_id: string; title: string; page: number } }).found_in;
        if (cited) {
          item.append(
            el("a", {
              class: "note-citation",
              href: `${attachmentUrl(cited.attachment_id)}#page=${cited.page}`,
              target: "_blank",
              rel: "noopener",
              text: `in ${cited.title}, page ${cited.page}`,
            }),
          );
        }
        return item;
      }),
    );
    if (!notes.length) list.append(emptyList(store.source, this.semantic, todosOnly && store.notes.length > 0));
  }

  /// Puts the focus on a note's row, when the list shows it.
  focusNote(id: string) {
    document.querySelector<HTMLElement>(`#notes [data-note="${id}"]`)?.focus();
  }

  /// Opens today's note, made from its template the first time (`[daily]` in config.toml).
  async today() {
    await attempt(async () => {
      const opened = await api.today();
      await this.opened(opened, "today's note");
    });
  }

  /// A new note from a template of the templates notebook: pick the template, then the title.
  async fromTemplate() {
    await attempt(async () => {
      const { notebook, templates } = await api.templates();
      if (!templates.length) {
        status(`No templates yet: a template is a note in the “${notebook}” notebook, with {{date}}, {{title}} or {{time}} where those go.`, true);
        return;
      }
      let template = "";
      const picked = await ask({
        title: "New note from a template",
        label: "Template",
        choices: templates.map((t) => [t.note_id, t.notebook_path === notebook ? t.title : `${t.notebook_path.slice(notebook.length + 1)}/${t.title}`]),
        confirm: "Next",
        submit: async (value) => {
          template = value;
        },
      });
      if (!picked) return;
      const place = this.store.source.kind === "search" ? this.store.beforeSearch : this.store.source;
      const notebookId = place.kind === "notebook" && place.id !== "_root" ? place.id : null;
      await ask({
        title: "New note from a template",
        label: "Title",
        value: templates.find((t) => t.note_id === template)?.title ?? "",
        confirm: "Create",
        submit: async (title) => {
          const opened = await api.fromTemplate(template, title, notebookId);
          await this.opened(opened, `“${opened.note.title}”`);
        },
      });
    });
  }

  private async opened(opened: OpenedNote, what: string) {
    await Promise.all([this.loadNotes(false), this.page.loadTree()]);
    await this.page.openNote(opened.note.note_id);
    const left = opened.warnings.length ? ` From the template, ${opened.warnings.join("; ")}` : "";
    if (opened.created) status(`Made ${what}${opened.note.notebook_path ? ` in ${opened.note.notebook_path}` : ""}.${left}`);
  }

  async newNote() {
    // While a search shows, the note goes where the person was before searching.
    const place = this.store.source.kind === "search" ? this.store.beforeSearch : this.store.source;
    const notebook = place.kind === "notebook" && place.id !== "_root" ? place.id : null;
    await attempt(async () => {
      const note = await api.createNote("Untitled", notebook);
      await Promise.all([this.loadNotes(false), this.page.loadTree()]);
      await this.page.openNote(note.note_id);
      $<HTMLInputElement>("title").select();
      $("title").focus();
    });
  }
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
