// The open note's views: the Edit, Preview and History tabs, and the preview itself, with `![[Note]]` embeds filled
// in (three deep, a loop stops) and task boxes that change the text.
import { api, type Note } from "./api";
import { $, describeError, el, status } from "./dom";
import type { NoteEditor } from "./editor";
import { renderMarkdown, taskBoxes, taskMarks } from "./markdown";
import { fillQueries, rerunQueries } from "./queryview";
import type { Store } from "./store";

/// How deep `![[Note]]` embeds go (a note embedding itself, or a loop of notes, stops at the first repeat anyway).
const MAX_EMBED_DEPTH = 3;

const TABS = ["edit", "preview", "history"] as const;
export type View = (typeof TABS)[number];

/// What the views ask of the other panes.
export interface ViewNeeds {
  /// The id of the note a link's target means, if any.
  findByTitle(title: string): Promise<string | null>;
  /// Fills the History view.
  renderHistory(): Promise<void>;
}

export class NoteViews {
  /// Counts preview renderings, so an embed that arrives after the preview changed is dropped.
  private previewTicket = 0;

  constructor(
    private readonly store: Store,
    private readonly editor: NoteEditor,
    private readonly page: ViewNeeds,
  ) {
    for (const tab of TABS) $(`tab-${tab}`).onclick = () => void this.tab(tab);
    document.querySelector(".tabs")?.addEventListener("keydown", (e) => {
      const key = (e as KeyboardEvent).key;
      if (key !== "ArrowRight" && key !== "ArrowLeft") return;
      const current = TABS.findIndex((t) => $(`tab-${t}`).getAttribute("aria-selected") === "true");
      const next = TABS[(current + (key === "ArrowRight" ? 1 : TABS.length - 1)) % TABS.length];
      void this.tab(next);
      $(`tab-${next}`).focus();
    });
    $("preview").addEventListener("click", (e) => {
      const box = (e.target as HTMLElement).closest<HTMLElement>(".task-box.interactive");
      if (box) this.toggleTask(box);
    });
    $("preview").addEventListener("keydown", (e) => {
      const box = (e.target as HTMLElement).closest<HTMLElement>(".task-box.interactive");
      if (box && (e.key === " " || e.key === "Enter")) {
        e.preventDefault();
        this.toggleTask(box);
      }
    });
  }

  async tab(which: View) {
    for (const t of TABS) {
      $(`tab-${t}`).setAttribute("aria-selected", String(t === which));
      $(`tab-${t}`).tabIndex = t === which ? 0 : -1;
    }
    $("editor").hidden = which !== "edit";
    $("preview").hidden = which !== "preview";
    $("history").hidden = which !== "history";
    if (which === "preview") this.renderPreview();
    if (which === "history") await this.page.renderHistory();
  }

  renderPreview() {
    const note = this.store.open;
    const preview = $("preview");
    const ticket = ++this.previewTicket;
    // The link targets that name no note render as links that offer to create it.
    // A link that several notes may mean is unresolved too, but not missing: only one with no candidate is.
    const missing = new Set(
      (note?.unresolved_links ?? []).filter((l) => l.candidates.length === 0).map((l) => l.target.toLowerCase()),
    );
    preview.innerHTML = renderMarkdown(this.editor.text(), { attachments: note?.attachments, interactiveTasks: !!note && !note.in_trash }, missing);
    void this.fillEmbeds(preview, 1, new Set(note ? [note.title.toLowerCase()] : []), ticket);
    void fillQueries(preview, note?.note_id ?? null, () => ticket === this.previewTicket);
  }

  /// A note changed elsewhere: the preview's query blocks, if it shows any, run again.
  refreshQueries() {
    if (!$("preview").hidden) void rerunQueries($("preview"));
  }

  /// Puts each `![[Note]]` placeholder's note in its place (its section, for `![[Note#Heading]]`), and theirs in
  /// turn, up to MAX_EMBED_DEPTH deep; a note already on the way (a loop) is left as a link.
  private async fillEmbeds(root: HTMLElement, depth: number, seen: Set<string>, ticket: number) {
    const placeholders = [...root.querySelectorAll<HTMLElement>(".embed[data-embed-title]:not([data-filled])")].filter(
      (p) => p.parentElement?.closest(".embed-body") === (root.classList.contains("embed-body") ? root : null),
    );
    await Promise.all(
      placeholders.map(async (placeholder) => {
        placeholder.dataset.filled = "true";
        const title = placeholder.dataset.embedTitle ?? "";
        const heading = placeholder.dataset.heading ?? "";
        if (!title) return;
        if (seen.has(title.toLowerCase()) || depth > MAX_EMBED_DEPTH) {
          placeholder.append(el("span", { class: "hint", text: ` (not embedded again: ${seen.has(title.toLowerCase()) ? "it embeds itself" : "too deep"})` }));
          return;
        }
        let note: Note;
        try {
          const found = await this.page.findByTitle(title);
          if (!found) {
            placeholder.append(el("span", { class: "hint", text: " (no note has this title)" }));
            return;
          }
          note = await api.note(found);
        } catch (e) {
          placeholder.append(el("span", { class: "hint", text: ` (${describeError(e)})` }));
          return;
        }
        if (ticket !== this.previewTicket) return;
        const body = el("div", { class: "embed-body markdown" });
        body.innerHTML = renderMarkdown(heading ? section(note.body, heading) : note.body, { attachments: note.attachments });
        placeholder.classList.add("filled");
        placeholder.append(body);
        await this.fillEmbeds(body, depth + 1, new Set([...seen, title.toLowerCase()]), ticket);
      }),
    );
  }

  /// Marks a task of the open note done or not done, from its box in the preview: the `[ ]` of its line in the text
  /// changes (one undo step in the editor) and the note is saved.
  private toggleTask(box: HTMLElement) {
    const note = this.store.open;
    if (!note || note.in_trash) return;
    const boxes = taskBoxes($("preview"));
    const index = boxes.indexOf(box);
    const text = this.editor.text();
    const marks = taskMarks(text);
    if (index < 0 || marks.length !== boxes.length) {
      status("This box could not be matched to a line of the text; change it in the editor.", true);
      return;
    }
    const mark = marks[index];
    this.editor.view.dispatch({
      changes: { from: mark.at, to: mark.at + 1, insert: mark.checked ? " " : "x" },
      userEvent: "input.task",
    });
    const scroll = $("note-pane").scrollTop;
    this.renderPreview();
    $("note-pane").scrollTop = scroll;
    taskBoxes($("preview"))[index]?.focus();
  }
}

/// The part of a Markdown text under the heading `heading`: from that heading to the next one of the same or a
/// higher level (the whole text when no heading has that text).
function section(markdown: string, heading: string): string {
  const lines = markdown.split("\n");
  const wanted = heading.trim().toLowerCase();
  const level = (line: string) => /^(#{1,6})\s/.exec(line)?.[1].length ?? 0;
  const start = lines.findIndex((l) => level(l) > 0 && l.replace(/^#{1,6}\s+/, "").replace(/\s*#*\s*$/, "").trim().toLowerCase() === wanted);
  if (start < 0) return markdown;
  const depth = level(lines[start]);
  let end = start + 1;
  while (end < lines.length && !(level(lines[end]) > 0 && level(lines[end]) <= depth)) end++;
  return lines.slice(start, end).join("\n");
}
