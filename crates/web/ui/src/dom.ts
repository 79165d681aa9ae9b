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

/// Says something in the top bar: news goes after a while, an error stays until the next message. A long message
/// shows its first sentence; the whole of it is the tooltip.
export function status(message: string, isError = false) {
  const s = $("status");
  const first = /^.*?[.!?](\s|$)/.exec(message)?.[0].trim() ?? message;
  s.textContent = first;
  s.title = message;
  s.classList.toggle("error", isError);
  window.clearTimeout(clearStatus);
  if (!isError) clearStatus = window.setTimeout(() => (s.textContent = ""), 8000);
}

export function describeError(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
