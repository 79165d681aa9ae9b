// Sync with the other devices, as the top bar shows it: synced (and when), syncing, offline or a problem (the
// reason in its tooltip). Clicking it syncs now. Changes that arrive from another device show like any other change
// made elsewhere (see live.ts).
import { api, type SyncView } from "./api";
import { $ } from "./dom";

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

export function followSync() {
  const button = $("sync-state") as HTMLButtonElement;
  const show = (view: SyncView) => {
    button.hidden = view.phase === "off";
    button.textContent = label(view);
    button.dataset.phase = view.phase;
    const lines = [view.reason ?? "", view.target ? `Syncs through ${view.target}` : "", "Click to sync now"];
    button.title = lines.filter((line) => line).join("\n");
  };
  const refresh = async () => {
    try {
      show(await api.sync());
    } catch {
      // The server is away: the page says so where it reports errors.
    }
  };
  button.onclick = async () => {
    try {
      show(await api.syncNow());
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
