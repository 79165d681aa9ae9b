// Links between notes: a click on a quire link opens its note (as core resolved it: a title, an alias or a path) and
// its heading, a link to a missing note offers to create it; the notes that link to the open note, with their words.
import { api } from "./api";
import { $, describeError, el, status } from "./dom";
import type { NoteEditor } from "./editor";
import { quireTarget } from "./markdown";
import type { Store } from "./store";

/// What links ask of the other panes.
export interface LinkNeeds {
  openNote(id: string): Promise<void>;
  /// Offers to create the note a link names.
  offerToCreate(title: string): Promise<void>;
}

export class Links {
  /// The open note's links as core resolved them (by title, alias or path), by their target as written.
  private cache: { key: string; links: Map<string, string> } | null = null;

  constructor(
    private readonly store: Store,
    private readonly editor: NoteEditor,
    private readonly page: LinkNeeds,
  ) {
    document.addEventListener("click", (e) => {
      const anchor = (e.target as HTMLElement).closest("a");
      if (!anchor) return;
      const target = quireTarget(anchor);
      if (!target) return;
      e.preventDefault();
      void this.follow(target);
    });
  }

  private async resolvedLinks(): Promise<Map<string, string>> {
    const note = this.store.open;
    if (!note) return new Map();
    const key = `${note.note_id}@${note.updated}`;
    if (this.cache?.key !== key) {
      const { links } = await api.links(note.note_id);
      const resolved = links.flatMap((l): [string, string][] => (l.note_id ? [[l.target.toLowerCase(), l.note_id]] : []));
      this.cache = { key, links: new Map(resolved) };
    }
    return this.cache.links;
  }

  /// The id of the note a link's target means: as core resolved the open note's link (a title, an alias, a path),
  /// else the note titled so (the exact title first, ignoring case), if there is one.
  async findByTitle(title: string): Promise<string | null> {
    const resolved = (await this.resolvedLinks()).get(title.toLowerCase());
    if (resolved) return resolved;
    const { results } = await api.search(`title:"${title.replace(/"/g, "")}"`, false);
    const exact = results.find((r) => r.title === title) ?? results.find((r) => r.title.toLowerCase() === title.toLowerCase());
    return (exact ?? null)?.note_id ?? null;
  }

  async follow(target: { id?: string; title?: string; heading?: string }) {
    if (target.id) return this.page.openNote(target.id);
    const title = target.title ?? "";
    try {
      if (title && title.toLowerCase() !== this.store.open?.title.toLowerCase()) {
        const found = await this.findByTitle(title);
        if (!found) {
          await this.page.offerToCreate(title);
          return;
        }
        await this.page.openNote(found);
      }
      if (target.heading) this.showHeading(target.heading);
    } catch (e) {
      status(describeError(e), true);
    }
  }

  /// Puts the cursor on the open note's heading of that text and scrolls to it (the editor's, or the preview's).
  private showHeading(heading: string) {
    const wanted = heading.trim().toLowerCase();
    const previewHeading = [...$("preview").querySelectorAll<HTMLElement>("h1, h2, h3, h4, h5, h6")].find(
      (h) => h.textContent?.trim().toLowerCase() === wanted,
    );
    if (!$("preview").hidden && previewHeading) {
      previewHeading.scrollIntoView({ block: "start" });
      return;
    }
    const doc = this.editor.view.state.doc;
    for (let n = 1; n <= doc.lines; n++) {
      const line = doc.line(n);
      const match = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line.text);
      if (match && match[1].trim().toLowerCase() === wanted) {
        this.editor.view.dispatch({ selection: { anchor: line.from }, scrollIntoView: true });
        this.editor.focus();
        return;
      }
    }
    status(`“${this.store.open?.title}” has no heading “${heading}”; it opened at the top.`);
  }

  async loadBacklinks() {
    const note = this.store.open;
    const box = $("backlinks");
    box.replaceChildren();
    if (!note) return;
    try {
      const { backlinks } = await api.backlinks(note.note_id);
      if (!backlinks.length) return;
      box.append(
        el("h3", { text: "Linked from" }),
        el(
          "ul",
          {},
          ...backlinks.map((b) => {
            const a = el("a", { href: `quire://note/${b.note_id}`, text: b.title });
            const li = el("li", {}, a, b.relation ? ` (${b.relation})` : "");
            if (b.snippet) li.append(el("div", { class: "hint backlink-snippet", text: b.snippet }));
            return li;
          }),
        ),
      );
    } catch {
      // Backlinks are extra: a failure leaves the box empty.
    }
  }
}
