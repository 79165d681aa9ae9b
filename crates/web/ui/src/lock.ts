// Sealed notes: whether a passphrase is set, the unlock period shown in the top bar (time left, and a Lock button),
// and the dialog that asks for the passphrase when a sealed note is opened, saved or unprotected while locked. The
// server drops the key after a while without use; the bar follows it and says when it locked again.
import { api, whenLocked, type LockState } from "./api";
import { ask } from "./dialog";
import { $, status } from "./dom";

/// After an answer that may have used the key, the bar asks how long is left once things are quiet for this long.
const SETTLE_MS = 1500;

/// The state last known, for the list and the tree (a sealed note shows a lock).
let known: LockState = { initialized: false, unlocked: false, seconds_left: null, timeout_seconds: 600 };

/// Whether a note's (or notebook's) content is sealed: protected, with a passphrase set on the workspace.
export const isSealed = (item: { is_protected: boolean }): boolean => known.initialized && item.is_protected;

/// `9:05`, `0:42`.
const clock = (seconds: number): string => `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")}`;

/// "10 minutes", "30 seconds".
function period(seconds: number): string {
  if (seconds % 60 || seconds < 60) return `${seconds} second${seconds === 1 ? "" : "s"}`;
  const minutes = seconds / 60;
  return `${minutes} minute${minutes === 1 ? "" : "s"}`;
}

export class Lock {
  /// When the period ends unless something uses the key (a time of Date.now()).
  private ends = 0;
  private asking: Promise<boolean> | null = null;
  private settle: number | undefined;
  private readonly listeners: ((initializedChanged: boolean) => void)[] = [];
  /// The Lock button was pressed: locking is news the page says itself.
  private lockingByHand = false;
  /// Run before locking by hand: the open note's typing is saved while it still can be.
  beforeLock: () => Promise<void> = async () => {};

  constructor() {
    whenLocked(
      (why) => this.unlock(why),
      () => this.usedSoon(),
    );
    $("lock-button").onclick = () => void (known.unlocked ? this.lockNow() : this.unlock());
    window.setInterval(() => this.tick(), 1000);
  }

  get state(): LockState {
    return known;
  }

  /// Calls `listener` when the workspace locks or unlocks, or a passphrase is found set.
  onChange(listener: (initializedChanged: boolean) => void) {
    this.listeners.push(listener);
  }

  /// Asks the server how things stand.
  async refresh() {
    try {
      this.show(await api.lock());
    } catch {
      // The bar stays as it was; the next answer corrects it.
    }
  }

  private show(state: LockState) {
    const before = known;
    known = state;
    this.ends = state.seconds_left === null ? 0 : Date.now() + state.seconds_left * 1000;
    this.render();
    const initializedChanged = before.initialized !== state.initialized;
    if (initializedChanged || before.unlocked !== state.unlocked) {
      for (const listener of this.listeners) listener(initializedChanged);
    }
    if (before.unlocked && !state.unlocked && !this.lockingByHand) {
      // The server drops the key after the period without use, or when it restarts: either is said (found in use: a
      // restart was said as the period running out).
      status(`Sealed notes are locked again (${period(state.timeout_seconds)} without use, or quire serve restarted); the passphrase opens them.`);
    }
  }

  private render() {
    const box = $("lock-state");
    box.hidden = !known.initialized;
    box.classList.toggle("unlocked", known.unlocked);
    const left = Math.max(0, Math.ceil((this.ends - Date.now()) / 1000));
    // A countdown, said as one: "9:49" alone read like a time of day (found in use).
    $("lock-text").textContent = known.unlocked ? `Unlocked · locks in ${clock(left)}` : "Locked";
    box.title = known.unlocked
      ? `Sealed notes are open. They lock again after ${period(known.timeout_seconds)} without use.`
      : "Sealed notes are locked: their text is encrypted, and opens with the workspace's passphrase.";
    const button = $("lock-button");
    button.textContent = known.unlocked ? "Lock" : "Unlock…";
    button.setAttribute(
      "aria-label",
      known.unlocked ? `Lock sealed notes now (${clock(left)} left)` : "Unlock sealed notes",
    );
  }

  /// Each second: the time left goes down; at its end, the server says whether the period really ended.
  private tick() {
    if (!known.unlocked) return;
    if (Date.now() >= this.ends) void this.refresh();
    else this.render();
  }

  /// An answer came that may have used the key (which starts the period again): ask how long is left, once quiet.
  private usedSoon() {
    if (!known.unlocked) return;
    window.clearTimeout(this.settle);
    this.settle = window.setTimeout(() => void this.refresh(), SETTLE_MS);
  }

  /// Asks for the passphrase and unlocks; resolves to whether sealed notes are open now. `why` says what asked. One
  /// dialog at a time: whoever asks meanwhile waits for the same answer.
  unlock(why?: string): Promise<boolean> {
    if (this.asking) return this.asking;
    const minutes = period(known.timeout_seconds);
    this.asking = ask({
      title: "Unlock sealed notes",
      hint: `${why ? `${why.replace(/\.?$/, ".")} ` : ""}Sealed notes stay open until they are unused for ${minutes}, or until you lock them.`,
      label: "Passphrase",
      secret: true,
      confirm: "Unlock",
      empty: "Type the workspace's passphrase.",
      submit: async (passphrase) => {
        this.show(await api.unlock(passphrase));
      },
    })
      .then((done) => done && known.unlocked)
      .finally(() => (this.asking = null));
    return this.asking;
  }

  /// Locks now: the open note's typing is saved first, then the key is dropped on the server.
  async lockNow() {
    await this.beforeLock();
    this.lockingByHand = true;
    try {
      this.show(await api.lockNow());
      status("Sealed notes are locked; the passphrase opens them again.");
    } catch (e) {
      status(e instanceof Error ? e.message : String(e), true);
    } finally {
      this.lockingByHand = false;
    }
  }
}
