// What an empty list says (the trash, a filter, a notebook, a search), and the welcome on a workspace with no notes.
import { api } from "./api";
import { $, el } from "./dom";
import type { SemanticModel } from "./semantic";
import type { Source, Store } from "./store";
import { deviceIs } from "./offline";

/// What the welcome's buttons do.
export interface WelcomeActions {
  newNote(): void;
  newNotebook(): void;
}

/// The line an empty note list shows for `s`; `filtered`: notes are there, but none is a to-do.
export function emptyList(s: Source, semantic: SemanticModel, filtered: boolean): HTMLElement {
  const li = (text: string) => el("li", { class: "hint empty-state", text });
  if (filtered) return li("None of these notes is a to-do. Tick “to-do” on a note to make it one, or untick “to-dos only” to see them all.");
  switch (s.kind) {
    case "trash":
      return li("The trash is empty. A note you move to the trash waits here until you restore it or delete it for good.");
    case "tag":
      return li(`No note carries #${s.tag} any more.`);
    case "all":
      return li("There are no notes yet. Create one with “+ Note”.");
    case "notebook":
      // A paired device that only reads creates nothing: it is told where the notes are.
      if (deviceIs("read-only")) {
        return li(s.id === "_root" ? "No notes at the top level: pick a notebook." : `“${s.title}” has no notes.`);
      }
      return li(
        s.id === "_root"
          ? "No notes at the top level. Create one with “+ Note”, or pick a notebook."
          : `“${s.title}” has no notes yet. Create one with “+ Note”, or drag a note here from another list.`,
      );
    case "search":
      return li(
        s.semantic
          ? semantic.hasModel()
            ? "Nothing found by meaning."
            : "Nothing found by meaning. Without a sentence model, quire matches shared words only: install one above."
          : "Nothing found. Try fewer words, or search by meaning.",
      );
  }
}

/// The note pane with no note: a welcome on a workspace with no notes at all.
export async function showEmpty(store: Store, actions: WelcomeActions) {
  let firstRun = false;
  try {
    firstRun = store.notebooks.length === 0 && (await api.allNotes()).total === 0;
  } catch {
    // The welcome is extra: without it the pane says how to start.
  }
  showEmptyPane(actions, firstRun);
}

/// The note pane with no note open: a welcome when the workspace has no notes at all, else how to start.
function showEmptyPane(actions: WelcomeActions, firstRun: boolean) {
  const box = $("empty");
  if (!firstRun) {
    box.replaceChildren(el("p", { class: "hint", text: "Pick a note in the list, or create one with “+ Note”. Press ? for the keyboard shortcuts." }));
    return;
  }
  const note = el("button", { type: "button", class: "primary", text: "Write your first note" });
  note.onclick = () => actions.newNote();
  const notebook = el("button", { type: "button", text: "Make a notebook" });
  notebook.onclick = () => actions.newNotebook();
  box.replaceChildren(
    el(
      "div",
      { class: "welcome" },
      el("h2", { text: "Welcome to quire" }),
      el("p", { text: "Your notes stay on this computer, as Markdown. Notebooks hold them; tags and [[links]] tie them together." }),
      el(
        "ul",
        {},
        el("li", { text: "Write a note: it saves itself as you type, and History keeps its earlier versions." }),
        el("li", { text: "Link notes with [[Another note]]; a link to a note that does not exist yet offers to create it." }),
        el("li", { text: "Ask the assistant on the right about the open note, or about everything. It never sees a protected note." }),
        el("li", { text: "Notes made with the quire command or an AI client show up here by themselves." }),
      ),
      el("div", { class: "welcome-actions" }, note, notebook),
      el("p", { class: "hint", text: "Press ? for the keyboard shortcuts." }),
    ),
  );
}
