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

export function status(message: string, isError = false) {
  const s = $("status");
  s.textContent = message;
  s.classList.toggle("error", isError);
}

export function describeError(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
