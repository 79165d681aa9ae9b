// Sync with the other devices, as the top bar shows it: synced (and when), syncing, offline or a problem (the
// reason in its tooltip), and how many places another device changed at the same time as this one wait for the
// person's choice. Clicking it syncs now, and opens the first note with such a place. Changes that arrive from another
// device show like any other change made elsewhere (see live.ts).
import { api, type SyncView } from "./api";
import { $ } from "./dom";
import type { SyncConflictView } from "./generated";

/// How often the bar asks how sync stands.
const POLL_MS = 3000;

function label(view: SyncView): string {
  switch (view.phase) {
    case "synced": {
      const at = view.last_sync ? new Date(view.last_sync).toLocaleTimeString([], { hour: "numeric", minute: "2-digit" }) : "";
      // A reason while synced: another device's changes wait for a file that is not on the target.
      const waiting = view.reason ? " · a device waits" : "";
      return (at ? `Synced ${at}` : "Synced") + waiting;
    }
    case "syncing":
      return view.waiting > 0 ? `Syncing ${view.waiting} change${view.waiting === 1 ? "" : "s"}…` : "Syncing…";
    case "offline":
      return "Sync offline";
    case "error":
      return "Sync problem";
    default:
      return "";
  }
}

export function followSync(openNote: (id: string) => Promise<void>) {
  const button = $("sync-state") as HTMLButtonElement;
  let conflicts: SyncConflictView[] = [];
  const show = async (view: SyncView) => {
    // The places waiting for a choice, in every note (none to ask about while sync is off).
    conflicts = view.phase === "off" ? [] : await api.syncConflicts(null).catch(() => conflicts);
    // A choice made elsewhere (`quire sync resolve`, another tab) may leave the text as it was: the open note's
    // panel compares what it shows with this.
    document.dispatchEvent(new CustomEvent("quire:conflicts", { detail: conflicts }));
    const notes = new Set(conflicts.map((c) => c.note_id)).size;
    button.hidden = view.phase === "off";
    const count = conflicts.length;
    button.textContent = label(view) + (count > 0 ? ` · ${count} conflict${count === 1 ? "" : "s"}` : "");
    button.dataset.phase = view.phase;
    button.dataset.conflicts = String(count);
    const waiting =
      count > 0
        ? `${count} place${count === 1 ? "" : "s"} in ${notes} note${notes === 1 ? "" : "s"} changed here and on another device at the same time: both versions are in the note until you choose. Click to open the first and sync now.`
        : "Click to sync now";
    const lines = [view.reason ?? "", view.target ? `Syncs through ${view.target}` : "", waiting];
    button.title = lines.filter((line) => line).join("\n");
  };
  const refresh = async () => {
    try {
      await show(await api.sync());
    } catch {
      // The server is away: the page says so where it reports errors.
    }
  };
  button.onclick = async () => {
    const first = conflicts[0];
    if (first) void openNote(first.note_id);
    try {
      await show(await api.syncNow());
    } catch {
      // As above.
    }
    window.setTimeout(() => void refresh(), 1000);
  };
  void refresh();
  window.setInterval(() => void refresh(), POLL_MS);
  // Sync started or stopped in Settings: shown at once.
  document.addEventListener("quire:sync", () => void refresh());
}
