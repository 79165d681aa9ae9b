// Markdown to HTML for the preview and the sidebar's replies: marked renders, DOMPurify sanitises (no script, no
// event attributes, no javascript: URLs), and quire's own links survive: `quire://note/ID` and `[[Title]]` open the
// note, `quire://attachment/ID` images load from the API.
import DOMPurify from "dompurify";
import { marked } from "marked";
import { sessionSecret } from "./api";

const wikiLink = {
  name: "wikiLink",
  level: "inline" as const,
  start: (src: string) => src.indexOf("[["),
  tokenizer(src: string) {
    const match = /^\[\[([^\[\]\n|]+)(?:\|([^\[\]\n]+))?\]\]/.exec(src);
    if (!match) return undefined;
    return { type: "wikiLink", raw: match[0], title: match[1].trim(), label: (match[2] ?? match[1]).trim() };
  },
  renderer(token: any) {
    const escape = (s: string) =>
      s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
    return `<a href="#" class="wikilink" data-note-title="${escape(token.title)}">${escape(token.label)}</a>`;
  },
};

marked.use({ extensions: [wikiLink], gfm: true, breaks: false });

// Web links, mail, and quire's own scheme; relative links; nothing else (no javascript:, no data: in links).
const ALLOWED_URI = /^(?:(?:https?|mailto|quire):|[^a-z]|[a-z+.-]+(?:[^a-z+.\-:]|$))/i;

DOMPurify.addHook("afterSanitizeAttributes", (node) => {
  if (node.tagName === "A") {
    const href = node.getAttribute("href") ?? "";
    if (/^https?:/i.test(href)) {
      node.setAttribute("target", "_blank");
      node.setAttribute("rel", "noopener noreferrer");
    }
  }
  if (node.tagName === "IMG") {
    const src = node.getAttribute("src") ?? "";
    const attachment = /^(?:quire:\/\/attachment\/|\/api\/attachments\/)([A-Za-z0-9_-]+)$/.exec(src);
    if (attachment) node.setAttribute("src", attachmentUrl(attachment[1]));
    else {
      // Remote images would leak what is read to a third party, and the CSP blocks them anyway: say so instead.
      node.replaceWith(document.createTextNode(`[image: ${node.getAttribute("alt") || src}]`));
    }
  }
});

/// Where the preview loads an attachment from: an `<img>` sends no header, so the session's secret is in the query.
export function attachmentUrl(id: string): string {
  return `/api/attachments/${encodeURIComponent(id)}?session=${encodeURIComponent(sessionSecret())}`;
}

/// Sanitised HTML of a Markdown text.
export function renderMarkdown(markdown: string): string {
  const html = marked.parse(markdown, { async: false }) as string;
  return DOMPurify.sanitize(html, {
    ALLOWED_URI_REGEXP: ALLOWED_URI,
    FORBID_TAGS: ["style", "form", "input", "button", "textarea", "select", "iframe", "object", "embed"],
    FORBID_ATTR: ["style"],
    // A note's `id` or `name` must never collide with the app's own elements (`#messages`, `#history`...), which
    // the app finds by id: DOMPurify prefixes them with `user-content-`.
    SANITIZE_NAMED_PROPS: true,
  });
}

/// Where a click on a rendered link goes: a note by id or by title, or nowhere inside the app.
export function quireTarget(anchor: HTMLAnchorElement): { id?: string; title?: string } | null {
  const title = anchor.dataset.noteTitle;
  if (title) return { title };
  const href = anchor.getAttribute("href") ?? "";
  const note = /^quire:\/\/note\/([A-Za-z0-9_-]+)/.exec(href);
  if (note) return { id: note[1] };
  return null;
}
