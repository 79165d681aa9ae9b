// The notebook tree: All notes, the notebooks with their counts (sub-notebooks' notes included), the trash; a note
// dragged from the list onto a notebook moves there; one Tab stop per row, its tools reached with the arrow keys.
import { api, type Note, type NoteSummary, type NotebookEntry } from "./api";
import { ask } from "./dialog";
import { $, describeError, el, status } from "./dom";
import type { App, Source } from "./main";

/// The drag data type of a note dragged from the list.
const NOTE_TYPE = "application/x-quire-note";

/// How many notes a notebook holds with its sub-notebooks' (the list is depth first, so they follow it).
export function totalCount(notebooks: NotebookEntry[], nb: NotebookEntry): number {
  return notebooks.filter((n) => n.notebook_id === nb.notebook_id || n.path.startsWith(`${nb.path}/`)).reduce((sum, n) => sum + n.note_count, 0);
}

export function renderTree(app: App) {
  const tree = $("tree");
  tree.replaceChildren();
  const item = (label: string, source: Source, depth: number, entry?: NotebookEntry, hint?: string) => {
    const button = el("button", { type: "button", class: "tree-item", text: label });
    button.style.paddingLeft = `${0.5 + depth}rem`;
    button.onclick = () => {
      void app.show(source);
      app.panes.show("list");
    };
    if (hint) button.title = hint;
    const li = el("li", {}, button);
    if (app.sameSource(source)) button.setAttribute("aria-current", "true");
    if (source.kind === "notebook") dropTarget(app, li, source.id, source.title);
    if (entry) {
      const tools = el("span", { class: "tree-tools" });
      const action = (text: string, name: string, run: () => void) => {
        const b = el("button", { type: "button", class: "icon", text, "aria-label": `${name} ${entry.title}`, title: name, tabindex: "-1" });
        b.onclick = run;
        tools.append(b);
      };
      action("+", "New notebook inside", () => void app.newNotebook(entry.notebook_id));
      action("✎", "Rename", () => void app.renameNotebook(entry));
      action("⇄", "Move", () => void app.moveNotebook(entry));
      action("×", "Delete", () => void app.deleteNotebook(entry));
      button.setAttribute("aria-keyshortcuts", "ArrowRight");
      li.append(tools);
    }
    tree.append(li);
  };
  item("All notes", { kind: "all" }, 0, undefined, "Every note in every notebook, newest first");
  item("Top level", { kind: "notebook", id: "_root", title: "Top level" }, 0);
  for (const nb of app.notebooks) {
    const total = totalCount(app.notebooks, nb);
    const inside = total - nb.note_count;
    const label = `${nb.icon ? `${nb.icon} ` : ""}${nb.title} (${total})${nb.is_protected ? " · protected" : ""}`;
    const hint = inside
      ? `${nb.note_count} note${nb.note_count === 1 ? "" : "s"} here and ${inside} in the notebooks inside it. Right arrow: rename, move, delete.`
      : "Right arrow: rename, move, delete.";
    item(label, { kind: "notebook", id: nb.notebook_id, title: nb.path }, nb.depth + 1, nb, hint);
  }
  item("Trash", { kind: "trash" }, 0);
}

/// Arrow keys in the tree: up and down between rows, right into a notebook's tools, left and Esc back to its row.
export function wireTreeKeys() {
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

function dropTarget(app: App, li: HTMLElement, notebookId: string, path: string) {
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
    void moveNote(app, dragged.id, dragged.title, notebookId, path);
  });
}

/// Moves a note into a notebook and shows it: the list, the tree's counts and the open note follow.
export async function moveNote(app: App, id: string, title: string, notebookId: string, path: string) {
  if (app.open?.note_id === id) await app.saveNow();
  try {
    const moved: Note = await api.moveNote(id, notebookId);
    status(`Moved “${title}” to ${notebookId === "_root" ? "the top level" : `“${path}”`}.`);
    if (app.open?.note_id === id) app.showState(moved);
    await Promise.all([app.loadTree(), app.loadNotes(false)]);
  } catch (e) {
    status(`“${title}” was not moved: ${describeError(e)}`, true);
  }
}

/// "Move…" on the open note: a dialog with the notebooks to pick from.
export async function moveOpenNote(app: App) {
  const note = app.open;
  if (!note) return;
  const choices: [string, string][] = [["_root", "Top level"], ...app.notebooks.map((n): [string, string] => [n.notebook_id, n.path])];
  await ask({
    title: "Move note",
    label: `Move “${note.title}” to the notebook`,
    choices,
    value: note.notebook_id,
    confirm: "Move",
    submit: async (notebookId) => {
      if (notebookId === note.notebook_id) return;
      await app.saveNow();
      const moved = await api.moveNote(note.note_id, notebookId);
      const path = choices.find(([id]) => id === notebookId)?.[1] ?? "";
      status(`Moved “${note.title}” to ${notebookId === "_root" ? "the top level" : `“${path}”`}.`);
      if (app.open?.note_id === note.note_id) app.showState(moved);
      await Promise.all([app.loadTree(), app.loadNotes(false)]);
    },
  });
}
