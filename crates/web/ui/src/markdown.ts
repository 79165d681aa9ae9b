// Markdown to HTML for the preview and the sidebar's replies: marked renders, DOMPurify sanitises (no script, no
// event attributes, no javascript: URLs, a note's ids and names prefixed), and quire's own syntax survives:
// `quire://note/ID` and `[[Title]]` / `[[Title#Heading|label]]` open the note, `quire://attachment/ID` images load
// from the API, task items show their box, and Obsidian embeds (`![[image.png]]`, `![[Note]]`) become an image of
// the note's attachments or a placeholder the preview fills with that note's text. Obsidian's syntax renders too:
// inline `#tags` as chips that search for the tag, `==highlight==`, `> [!note] Title` callouts (foldable with
// `[!note]-` / `[!note]+`) and `$inline$` / `$$block$$` math (Temml's MathML: no fonts, no script, sanitised too).
import DOMPurify from "dompurify";
import { marked, type Tokens } from "marked";
import type Temml from "temml";
import { sessionSecret } from "./api";

/// What a rendering may refer to: the attachments `![[name]]` resolves against, and whether its task boxes can be
/// clicked (only in the preview of the open note itself).
export interface RenderContext {
  attachments?: { attachment_id: string; title: string; mime: string }[];
  interactiveTasks?: boolean;
  /// Lowercased `[[link]]` targets that resolve to no note (the note API's `unresolved_links`): they render as
  /// links to create that note. The same as `renderMarkdown`'s third parameter.
  missing?: ReadonlySet<string>;
}

/// A rendering's own mark: the task boxes it makes carry it, so a box written as HTML in a note (which cannot
/// guess it) is never taken for one.
let stamp = "";
let interactiveStamp = "";
let context: RenderContext = {};

const escape = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

/// `Title#Heading` into its parts (`#Heading` alone: a heading of the same note).
function target(raw: string): { title: string; heading: string } {
  const at = raw.indexOf("#");
  if (at < 0) return { title: raw.trim(), heading: "" };
  return { title: raw.slice(0, at).trim(), heading: raw.slice(at + 1).trim() };
}

const wikiLink = {
  name: "wikiLink",
  level: "inline" as const,
  start: (src: string) => src.indexOf("[["),
  tokenizer(src: string) {
    const match = /^\[\[([^\[\]\n|]+)(?:\|([^\[\]\n]+))?\]\]/.exec(src);
    if (!match) return undefined;
    return { type: "wikiLink", raw: match[0], target: match[1].trim(), label: (match[2] ?? match[1]).trim() };
  },
  renderer(token: any) {
    const { title, heading } = target(token.target);
    const headingAttr = heading ? ` data-heading="${escape(heading)}"` : "";
    const missing = context.missing;
    if (title && missing && (missing.has(token.target.toLowerCase()) || missing.has(title.toLowerCase()))) {
      // No `data-note-title`: following it could only say that the note does not exist.
      const hint = `No note is titled “${title}” yet: click to create it.`;
      return `<a href="#" class="missing-link" data-create-title="${escape(title)}"${headingAttr} title="${escape(hint)}">${escape(token.label)}</a>`;
    }
    return `<a href="#" class="wikilink" data-note-title="${escape(title)}"${headingAttr}>${escape(token.label)}</a>`;
  },
};

/// Obsidian's inline tag: `#` then letters, digits, `_`, `-` or `/` (not digits only), at the start of the text or
/// after a space, so `page#anchor` and `#1` stay text.
const TAG = /^#([\p{L}\p{N}_\/-]*[\p{L}_\/-][\p{L}\p{N}_\/-]*)/u;

const inlineTag = {
  name: "inlineTag",
  level: "inline" as const,
  start(src: string) {
    const found = /(?:^|\s)#[\p{L}\p{N}_\/-]/u.exec(src);
    return found ? found.index + found[0].indexOf("#") : undefined;
  },
  tokenizer(this: any, src: string, tokens: Tokens.Generic[]) {
    // A chip is a link: none inside a link's text.
    if (this.lexer.state.inLink) return undefined;
    const before = tokens[tokens.length - 1]?.raw ?? "";
    if (before && !/\s$/.test(before)) return undefined;
    const match = TAG.exec(src);
    if (!match) return undefined;
    const tag = match[1].replace(/\/+$/, "");
    if (!tag) return undefined;
    return { type: "inlineTag", raw: `#${tag}`, tag };
  },
  renderer(token: any) {
    const tag = escape(token.tag);
    return `<a href="#" class="tag-chip" data-tag="${tag}" title="Search for notes tagged #${tag}">#${tag}</a>`;
  },
};

const highlight = {
  name: "highlight",
  level: "inline" as const,
  start: (src: string) => {
    const at = src.indexOf("==");
    return at < 0 ? undefined : at;
  },
  tokenizer(this: any, src: string) {
    const match = /^==(?=[^\s=])([\s\S]*?[^\s=])==(?!=)/.exec(src);
    if (!match) return undefined;
    return { type: "highlight", raw: match[0], tokens: this.lexer.inlineTokens(match[1]) };
  },
  renderer(this: any, token: any) {
    return `<mark>${this.parser.parseInline(token.tokens)}</mark>`;
  },
};

/// Temml, once the math bundle (assets/math.js) is loaded.
const loadedTemml = (): typeof Temml | undefined => (globalThis as { quireTemml?: typeof Temml }).quireTemml;
let mathRequested = false;

/// Loads the math bundle the first time a formula is met; once it runs, the formulas already shown as their
/// source (`.math-pending`) become MathML, in place.
function requestMath() {
  if (mathRequested) return;
  mathRequested = true;
  document.addEventListener("quire:math", () => upgradeMath(document.body), { once: true });
  const script = Object.assign(document.createElement("script"), { src: "/assets/math.js" });
  // Not reached (offline before it was ever kept): the formulas stay as their source, and the next text asks again.
  script.onerror = () => {
    mathRequested = false;
    script.remove();
  };
  document.head.append(script);
}

/// Renders the formulas of `root` that waited for the math bundle.
function upgradeMath(root: HTMLElement) {
  for (const pending of root.querySelectorAll<HTMLElement>(".math-pending")) {
    const display = pending.dataset.display === "true";
    pending.outerHTML = DOMPurify.sanitize(math(pending.dataset.tex ?? "", display), SANITIZE);
  }
}

/// TeX as MathML; what Temml cannot parse shows as its source. Before the math bundle is loaded, the source, marked
/// to become MathML when it is.
function math(tex: string, displayMode: boolean): string {
  const temml = loadedTemml();
  if (!temml) {
    requestMath();
    return `<code class="math-pending" data-tex="${escape(tex)}" data-display="${displayMode}">${escape(tex)}</code>`;
  }
  try {
    // No inline styles (the CSP refuses them even while DOMPurify parses): a colour becomes MathML's `mathcolor`,
    // the rest (such as display) is app.css's.
    return temml
      .renderToString(tex, { displayMode, throwOnError: true, annotate: false, trust: false })
      .replace(/ style="([^"]*)"/g, (_, style: string) => {
        const color = /(?:^|;)\s*color:\s*([^;]+)/.exec(style);
        return color ? ` mathcolor="${color[1].trim()}"` : "";
      });
  } catch {
    return `<code class="math-error" title="This formula could not be read.">${escape(tex)}</code>`;
  }
}

const inlineMath = {
  name: "inlineMath",
  level: "inline" as const,
  start: (src: string) => {
    const at = src.indexOf("$");
    return at < 0 ? undefined : at;
  },
  tokenizer(src: string) {
    // As Obsidian: no space just inside the dollars, and no digit right after the closing one ("$5 and $6").
    const match = /^\$(?!\$)(?=\S)((?:\\.|[^\\$\n])+?)(?<=\S)\$(?!\d)/.exec(src);
    if (!match) return undefined;
    return { type: "inlineMath", raw: match[0], tex: match[1] };
  },
  renderer: (token: any) => `<span class="math">${math(token.tex, false)}</span>`,
};

const blockMath = {
  name: "blockMath",
  level: "block" as const,
  start: (src: string) => /^ {0,3}\$\$/m.exec(src)?.index,
  tokenizer(src: string) {
    const match = /^ {0,3}\$\$([\s\S]+?)\$\$[ \t]*(?:\n|$)/.exec(src);
    if (!match || !match[1].trim()) return undefined;
    return { type: "blockMath", raw: match[0], tex: match[1].trim() };
  },
  renderer: (token: any) => `<div class="math math-block">${math(token.tex, true)}</div>\n`,
};

/// Obsidian's callout kinds, by their colour; an unknown kind looks like a note.
const CALLOUT_GROUPS: Record<string, string[]> = {
  note: ["note", "info", "todo"],
  tip: ["tip", "hint", "important", "abstract", "summary", "tldr"],
  success: ["success", "check", "done"],
  warning: ["warning", "caution", "attention", "question", "help", "faq"],
  danger: ["danger", "error", "failure", "fail", "missing", "bug"],
  example: ["example"],
  quote: ["quote", "cite"],
};
const calloutGroup = (kind: string) =>
  Object.entries(CALLOUT_GROUPS).find(([, kinds]) => kinds.includes(kind))?.[0] ?? "note";

/// `> [!kind]± Title` and the quote's other lines: a titled box, a `<details>` when it folds.
const callout = {
  name: "callout",
  level: "block" as const,
  start: (src: string) => /^ {0,3}>[ \t]*\[![A-Za-z]/m.exec(src)?.index,
  tokenizer(this: any, src: string) {
    const quote = /^(?: {0,3}>[^\n]*(?:\n|$))+/.exec(src);
    if (!quote) return undefined;
    const lines = quote[0].replace(/\n$/, "").split("\n").map((line) => line.replace(/^ {0,3}> ?/, ""));
    const head = /^[ \t]*\[!([A-Za-z][\w-]*)\]([+-]?)[ \t]*(.*)$/.exec(lines[0]);
    if (!head) return undefined;
    const kind = head[1].toLowerCase();
    const title = head[3].trim() || kind.charAt(0).toUpperCase() + kind.slice(1);
    return {
      type: "callout",
      raw: quote[0],
      kind,
      fold: head[2],
      titleTokens: this.lexer.inline(title, []),
      tokens: this.lexer.blockTokens(lines.slice(1).join("\n")),
    };
  },
  renderer(this: any, token: any) {
    const kind = escape(token.kind);
    const classes = `callout callout-${calloutGroup(token.kind)}`;
    const title = this.parser.parseInline(token.titleTokens);
    const body = `<div class="callout-body">${this.parser.parse(token.tokens)}</div>`;
    if (token.fold) {
      const open = token.fold === "+" ? " open" : "";
      return `<details class="${classes}" data-callout="${kind}"${open}><summary class="callout-title">${title}</summary>${body}</details>\n`;
    }
    return `<div class="${classes}" data-callout="${kind}"><p class="callout-title">${title}</p>${body}</div>\n`;
  },
};

/// The attachment of the note being rendered that `name` names: by title, then by the last part of a path.
function attachmentNamed(name: string) {
  const list = context.attachments ?? [];
  const base = name.split("/").pop() ?? name;
  const lower = (s: string) => s.toLowerCase();
  return (
    list.find((a) => a.title === name) ??
    list.find((a) => lower(a.title) === lower(name)) ??
    list.find((a) => lower(a.title) === lower(base) || lower(a.title.split("/").pop() ?? "") === lower(base))
  );
}

const wikiEmbed = {
  name: "wikiEmbed",
  level: "inline" as const,
  start: (src: string) => src.indexOf("![["),
  tokenizer(src: string) {
    const match = /^!\[\[([^\[\]\n|]+)(?:\|([^\[\]\n]+))?\]\]/.exec(src);
    if (!match) return undefined;
    return { type: "wikiEmbed", raw: match[0], target: match[1].trim(), label: (match[2] ?? "").trim() };
  },
  renderer(token: any) {
    const attachment = attachmentNamed(token.target);
    if (attachment) {
      const alt = escape(attachment.title);
      if (attachment.mime.startsWith("image/") && attachment.mime !== "image/svg+xml") {
        return `<img src="quire://attachment/${escape(attachment.attachment_id)}" alt="${alt}">`;
      }
      return `<a href="quire://attachment/${escape(attachment.attachment_id)}" class="attachment-link">${alt}</a>`;
    }
    // Not an attachment of this note: another note, which the preview puts in its place (see `fillEmbeds`).
    const { title, heading } = target(token.target);
    const headingAttr = heading ? ` data-heading="${escape(heading)}"` : "";
    return `<span class="embed" data-embed-title="${escape(title)}"${headingAttr}><a href="#" class="wikilink" data-note-title="${escape(title)}"${headingAttr}>${escape(token.target)}</a></span>`;
  },
};

marked.use({
  extensions: [callout, blockMath, wikiLink, wikiEmbed, inlineTag, highlight, inlineMath],
  gfm: true,
  breaks: false,
  renderer: {
    // A ```dataview or ```query block (```query board: a view) is a place for its rows, which the preview fills in
    // (queryview.ts); Dataview's JavaScript blocks are shown as code: quire runs no code from notes.
    code({ text, lang }: Tokens.Code) {
      const info = (lang ?? "").trim().toLowerCase().split(/\s+/);
      if (info[0] === "dataviewjs") {
        return `<div class="query-view query-js"><p class="hint">Dataview JavaScript: quire runs no code from notes, so this block is shown as written.</p><pre><code>${escape(text)}</code></pre></div>\n`;
      }
      if (info[0] !== "dataview" && info[0] !== "query") return false;
      const view = escape(info[1] ?? "");
      return `<div class="query-view" data-query="${escape(text)}" data-view="${view}"><pre class="query-pending"><code>${escape(text)}</code></pre></div>\n`;
    },
    // A task item's box: a clickable one in the preview, a plain mark elsewhere (`input` itself is not allowed).
    checkbox({ checked }: { checked: boolean }) {
      const glyph = checked ? "☑" : "☐";
      if (!context.interactiveTasks) return `<span class="task-box" data-checked="${checked}">${glyph}</span> `;
      const label = checked ? "Done; click to mark as not done" : "Not done; click to mark as done";
      return `<span class="task-box interactive" data-task="${stamp}" data-checked="${checked}" role="checkbox" aria-checked="${checked}" tabindex="0" title="${label}" aria-label="${label}">${glyph}</span> `;
    },
  },
});

// Web links, mail, and quire's own scheme; relative links; nothing else (no javascript:, no data: in links).
const ALLOWED_URI = /^(?:(?:https?|mailto|quire):|[^a-z]|[a-z+.-]+(?:[^a-z+.\-:]|$))/i;

DOMPurify.addHook("afterSanitizeAttributes", (node) => {
  if (node.tagName === "A") {
    const href = node.getAttribute("href") ?? "";
    // An anchor after the id (`#interface`, kept from an Obsidian vault) goes along and changes nothing here.
    const attachment = /^quire:\/\/attachment\/([A-Za-z0-9_-]+)(?:#.*)?$/.exec(href);
    if (attachment) node.setAttribute("href", attachmentUrl(attachment[1]));
    else if (/^https?:/i.test(href)) {
      node.setAttribute("target", "_blank");
      node.setAttribute("rel", "noopener noreferrer");
    }
  }
  if (node.tagName === "IMG") {
    const src = node.getAttribute("src") ?? "";
    const attachment = /^(?:quire:\/\/attachment\/|\/api\/attachments\/)([A-Za-z0-9_-]+)(?:#.*)?$/.exec(src);
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

/// What a rendered text may hold (every rendering, and a formula rendered once the math bundle came).
const SANITIZE = {
  ALLOWED_URI_REGEXP: ALLOWED_URI,
  FORBID_TAGS: ["style", "form", "input", "button", "textarea", "select", "iframe", "object", "embed"],
  FORBID_ATTR: ["style"],
  // A note's `id` or `name` must never collide with the app's own elements (`#messages`, `#history`...), which the
  // app finds by id: DOMPurify prefixes them with `user-content-`.
  SANITIZE_NAMED_PROPS: true,
};

/// Sanitised HTML of a Markdown text. `missing`: lowercased `[[link]]` targets that resolve to no note, which
/// render as `<a class="missing-link" data-create-title="Title">` (the page decides what a click on one does).
export function renderMarkdown(markdown: string, with_: RenderContext = {}, missing?: ReadonlySet<string>): string {
  context = missing ? { ...with_, missing } : with_;
  stamp = Math.random().toString(36).slice(2);
  if (with_.interactiveTasks) interactiveStamp = stamp;
  try {
    const html = marked.parse(markdown, { async: false }) as string;
    return DOMPurify.sanitize(html, SANITIZE);
  } finally {
    context = {};
  }
}

// A tag chip searches for its tag: the search box belongs to the page, which listens for `quire:search`
// (`detail.query`). An inline `#tag` is a tag only in notes imported from Obsidian, so the search is for the notes
// that carry the tag or say the word (`any:1 tag:project body:project`). A link to a missing note says
// `quire:create-note` (`detail.title`).
document.addEventListener("click", (e) => {
  const anchor = (e.target as HTMLElement | null)?.closest?.<HTMLAnchorElement>("a.tag-chip[data-tag], a.missing-link[data-create-title]");
  if (!anchor) return;
  e.preventDefault();
  const tag = anchor.dataset.tag;
  const event = tag
    ? new CustomEvent("quire:search", { bubbles: true, detail: { query: `any:1 tag:${tag} body:${tag}` } })
    : new CustomEvent("quire:create-note", { bubbles: true, detail: { title: anchor.dataset.createTitle } });
  anchor.dispatchEvent(event);
});

/// The task boxes of the last interactive rendering inside `root`, in the order of the text.
export function taskBoxes(root: HTMLElement): HTMLElement[] {
  // Boxes of embedded notes are rendered on their own (another mark) and are not the open note's.
  return [...root.querySelectorAll<HTMLElement>(".task-box.interactive")].filter(
    (b) => b.dataset.task === interactiveStamp && !b.closest(".embed-body"),
  );
}

/// Where the boxes of task items (`- [ ] ...`, `1. [x] ...`, also in quotes) are in a Markdown text, in order: the
/// offset of the character between the brackets. Fenced code is skipped, as the preview does.
export function taskMarks(markdown: string): { at: number; checked: boolean }[] {
  const marks: { at: number; checked: boolean }[] = [];
  let fence: string | null = null;
  let offset = 0;
  for (const line of markdown.split("\n")) {
    const opening = /^\s{0,3}(`{3,}|~{3,})/.exec(line);
    if (fence) {
      if (opening && opening[1][0] === fence[0] && opening[1].length >= fence.length) fence = null;
    } else if (opening) fence = opening[1];
    else {
      const task = /^((?:\s*>)*\s*(?:[-*+]|\d{1,9}[.)])\s+)\[([ xX])\] +\S/.exec(line);
      if (task) marks.push({ at: offset + task[1].length + 1, checked: task[2] !== " " });
    }
    offset += line.length + 1;
  }
  return marks;
}

/// Where a click on a rendered link goes: a note by id or by title (and a heading in it), or nowhere inside the app.
export function quireTarget(anchor: HTMLAnchorElement): { id?: string; title?: string; heading?: string } | null {
  const title = anchor.dataset.noteTitle;
  const heading = anchor.dataset.heading;
  if (title !== undefined && (title || heading)) return { title, heading };
  const href = anchor.getAttribute("href") ?? "";
  const note = /^quire:\/\/note\/([A-Za-z0-9_-]+)/.exec(href);
  if (note) return { id: note[1] };
  return null;
}
