// Changes made elsewhere (the quire command, an AI client, another tab) shown in this page as they happen: the tree,
// the tags, the list, the open note, its query views and the screen shown follow the server's news; the Review button and screen
// follow staged writes and decisions made anywhere.
import { changeEvents, type ChangeEvent } from "./api";
import { $ } from "./dom";
import type { Store } from "./store";

/// Changes that arrive close together are shown at once, after this pause.
const SETTLE_MS = 250;

/// What a change elsewhere reloads.
export interface LiveNeeds {
  /// The note list again, drawn only when it changed; one of its rows focused.
  refreshList(): Promise<void>;
  focusInList(id: string): void;
  loadTree(): Promise<void>;
  loadTags(): Promise<void>;
  /// The save in flight, then the open note's newer version (unless that would lose typing).
  saving(): Promise<void>;
  refreshOpen(): Promise<void>;
  /// The note pane with no note.
  showEmpty(): Promise<void>;
  /// Review sets were staged to, decided or dropped: the count and the Review screen, if shown, again.
  reviewsChanged(setIds: number[]): Promise<void>;
  /// Something was written: the Recent changes screen, if shown, again.
  changesWritten(): Promise<void>;
  /// A note changed that is not the open one: the open note's query blocks (views, tasks) again.
  viewsChanged(): void;
}

export function followChanges(store: Store, page: LiveNeeds): AbortController {
  const stop = new AbortController();
  let pending: ChangeEvent[] = [];
  let timer: number | undefined;
  void (async () => {
    for await (const { changes, reviews } of changeEvents(stop.signal)) {
      // Review news is shown at once: it changes no pane a person is typing in.
      if (reviews.length) void page.reviewsChanged(reviews);
      if (!changes.length) continue;
      pending.push(...changes);
      window.clearTimeout(timer);
      timer = window.setTimeout(() => {
        const batch = pending;
        pending = [];
        void changedElsewhere(store, page, batch);
      }, SETTLE_MS);
    }
  })();
  return stop;
}

/// Somebody changed the workspace (the quire command, an AI client, the assistant, this page): the tree, the tags,
/// the list and the open note show it.
async function changedElsewhere(store: Store, page: LiveNeeds, changes: ChangeEvent[]) {
  const focused = (document.activeElement as HTMLElement | null)?.dataset.note;
  const before = JSON.stringify(store.notes);
  const refreshList = store.source.kind !== "search" ? page.refreshList() : Promise.resolve();
  await Promise.all([page.loadTree(), page.loadTags(), refreshList]);
  if (focused && JSON.stringify(store.notes) !== before) page.focusInList(focused);
  if (store.open && changes.some((c) => c.id === store.open?.note_id || c.entity === "attachment" || c.entity === "attribute")) {
    await page.saving();
    await page.refreshOpen();
  }
  // Any note's change may change what the open note's views show (the open note's own redraws them above).
  if (store.open) page.viewsChanged();
  if (!$("empty").hidden) void page.showEmpty();
  void page.changesWritten();
}
