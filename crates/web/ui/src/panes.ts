// The page's panes on a phone (one at a time, switched with the bar at the bottom), and the keyboard shortcuts with
// their `?` help dialog.
import { $, el } from "./dom";

export type Pane = "notebooks" | "list" | "note" | "assistant" | "search";

/// The bottom bar of a phone. "Search" shows the list with the search box in focus; the assistant opens as a sheet
/// over the note, so the note stays in view.
const PANES: [Pane, string][] = [
  ["notebooks", "Notebooks"],
  ["list", "Notes"],
  ["note", "Note"],
  ["assistant", "Assistant"],
  ["search", "Search"],
];

/// Width at and below which one pane shows at a time (it matches app.css's phone rules).
const PHONE = "(max-width: 700px)";

export class Panes {
  current: Pane = "list";

  constructor() {
    const bar = $("pane-bar");
    for (const [pane, label] of PANES) {
      const b = el("button", { type: "button", id: `pane-${pane}`, text: label, "aria-pressed": "false" });
      b.onclick = () => this.show(pane, true);
      bar.append(b);
    }
    this.show("list");
  }

  phone(): boolean {
    return window.matchMedia(PHONE).matches;
  }

  /// Shows a pane (on a phone; on a wider screen all of them show anyway); `focus` moves the focus into it.
  show(pane: Pane, focus = false) {
    this.current = pane;
    document.body.dataset.pane = pane;
    for (const [p] of PANES) $(`pane-${p}`).setAttribute("aria-pressed", String(p === pane));
    if (!this.phone()) return;
    window.scrollTo(0, 0);
    if (focus) {
      const target =
        pane === "list" ? $("list-title") : pane === "note" ? $("note-pane") : pane === "notebooks" ? $("tree-pane") : pane === "search" ? $("search") : $("message");
      if (target.tabIndex < 0 && !target.hasAttribute("tabindex")) target.tabIndex = -1;
      target.focus({ preventScroll: true });
    }
  }
}

/// What the shortcuts do.
export interface ShortcutActions {
  newNote: () => void;
  search: () => void;
  assistant: () => void;
  editor: () => void;
}

/// The key alone (outside a field), the key with Alt+Shift (anywhere), what it is, what it does.
const SHORTCUTS: [string, string, string, keyof ShortcutActions | "help"][] = [
  ["n", "n", "New note", "newNote"],
  ["/", "/", "Search", "search"],
  ["a", "a", "Ask the assistant", "assistant"],
  ["e", "e", "Edit the open note", "editor"],
  ["?", "h", "This list", "help"],
];

/// Whether the key goes to a field (typing) rather than to the page.
function typing(target: EventTarget | null): boolean {
  const t = target as HTMLElement | null;
  return !!t && (t.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(t.tagName));
}

/// Single keys when the focus is not in a field; Alt+Shift and the key from anywhere (in the editor too).
export function wireShortcuts(actions: ShortcutActions) {
  document.addEventListener("keydown", (e) => {
    if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.isComposing || document.querySelector("dialog[open]")) return;
    const fromAnywhere = e.altKey && e.shiftKey;
    if (!fromAnywhere && (e.altKey || typing(e.target))) return;
    const key = fromAnywhere ? (e.code === "Slash" ? "/" : e.code.replace(/^Key/, "").toLowerCase()) : e.key.toLowerCase();
    const found = SHORTCUTS.find(([alone, withAlt]) => (fromAnywhere ? withAlt : alone) === key);
    if (!found) return;
    e.preventDefault();
    const action = found[3];
    if (action === "help") showHelp();
    else actions[action]();
  });
}

export function showHelp() {
  const close = el("button", { type: "button", text: "Close" });
  const rows = SHORTCUTS.map(([alone, withAlt, what]) =>
    el("tr", {}, el("td", {}, el("kbd", { text: alone })), el("td", {}, el("kbd", { text: `Alt+Shift+${withAlt.toUpperCase()}` })), el("td", { text: what })),
  );
  const dialog = el(
    "dialog",
    { class: "app-dialog help-dialog", "aria-label": "Keyboard shortcuts" },
    el("h2", { text: "Keyboard shortcuts" }),
    el("table", {}, el("thead", {}, el("tr", {}, el("th", { text: "Key" }), el("th", { text: "In a field" }), el("th", { text: "Does" }))), el("tbody", {}, ...rows)),
    el("ul", { class: "help-more" },
      el("li", { text: "In the notebook tree: the up and down arrows move between notebooks; the right arrow reaches a notebook's rename, move and delete buttons; Esc comes back." }),
      el("li", { text: "In the text: Esc then Tab moves on; Alt+N goes to the next proposed edit, Alt+A accepts it, Alt+R rejects it." }),
      el("li", { text: "Enter in the title goes on to the text; Enter in the assistant box sends, Shift+Enter starts a new line." }),
    ),
    el("div", { class: "dialog-buttons" }, close),
  );
  const done = () => {
    dialog.close();
    dialog.remove();
  };
  close.onclick = done;
  dialog.addEventListener("close", () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
  close.focus();
}
