// Query blocks and saved views in the preview. A ```dataview or ```query block runs on the server (with `this` the
// note it is in) and shows as what it asks for, or as the view its info string names (```query board):
// - a table, sortable by any column; a cell of a plain field edits that field in its note (double-click or Enter);
// - a board of a grouped query: its groups are columns, its notes cards; dragging a card to another column, or its
//   "Move to" menu, sets the field the query groups by;
// - a list; a task list whose boxes complete the task in its note (a recurring task gets its next occurrence);
// - a calendar of a month, by the query's date (CALENDAR) or the tasks' due dates.
// Every write goes through the API to core; the block runs its query again after it.
import { api, type QueryResult, type QueryRow } from "./api";
import { describeError, el, status } from "./dom";

/// What a block's info string may ask for.
export const VIEWS = ["table", "board", "list", "tasks", "calendar"] as const;
type View = (typeof VIEWS)[number] | "auto";

interface Block {
  element: HTMLElement;
  /// The blocks of the same rendering: a write from one runs them all again (a board's move shows in the table).
  siblings: Block[];
  query: string;
  view: View;
  noteId: string | null;
  /// Whether the preview this block is in is still the one shown.
  current: () => boolean;
  /// What the person chose, kept when the block runs again after a write: the table's sort, the board's columns
  /// (a column emptied by a move stays, so a card can go back).
  kept: { sort?: { column: number; down: boolean }; columns?: string[] };
}

/// The blocks shown, by their element: a change made elsewhere runs them again ([`rerunQueries`]).
const shown = new WeakMap<HTMLElement, Block>();

/// Runs again the query blocks already shown in `root` (a note changed elsewhere: a task completed in a terminal, a
/// field set by an AI client), keeping what the person chose in each.
export async function rerunQueries(root: HTMLElement) {
  const blocks = [...root.querySelectorAll<HTMLElement>(".query-view[data-filled]")].flatMap((e) => shown.get(e) ?? []);
  await Promise.all(blocks.filter((b) => b.current()).map(run));
}

/// Runs every query block of a rendering (not those of embedded notes) and shows its rows.
export async function fillQueries(root: HTMLElement, noteId: string | null, current: () => boolean) {
  const blocks = [...root.querySelectorAll<HTMLElement>(".query-view[data-query]:not([data-filled])")].filter(
    (b) => !b.closest(".embed-body"),
  );
  const siblings: Block[] = [];
  for (const element of blocks) {
    element.dataset.filled = "true";
    const view = (VIEWS as readonly string[]).includes(element.dataset.view ?? "") ? (element.dataset.view as View) : "auto";
    const block: Block = { element, siblings, query: element.dataset.query ?? "", view, noteId, current, kept: {} };
    shown.set(element, block);
    siblings.push(block);
  }
  await Promise.all(siblings.map(run));
}

async function run(block: Block) {
  let result: QueryResult;
  try {
    result = await api.query(block.query, block.noteId);
  } catch (e) {
    if (!block.current()) return;
    show(block, el("p", { class: "query-error", role: "note", text: `This query did not run: ${describeError(e)}` }));
    return;
  }
  if (!block.current()) return;
  const body = render(result, block);
  for (const warning of result.warnings ?? []) body.append(el("p", { class: "hint query-warning", text: warning }));
  show(block, body);
}

/// Puts `content` in the block's place for results, the query's text kept below it (folded).
function show(block: Block, content: HTMLElement) {
  const source = el("details", { class: "query-source" }, el("summary", { text: "Query" }), el("pre", {}, el("code", { text: block.query })));
  block.element.replaceChildren(el("div", { class: "query-result", "data-ready": "true" }, content), source);
}

/// After a write: every block of the rendering runs again; a refusal is said.
async function write(block: Block, work: () => Promise<string | void>) {
  try {
    const said = await work();
    if (said) status(said);
  } catch (e) {
    status(describeError(e), true);
  }
  await Promise.all(block.siblings.map(run));
}

function render(result: QueryResult, block: Block): HTMLElement {
  const view = block.view === "auto" ? ({ table: "table", list: "list", task: "tasks", calendar: "calendar" }[result.kind] ?? "list") : block.view;
  if (!result.rows.length) return el("p", { class: "hint query-empty", text: "No results." });
  switch (view) {
    case "table":
      return result.kind === "table" ? table(result, block) : list(result);
    case "board":
      return board(result, block);
    case "tasks":
      return result.kind === "task" ? tasks(result, block) : list(result);
    case "calendar":
      return calendar(result);
    default:
      return list(result);
  }
}

/// A value as text (what a board's column sets, what a table sorts by).
function text(v: unknown): string {
  if (v === null || v === undefined) return "";
  if (Array.isArray(v)) return v.map(text).join(", ");
  if (typeof v === "object") {
    const o = v as Record<string, unknown>;
    if ("link" in o) return `[[${String(o.link)}]]`;
    if ("duration" in o) return String(o.duration);
    return JSON.stringify(v);
  }
  return String(v);
}

/// A value shown: links open their note, lists are separated by commas, nothing is a faint dash.
function value(v: unknown): Node {
  if (v === null || v === undefined || v === "") return el("span", { class: "query-null", text: "–" });
  if (Array.isArray(v)) {
    const span = el("span");
    v.forEach((item, i) => span.append(...(i ? [", "] : []), value(item)));
    return span;
  }
  if (typeof v === "object" && v && "link" in v) {
    const link = v as { link: string; note_id?: string | null; display?: string | null };
    const label = link.display || link.link;
    return link.note_id
      ? el("a", { href: `quire://note/${link.note_id}`, text: label })
      : el("a", { href: "#", class: "wikilink", "data-note-title": link.link, text: label });
  }
  return document.createTextNode(text(v));
}

function noteLink(row: QueryRow): Node {
  return row.note ? el("a", { href: `quire://note/${row.note.id}`, class: "query-note", text: row.note.title }) : value(row.group);
}

/// Orders values as Dataview does: nothing first, numbers by size, text as people read it (numbers in it by size).
function compare(a: unknown, b: unknown): number {
  const empty = (v: unknown) => v === null || v === undefined || v === "";
  if (empty(a) || empty(b)) return Number(!empty(a)) - Number(!empty(b));
  if (typeof a === "number" && typeof b === "number") return a - b;
  return text(a).localeCompare(text(b), undefined, { numeric: true, sensitivity: "base" });
}

function table(result: QueryResult, block: Block): HTMLElement {
  const first = result.rows[0];
  const hasId = result.headers.length > (first.cells?.length ?? 0);
  const fields = result.fields ?? [];
  let sort = block.kept.sort ?? null;
  const keyOf = (row: QueryRow, column: number) =>
    hasId && column === 0 ? (row.note?.title ?? row.group) : row.cells?.[column - (hasId ? 1 : 0)];
  const head = el("tr");
  const body = el("tbody");
  const fill = () => {
    const rows = [...result.rows];
    if (sort) {
      const { column, down } = sort;
      rows.sort((a, b) => compare(keyOf(a, column), keyOf(b, column)) * (down ? -1 : 1));
    }
    body.replaceChildren(
      ...rows.map((row) => {
        const tr = el("tr");
        if (hasId) tr.append(el("td", {}, noteLink(row), ...(row.children?.length ? [el("span", { class: "query-count", text: ` (${row.children.length})` })] : [])));
        (row.cells ?? []).forEach((v, i) => {
          const td = el("td", {}, value(v));
          const field = fields[i + (hasId ? 1 : 0)];
          if (field && row.note) editable(td, v, field, row.note.id, block);
          tr.append(td);
        });
        return tr;
      }),
    );
  };
  result.headers.forEach((name, column) => {
    const label = hasId && column === 0 ? `${name} (${result.rows.length})` : name;
    const button = el("button", { type: "button", class: "query-sort", text: label, title: `Sort by ${name}` });
    const th = el("th", { scope: "col", "aria-sort": "none" }, button);
    button.onclick = () => {
      sort = sort?.column === column ? { column, down: !sort.down } : { column, down: false };
      block.kept.sort = sort;
      for (const other of head.querySelectorAll("th")) other.setAttribute("aria-sort", "none");
      th.setAttribute("aria-sort", sort.down ? "descending" : "ascending");
      fill();
    };
    if (sort?.column === column) th.setAttribute("aria-sort", sort.down ? "descending" : "ascending");
    head.append(th);
  });
  fill();
  return el("table", { class: "query-table" }, el("thead", {}, head), body);
}

/// A cell that edits its field in its note: double-click or Enter opens a field; Enter or leaving it saves, Escape
/// puts it back.
function editable(td: HTMLElement, v: unknown, field: string, noteId: string, block: Block) {
  td.classList.add("editable");
  td.tabIndex = 0;
  td.title = `Double-click to change ${field} in this note`;
  const open = () => {
    if (td.querySelector("input")) return;
    const input = el("input", { type: "text", "aria-label": field, class: "query-cell-input" });
    input.value = text(v);
    let done = false;
    const finish = (save: boolean) => {
      if (done) return;
      done = true;
      if (!save || input.value === text(v)) {
        td.replaceChildren(value(v));
        td.focus();
        return;
      }
      void write(block, async () => {
        await api.setField(noteId, field, input.value);
      });
    };
    input.onkeydown = (e) => {
      if (e.key === "Enter") finish(true);
      if (e.key === "Escape") finish(false);
    };
    input.onblur = () => finish(true);
    td.replaceChildren(input);
    input.focus();
    input.select();
  };
  td.ondblclick = open;
  td.onkeydown = (e) => {
    if (e.key === "Enter" && e.target === td) open();
  };
}

function board(result: QueryResult, block: Block): HTMLElement {
  const field = result.group_field;
  const grouped = result.rows.every((r) => r.group !== undefined && r.children);
  if (!field || !grouped) {
    const why = "A board shows a query grouped by a field, such as GROUP BY status; this one is shown as a list.";
    return el("div", {}, el("p", { class: "hint", text: why }), list(result));
  }
  // The groups now, and those shown before that a move emptied (kept, so a card can go back).
  const now = result.rows.map((r) => text(r.group));
  const keys = [...new Set([...(block.kept.columns ?? now), ...now])];
  block.kept.columns = keys;
  const members = (key: string) => result.rows.find((r) => text(r.group) === key)?.children ?? [];
  const move = (noteId: string, to: string, title: string) =>
    write(block, async () => {
      await api.setField(noteId, field, to);
      return `Moved “${title}” to ${to || "(none)"}.`;
    });
  const columns = keys.map((key, i) => {
    const cards = members(key).flatMap((member) => {
      if (!member.note) return [];
      const note = member.note;
      const menu = el("select", { "aria-label": `Move “${note.title}” to` }, ...keys.map((k) => el("option", { value: k, text: k || "(none)" })));
      menu.value = keys[i];
      menu.onchange = () => void move(note.id, menu.value, note.title);
      const card = el("li", { class: "board-card", draggable: "true", "data-note": note.id }, el("a", { href: `quire://note/${note.id}`, text: note.title }), menu);
      card.ondragstart = (e) => {
        e.dataTransfer?.setData("application/x-quire-card", JSON.stringify({ id: note.id, title: note.title }));
        if (e.dataTransfer) e.dataTransfer.effectAllowed = "move";
      };
      return [card];
    });
    const column = el(
      "section",
      { class: "board-column", "data-key": keys[i], "aria-label": `${field}: ${keys[i] || "(none)"}` },
      el("h4", { text: `${keys[i] || "(none)"} (${cards.length})` }),
      el("ul", {}, ...cards),
    );
    column.ondragover = (e) => {
      if (!e.dataTransfer?.types.includes("application/x-quire-card")) return;
      e.preventDefault();
      column.classList.add("drop-here");
    };
    column.ondragleave = () => column.classList.remove("drop-here");
    column.ondrop = (e) => {
      e.preventDefault();
      column.classList.remove("drop-here");
      const card = JSON.parse(e.dataTransfer?.getData("application/x-quire-card") || "null") as { id: string; title: string } | null;
      if (card) void move(card.id, keys[i], card.title);
    };
    return column;
  });
  return el("div", { class: "query-board", role: "group", "aria-label": `Board by ${field}` }, ...columns);
}

function list(result: QueryResult): HTMLElement {
  const item = (row: QueryRow): HTMLElement => {
    const li = el("li", {}, noteLink(row));
    if (row.cells?.length) li.append(": ", value(row.cells[0]));
    if (row.task) li.append(": ", row.task.text);
    if (row.children?.length) li.append(el("ul", {}, ...row.children.map(item)));
    return li;
  };
  return el("ul", { class: "query-list" }, ...result.rows.map(item));
}

function tasks(result: QueryResult, block: Block): HTMLElement {
  const task = (row: QueryRow): HTMLElement => {
    const t = row.task!;
    const box = el("input", { type: "checkbox", "aria-label": t.completed ? `Mark “${t.text}” not done` : `Mark “${t.text}” done` });
    box.checked = t.completed;
    box.onchange = () =>
      void write(block, async () => {
        const changed = await api.taskDone(t.note_id, t.line, box.checked, t.text);
        const next = changed.task.next ? ` The next one is above it: ${changed.task.next}` : "";
        return `${changed.task.done ? "Done" : "Open again"}: ${changed.task.text}.${next}`;
      });
    const li = el("li", { class: t.completed ? "query-task done" : "query-task" }, el("label", {}, box, " ", t.text));
    if (t.due && !t.text.includes(t.due)) li.append(el("span", { class: "query-due", text: ` 📅 ${t.due}` }));
    return li;
  };
  // Tasks come under their group, or under their note as Dataview shows them.
  const sections: HTMLElement[] = [];
  let current: { key: string; list: HTMLElement } | null = null;
  const under = (key: string, heading: Node) => {
    if (current?.key !== key) {
      current = { key, list: el("ul", { class: "query-tasks" }) };
      sections.push(el("div", { class: "query-task-group" }, el("h4", {}, heading), current.list));
    }
    return current.list;
  };
  for (const row of result.rows) {
    if (row.task) under(`note:${row.task.note_id}`, noteLink(row)).append(task(row));
    else if (row.children) {
      const group = under(`group:${text(row.group)}`, value(row.group));
      for (const child of row.children) if (child.task) group.append(task(child));
    }
  }
  return el("div", {}, ...sections);
}

const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];

function calendar(result: QueryResult): HTMLElement {
  // Each row's day: a CALENDAR query's date, a task's due date.
  const days = new Map<string, QueryRow[]>();
  for (const row of result.rows.flatMap((r) => (r.children?.length ? r.children : [r]))) {
    const raw = row.task ? row.task.due : row.cells?.[0];
    const day = typeof raw === "string" ? /^\d{4}-\d{2}-\d{2}/.exec(raw)?.[0] : undefined;
    if (day) days.set(day, [...(days.get(day) ?? []), row]);
  }
  if (!days.size) return el("p", { class: "hint query-empty", text: "No dates to show." });
  const today = new Date();
  const todayKey = `${today.getFullYear()}-${String(today.getMonth() + 1).padStart(2, "0")}-${String(today.getDate()).padStart(2, "0")}`;
  const sorted = [...days.keys()].sort();
  const at = sorted.some((d) => d.startsWith(todayKey.slice(0, 7))) ? todayKey : sorted[0];
  let year = Number(at.slice(0, 4));
  let month = Number(at.slice(5, 7)) - 1;
  const title = el("h4", { class: "calendar-title" });
  const grid = el("table", { class: "calendar-grid" });
  const draw = () => {
    title.textContent = `${MONTHS[month]} ${year}`;
    const lead = (new Date(year, month, 1).getDay() + 6) % 7; // Monday first
    const length = new Date(year, month + 1, 0).getDate();
    const head = el("tr", {}, ...["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"].map((d) => el("th", { scope: "col", class: "calendar-head", text: d })));
    const weeks: HTMLElement[] = [];
    let week = el("tr");
    for (let i = 0; i < lead; i++) week.append(el("td", { class: "calendar-day blank" }));
    for (let d = 1; d <= length; d++) {
      const key = `${year}-${String(month + 1).padStart(2, "0")}-${String(d).padStart(2, "0")}`;
      const cell = el("td", { class: key === todayKey ? "calendar-day today" : "calendar-day", "data-day": key }, el("span", { class: "calendar-date", text: String(d) }));
      for (const row of days.get(key) ?? []) {
        cell.append(el("div", { class: "calendar-item" }, row.task ? el("a", { href: `quire://note/${row.task.note_id}`, text: row.task.text }) : noteLink(row)));
      }
      week.append(cell);
      if (week.children.length === 7) {
        weeks.push(week);
        week = el("tr");
      }
    }
    if (week.children.length) weeks.push(week);
    grid.replaceChildren(el("caption", { class: "sr-only", text: `${MONTHS[month]} ${year}` }), el("thead", {}, head), el("tbody", {}, ...weeks));
  };
  const step = (by: number) => {
    month += by;
    if (month < 0) [month, year] = [11, year - 1];
    if (month > 11) [month, year] = [0, year + 1];
    draw();
  };
  const previous = el("button", { type: "button", "aria-label": "Previous month", text: "‹" });
  const next = el("button", { type: "button", "aria-label": "Next month", text: "›" });
  previous.onclick = () => step(-1);
  next.onclick = () => step(1);
  draw();
  return el("div", { class: "query-calendar" }, el("div", { class: "calendar-nav" }, previous, title, next), grid);
}
