// The notebook pane: All notes, the notebooks with their counts (sub-notebooks' notes included), the trash and the
// tags; making, renaming, moving and deleting notebooks; a note dragged from the list onto a notebook moves there; one
// Tab stop per row, its tools reached with the arrow keys.
import { api, type Note, type NoteSummary, type NotebookEntry } from "./api";
import { ask, confirmDialog } from "./dialog";
import { $, attempt, describeError, el, status } from "./dom";
import { isSealed } from "./lock";
import type { Pane } from "./panes";
import { topLevel, type Source, type Store } from "./store";

/// The drag data type of a note dragged from the list.
const NOTE_TYPE = "application/x-quire-note";

/// What the tree asks of the other panes.
export interface TreeNeeds {
  /// Shows where the note list comes from.
  show(source: Source): Promise<void>;
  /// Loads the note list again.
  loadNotes(): Promise<void>;
  /// Shows a pane (on a phone).
  showPane(pane: Pane): void;
  /// Saves the open note's typing first.
  saveNow(): Promise<void>;
  /// Shows the open note as it is after a change (a move).
  showState(note: Note): void;
}

/// How many notes a notebook holds with its sub-notebooks' (the list is depth first, so they follow it).
export function totalCount(notebooks: NotebookEntry[], nb: NotebookEntry): number {
  return notebooks.filter((n) => n.notebook_id === nb.notebook_id || n.path.startsWith(`${nb.path}/`)).reduce((sum, n) => sum + n.note_count, 0);
}

export class NotebookTree {
  constructor(
    private readonly store: Store,
    private readonly page: TreeNeeds,
  ) {
    store.subscribe("notebooks", () => this.render());
    $("new-notebook").onclick = () => void this.newNotebook(null);
    wireTreeKeys();
  }

  async load() {
    try {
      this.store.setNotebooks((await api.notebooks()).notebooks);
    } catch (e) {
      status(`Notebooks could not be loaded: ${describeError(e)}`, true);
    }
  }

  async loadTags() {
    try {
      const { tags } = await api.tags();
      $("tag-list").replaceChildren(
        ...tags.filter((t) => t.note_count > 0).map((t) => {
          const b = el("button", { type: "button", class: "tree-item", text: `#${t.name} (${t.note_count})` });
          b.onclick = () => void this.page.show({ kind: "tag", tag: t.name });
          return el("li", {}, b);
        }),
      );
    } catch (e) {
      status(`Tags could not be loaded: ${describeError(e)}`, true);
    }
  }

  render() {
    const notebooks = this.store.notebooks;
    const tree = $("tree");
    // A redraw (a live update made elsewhere) keeps the keyboard where it was, on the same row or the same tool of it:
    // replacing the focused button would drop the focus to the page, and the next Tab would start over at the top.
    const active = document.activeElement instanceof HTMLElement && tree.contains(document.activeElement) ? document.activeElement : null;
    const keep = active && { row: active.closest("li")?.dataset.key, label: active.getAttribute("aria-label") };
    tree.replaceChildren();
    const item = (label: string, source: Source, depth: number, entry?: NotebookEntry, hint?: string) => {
      const button = el("button", { type: "button", class: "tree-item", text: label });
      button.style.paddingLeft = `${0.5 + depth}rem`;
      button.onclick = () => {
        void this.page.show(source);
        this.page.showPane("list");
      };
      if (hint) button.title = hint;
      const li = el("li", {}, button);
      li.dataset.key = source.kind === "notebook" ? `notebook:${source.id}` : source.kind;
      if (this.store.sameSource(source)) button.setAttribute("aria-current", "true");
      if (source.kind === "notebook") this.dropTarget(li, source.id, source.title);
      if (entry) {
        const tools = el("span", { class: "tree-tools" });
        const action = (text: string, name: string, run: () => void) => {
          const b = el("button", { type: "button", class: "icon", text, "aria-label": `${name} ${entry.title}`, title: name, tabindex: "-1" });
          b.onclick = run;
          tools.append(b);
        };
        action("+", "New notebook inside", () => void this.newNotebook(entry.notebook_id));
        action("✎", "Rename", () => void this.renameNotebook(entry));
        action("⇄", "Move", () => void this.moveNotebook(entry));
        action("×", "Delete", () => void this.deleteNotebook(entry));
        button.setAttribute("aria-keyshortcuts", "ArrowRight");
        li.append(tools);
      }
      tree.append(li);
      return button;
    };
    item("All notes", { kind: "all" }, 0, undefined, "Every note in every notebook, newest first");
    item("Top level", topLevel(), 0);
    for (const nb of notebooks) {
      const total = totalCount(notebooks, nb);
      const inside = total - nb.note_count;
      const label = `${nb.icon ? `${nb.icon} ` : ""}${nb.title} (${total})${nb.is_protected ? (isSealed(nb) ? " · sealed" : " · protected") : ""}`;
      const hint = inside
        ? `${nb.note_count} note${nb.note_count === 1 ? "" : "s"} here and ${inside} in the notebooks inside it. Right arrow: rename, move, delete.`
        : "Right arrow: rename, move, delete.";
      const button = item(label, { kind: "notebook", id: nb.notebook_id, title: nb.path }, nb.depth + 1, nb, hint);
      if (isSealed(nb)) button.classList.add("sealed-mark");
    }
    item("Trash", { kind: "trash" }, 0);
    if (keep?.row) {
      const row = [...tree.querySelectorAll<HTMLElement>("li")].find((li) => li.dataset.key === keep.row);
      const tool = keep.label ? [...(row?.querySelectorAll<HTMLElement>(".tree-tools button") ?? [])].find((b) => b.getAttribute("aria-label") === keep.label) : undefined;
      (tool ?? row?.querySelector<HTMLElement>(".tree-item"))?.focus({ preventScroll: true });
    }
  }

  // ---- notebooks ----

  async newNotebook(parent: string | null) {
    const inside = parent ? this.store.notebooks.find((n) => n.notebook_id === parent) : undefined;
    await ask({
      title: "New notebook",
      label: inside ? `Name of the new notebook inside “${inside.title}”` : "Name of the new notebook",
      confirm: "Create",
      empty: "Give the notebook a name.",
      submit: async (title) => {
        await api.createNotebook(title, parent);
        status(`Created notebook “${title}”.`);
        await this.load();
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
        await this.load();
      },
    });
  }

  async moveNotebook(nb: NotebookEntry) {
    // Not into itself or one of its own notebooks.
    const choices: [string, string][] = [
      ["_root", "Top level"],
      ...this.store.notebooks
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
        await this.load();
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
    await attempt(async () => {
      await api.deleteNotebook(nb.notebook_id);
      status(`Deleted notebook “${nb.title}”.`);
      const store = this.store;
      if (store.source.kind === "notebook" && store.source.id === nb.notebook_id) store.source = topLevel();
      await Promise.all([this.load(), this.page.show(store.source)]);
    });
  }

  // ---- notes moved into a notebook ----

  private dropTarget(li: HTMLElement, notebookId: string, path: string) {
    const carries = (e: DragEvent) => e.dataTransfer?.types.includes(NOTE_TYPE) ?? false;
    li.addEventListener("dragover", (e) => {
      if (!carries(e)) return;
      e.preventDefault();
      if (e.dataTransfer) e.dataTransfer.dropEffect = "move";
      li.classList.add("drop-target");
    });
    li.addEventListener("dragleave", () => li.classList.remove("drop-target"));
    li.addEventListener("drop", (e) => {
      li.classList.remove("drop-target");
      const data = e.dataTransfer?.getData(NOTE_TYPE);
      if (!data) return;
      e.preventDefault();
      const dragged = JSON.parse(data) as { id: string; title: string; from: string };
      if (dragged.from === notebookId) return;
      void this.moveNote(dragged.id, dragged.title, notebookId, path);
    });
  }

  /// Moves a note into a notebook and shows it: the list, the tree's counts and the open note follow.
  async moveNote(id: string, title: string, notebookId: string, path: string) {
    if (this.store.open?.note_id === id) await this.page.saveNow();
    try {
      const moved: Note = await api.moveNote(id, notebookId);
      status(`Moved “${title}” to ${notebookId === "_root" ? "the top level" : `“${path}”`}.`);
      if (this.store.open?.note_id === id) this.page.showState(moved);
      await Promise.all([this.load(), this.page.loadNotes()]);
    } catch (e) {
      status(`“${title}” was not moved: ${describeError(e)}`, true);
    }
  }

  /// "Move…" on the open note: a dialog with the notebooks to pick from.
  async moveOpenNote() {
    const note = this.store.open;
    if (!note) return;
    const choices: [string, string][] = [["_root", "Top level"], ...this.store.notebooks.map((n): [string, string] => [n.notebook_id, n.path])];
    await ask({
      title: "Move note",
      label: `Move “${note.title}” to the notebook`,
      choices,
      value: note.notebook_id,
      confirm: "Move",
      submit: async (notebookId) => {
        if (notebookId === note.notebook_id) return;
        await this.page.saveNow();
        const moved = await api.moveNote(note.note_id, notebookId);
        const path = choices.find(([id]) => id === notebookId)?.[1] ?? "";
        status(`Moved “${note.title}” to ${notebookId === "_root" ? "the top level" : `“${path}”`}.`);
        if (this.store.open?.note_id === note.note_id) this.page.showState(moved);
        await Promise.all([this.load(), this.page.loadNotes()]);
      },
    });
  }
}

/// Arrow keys in the tree: up and down between rows, right into a notebook's tools, left and Esc back to its row.
function wireTreeKeys() {
  $("tree").addEventListener("keydown", (e) => {
    const target = e.target as HTMLElement;
    const row = target.closest("li");
    if (!row) return;
    const rows = [...$("tree").querySelectorAll<HTMLElement>(".tree-item")];
    const main = row.querySelector<HTMLElement>(".tree-item");
    const tools = [...row.querySelectorAll<HTMLElement>(".tree-tools button")];
    const inTools = tools.indexOf(target);
    let next: HTMLElement | undefined;
    if (e.key === "ArrowDown" || e.key === "ArrowUp") next = rows[rows.indexOf(main as HTMLElement) + (e.key === "ArrowDown" ? 1 : -1)];
    else if (e.key === "ArrowRight") next = inTools < 0 ? tools[0] : tools[inTools + 1];
    else if (e.key === "ArrowLeft") next = inTools > 0 ? tools[inTools - 1] : inTools === 0 ? (main ?? undefined) : undefined;
    else if (e.key === "Escape" && inTools >= 0) next = main ?? undefined;
    if (!next) return;
    e.preventDefault();
    next.focus();
  });
}

/// A note of the list can be dragged onto a notebook of the tree.
export function draggableNote(button: HTMLElement, note: NoteSummary) {
  button.draggable = true;
  button.addEventListener("dragstart", (e) => {
    e.dataTransfer?.setData(NOTE_TYPE, JSON.stringify({ id: note.note_id, title: note.title, from: note.notebook_id }));
    e.dataTransfer?.setData("text/plain", note.title);
    if (e.dataTransfer) e.dataTransfer.effectAllowed = "move";
  });
}
