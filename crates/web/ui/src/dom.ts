// Small DOM helpers shared by the app's modules.

export const $ = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T;

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Partial<Record<string, string>> = {},
  ...children: (Node | string)[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else node.setAttribute(key, value);
  }
  node.append(...children);
  return node;
}

let clearStatus: number | undefined;
let shownAt = 0;

/// How long news stays in the top bar, and an error (unless the user does something else first).
const NEWS_MS = 8000;
const ERROR_MS = 20000;

/// A message as people read it: ids are left out where the message also says what they name (`the note "Plan"
/// (b01b…)`), and a change set named by its id is "a later change".
export function readable(message: string): string {
  return message
    .replace(/\s*\((?:id\s+)?[0-9a-f]{12,}…?\)/g, "")
    .replace(/\bchange set [0-9a-f]{6,}…?/g, "a later change")
    .replace(/\s+[0-9a-f]{24,}\b/g, "");
}

function clear() {
  window.clearTimeout(clearStatus);
  const s = $("status");
  s.textContent = "";
  s.title = "";
  s.classList.remove("error");
}

// The next thing the user does (a click, a key) after a message had time to be read takes it away.
for (const kind of ["pointerdown", "keydown"]) {
  document.addEventListener(
    kind,
    (e) => {
      if ($("status").textContent && Date.now() - shownAt > 1500 && !(e.target as HTMLElement).closest?.("#status")) clear();
    },
    true,
  );
}

/// Says something in the top bar, whole (it wraps): news goes after a while, an error after a longer while or at the
/// user's next action.
export function status(message: string, isError = false) {
  const s = $("status");
  s.textContent = readable(message);
  // A long message is cut to one line in the top bar (ux-2 #21): all of it shows on hover.
  s.title = readable(message);
  s.classList.toggle("error", isError);
  shownAt = Date.now();
  window.clearTimeout(clearStatus);
  clearStatus = window.setTimeout(clear, isError ? ERROR_MS : NEWS_MS);
}

export function describeError(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/// Runs a change and shows the server's refusal (a guard, a conflict) as a message instead of failing.
export async function attempt(run: () => Promise<void>) {
  try {
    await run();
  } catch (e) {
    status(describeError(e), true);
  }
}

/// How often a Settings section looks whether what it shows changed elsewhere (a terminal, another tab).
const FOLLOW_MS = 3000;

/// Starts following what `box` shows: every few seconds, while `box` is on the page and drawn by this call (drawing it
/// again starts a new follow and ends this one) and the person is not typing in it, `read` is asked again; when its
/// signature differs from `shown`, `redraw` draws the section again.
export function followElsewhere(box: HTMLElement, shown: string, read: () => Promise<string>, redraw: () => void) {
  const drawn = String(Number(box.dataset.drawn ?? "0") + 1);
  box.dataset.drawn = drawn;
  const look = () =>
    window.setTimeout(async () => {
      if (!box.isConnected || box.dataset.drawn !== drawn) return;
      const typing = box.contains(document.activeElement) && document.activeElement?.matches("input, textarea, select");
      try {
        if (!typing && (await read()) !== shown) return void redraw();
      } catch {
        // The server is away: the page says so where it reports errors; the next look may find it back.
      }
      look();
    }, FOLLOW_MS);
  look();
}
