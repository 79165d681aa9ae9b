// What a plugin tool returns besides the output the model reads: images, sounds, links, embedded files, and MCP Apps
// views. A view is a page the plugin wrote; the server serves it at /plugin-ui/... in a sandbox of its own (an opaque
// origin: no cookies, no storage, no network, nothing of this page), and it is framed here with sandbox
// "allow-scripts" only. This page speaks the MCP Apps host messages that make sense in a sidebar: ui/initialize,
// the tool's input and result, the view's height, and links (opened in a new tab after the user agrees).
import { el } from "./dom";

/// One piece of media, as the agent's events carry it.
export type ContentItem =
  | { type: "text"; text: string }
  | { type: "image"; data: string; mime_type: string }
  | { type: "audio"; data: string; mime_type: string }
  | { type: "resource"; uri: string; mime_type?: string | null; text?: string | null; blob?: string | null }
  | { type: "resource_link"; uri: string; name: string; description?: string | null; mime_type?: string | null };

/// The media type of an MCP Apps view.
const APP_MIME = "text/html;profile=mcp-app";

/// Media types an image or a sound may be shown with (anything else is offered as a file).
const SAFE_IMAGE = /^image\/(png|jpeg|gif|webp|bmp)$/;
const SAFE_AUDIO = /^audio\/(wav|x-wav|mpeg|mp3|ogg|webm|flac)$/;

/// The media of a result, in order, or nothing.
export function renderMedia(content: unknown[] | undefined, args: string, output: unknown): HTMLElement[] {
  const shown: HTMLElement[] = [];
  for (const raw of content ?? []) {
    const item = raw as ContentItem;
    if (item.type === "image" && SAFE_IMAGE.test(item.mime_type)) {
      shown.push(el("img", { class: "tool-image", src: `data:${item.mime_type};base64,${item.data}`, alt: "An image the tool returned" }));
    } else if (item.type === "audio" && SAFE_AUDIO.test(item.mime_type)) {
      shown.push(el("audio", { controls: "", src: `data:${item.mime_type};base64,${item.data}` }));
    } else if (item.type === "resource_link" && item.mime_type === APP_MIME && item.uri.startsWith("/plugin-ui/")) {
      shown.push(appView(item.uri, item.name, args, output));
    } else if (item.type === "resource_link") {
      shown.push(link(item.uri, item.name, item.description ?? null));
    } else if (item.type === "resource" && item.text != null) {
      shown.push(el("details", { class: "tool-resource" }, el("summary", { text: item.uri }), el("pre", { text: item.text })));
    } else if (item.type === "resource" && item.blob != null) {
      // Always as bytes to save: a type the plugin chose (HTML, SVG) would otherwise open in this page's origin.
      const bytes = Uint8Array.from(atob(item.blob), (c) => c.charCodeAt(0));
      const url = URL.createObjectURL(new Blob([bytes], { type: "application/octet-stream" }));
      const name = item.uri.split("/").pop() || "file";
      shown.push(el("p", {}, el("a", { href: url, download: name, text: `Download ${name}` })));
    }
  }
  return shown;
}

/// A link: web addresses open in a new tab; other addresses (file:, a plugin's own scheme) are shown as text.
function link(uri: string, name: string, description: string | null): HTMLElement {
  const web = /^https?:\/\//i.test(uri);
  const target = web
    ? el("a", { href: uri, target: "_blank", rel: "noopener noreferrer", text: name || uri })
    : el("code", { text: uri });
  return el("p", { class: "tool-link" }, "🔗 ", target, description ? ` — ${description}` : "", !web && name ? ` (${name})` : "");
}

/// An MCP Apps view in a sandboxed frame, with the host side of its messages.
function appView(address: string, uri: string, args: string, output: unknown): HTMLElement {
  const frame = el("iframe", {
    class: "app-view",
    src: address,
    sandbox: "allow-scripts",
    title: `Interactive view ${uri}`,
    referrerpolicy: "no-referrer",
  });
  let input: unknown = {};
  try {
    input = JSON.parse(args || "{}");
  } catch {
    input = {};
  }
  const result = toolResult(output);
  // The view may load once. If it navigates its frame elsewhere, the frame is closed: nothing more is posted to
  // whatever document it went to.
  let loads = 0;
  let closed = false;
  frame.addEventListener("load", () => {
    loads += 1;
    if (loads > 1) {
      closed = true;
      frame.replaceWith(el("p", { class: "hint", text: "The view tried to go to another page, so it was closed." }));
    }
  });
  const post = (message: unknown) => {
    if (!closed) frame.contentWindow?.postMessage(message, "*");
  };
  const listener = (event: MessageEvent) => {
    // Only this frame's messages, from its sandboxed (opaque, "null") origin: told apart by its window.
    if (closed || event.source !== frame.contentWindow || event.origin !== "null") return;
    if (!document.body.contains(frame)) {
      window.removeEventListener("message", listener);
      return;
    }
    const message = event.data as { jsonrpc?: string; id?: number | string; method?: string; params?: Record<string, unknown> };
    if (message?.jsonrpc !== "2.0" || typeof message.method !== "string") return;
    const answer = (result: unknown) => post({ jsonrpc: "2.0", id: message.id, result });
    const refuse = (text: string) => post({ jsonrpc: "2.0", id: message.id, error: { code: -32601, message: text } });
    switch (message.method) {
      case "ui/initialize":
        answer({
          protocolVersion: "2026-01-26",
          hostInfo: { name: "quire", version: "1" },
          hostCapabilities: { openLinks: {} },
          hostContext: {
            theme: matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light",
            displayMode: "inline",
            availableDisplayModes: ["inline"],
          },
        });
        break;
      case "ui/notifications/initialized":
        post({ jsonrpc: "2.0", method: "ui/notifications/tool-input", params: { arguments: input } });
        post({ jsonrpc: "2.0", method: "ui/notifications/tool-result", params: result });
        break;
      case "ui/notifications/size-changed": {
        const height = Number(message.params?.height);
        if (Number.isFinite(height)) frame.style.height = `${Math.min(Math.max(height, 40), 640)}px`;
        break;
      }
      case "ui/open-link": {
        const url = String(message.params?.url ?? "");
        if (/^https?:\/\//i.test(url) && window.confirm(`The plugin's view wants to open ${url}. Open it?`)) {
          window.open(url, "_blank", "noopener,noreferrer");
          answer({});
        } else {
          post({ jsonrpc: "2.0", id: message.id, error: { code: -32000, message: "The user did not open the link." } });
        }
        break;
      }
      default:
        // Calling tools, sending chat messages or changing the page are not given to a view.
        if (message.id !== undefined) refuse(`${message.method} is not available in quire.`);
    }
  };
  window.addEventListener("message", listener);
  return el("div", { class: "app-box" }, frame);
}

/// The result as MCP's CallToolResult, from the output the model read ({text, structured, ...}).
function toolResult(output: unknown): unknown {
  const value = (output ?? {}) as { text?: unknown; structured?: unknown };
  const text = typeof value.text === "string" ? value.text : JSON.stringify(output);
  return { content: [{ type: "text", text }], structuredContent: value.structured ?? undefined };
}
