// Changes made elsewhere (the quire command, an AI client, another tab) shown in this page as they happen: the tree,
// the tags, the list and the open note follow the server's change events.
import { changeEvents, type ChangeEvent } from "./api";
import type { App } from "./main";

/// Changes that arrive close together are shown at once, after this pause.
const SETTLE_MS = 250;

export function followChanges(app: App): AbortController {
  const stop = new AbortController();
  let pending: ChangeEvent[] = [];
  let timer: number | undefined;
  void (async () => {
    for await (const changes of changeEvents(stop.signal)) {
      pending.push(...changes);
      window.clearTimeout(timer);
      timer = window.setTimeout(() => {
        const batch = pending;
        pending = [];
        void app.changedElsewhere(batch);
      }, SETTLE_MS);
    }
  })();
  return stop;
}
