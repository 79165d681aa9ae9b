// The page's shared state: the notebooks, where the note list comes from and the notes it shows, and the open note.
// The panes and the sidebar subscribe to the changes they show; main.ts connects them at start-up.
import type { Note, NoteSummary, NotebookEntry } from "./api";

/// Where the note list comes from.
export type Source =
  | { kind: "notebook"; id: string; title: string }
  | { kind: "all" }
  | { kind: "tag"; tag: string }
  | { kind: "trash" }
  | { kind: "search"; query: string; semantic: boolean };

/// The notebook tree's top level, where the list starts.
export const topLevel = (): Source => ({ kind: "notebook", id: "_root", title: "Top level" });

/// What subscribers are told about.
export type Topic =
  /// The notebooks were loaded again.
  | "notebooks"
  /// What shows of the open note changed: its title, tags, lock or trash state.
  | "note"
  /// Another note, or none, is open now.
  | "focus"
  /// The open note is about to be left for another one.
  | "leaving"
  /// The proposed edits in the editor changed (some arrived, were accepted or rejected, or went stale).
  | "proposals"
  /// This page changed notes outside the editor (an undo, an assistant turn): whatever shows them loads them again.
  | "changed";

export class Store {
  notebooks: NotebookEntry[] = [];
  source: Source = topLevel();
  /// What the list showed before a search: clearing the search goes back there, and a new note made meanwhile goes
  /// into that notebook.
  beforeSearch: Source = topLevel();
  /// The notes the list holds (before the to-dos filter).
  notes: NoteSummary[] = [];
  /// The note in the editor, as last saved (or loaded).
  open: Note | null = null;
  private readonly listeners = new Map<Topic, (() => void)[]>();

  /// Calls `listener` on each `notify(topic)`, after the listeners that subscribed before it.
  subscribe(topic: Topic, listener: () => void) {
    const list = this.listeners.get(topic) ?? [];
    list.push(listener);
    this.listeners.set(topic, list);
  }

  notify(topic: Topic) {
    for (const listener of this.listeners.get(topic) ?? []) listener();
  }

  /// Replaces the notebooks and tells the subscribers.
  setNotebooks(notebooks: NotebookEntry[]) {
    this.notebooks = notebooks;
    this.notify("notebooks");
  }

  /// Whether the list shows `s` (a search counts as the same whatever it looks for).
  sameSource(s: Source): boolean {
    const c = this.source;
    if (c.kind !== s.kind) return false;
    if (c.kind === "notebook" && s.kind === "notebook") return c.id === s.id;
    if (c.kind === "tag" && s.kind === "tag") return c.tag === s.tag;
    return true;
  }
}
