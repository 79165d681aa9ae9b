// Files into the open note: pasted or dropped into the text, or picked with "Attach file…" (a file picker, which is
// also how a phone adds one). Each is stored as the note's attachment, and its Markdown goes where the cursor is: an
// image shows in the preview, any other file is a link to it. Nothing vanishes without a word: what cannot be
// attached says why.
import { api, type AddedAttachment } from "./api";
import { $, describeError, status } from "./dom";
import type { NoteEditor } from "./editor";
import type { Store } from "./store";

export interface AttachNeeds {
  /// The preview drawn again (it shows the new image).
  renderPreview(): void;
}

export function followAttachments(editor: NoteEditor, store: Store, page: AttachNeeds) {
  const dom = editor.view.dom;
  // Before the editor's own handlers (capture), which would paste a file's name or drop nothing.
  dom.addEventListener(
    "paste",
    (e) => {
      const files = [...(e.clipboardData?.files ?? [])];
      if (!files.length) return;
      e.preventDefault();
      e.stopPropagation();
      void attach(files);
    },
    true,
  );
  dom.addEventListener("dragover", (e) => {
    if (e.dataTransfer?.types.includes("Files")) {
      e.preventDefault();
      e.dataTransfer.dropEffect = "copy";
    }
  });
  dom.addEventListener(
    "drop",
    (e) => {
      const files = [...(e.dataTransfer?.files ?? [])];
      if (!files.length) return;
      e.preventDefault();
      e.stopPropagation();
      // Where it was dropped is where it goes.
      const at = editor.view.posAtCoords({ x: e.clientX, y: e.clientY });
      if (at !== null) editor.view.dispatch({ selection: { anchor: at } });
      void attach(files);
    },
    true,
  );
  // The note whose text the person has been in: a file picked for another (just opened, never clicked into) goes at
  // the end of its text, not before its first word.
  let placedIn: string | null = null;
  dom.addEventListener("focusin", () => (placedIn = store.open?.note_id ?? null));
  const input = $<HTMLInputElement>("attach-input");
  $("attach").onclick = () => input.click();
  input.onchange = () => {
    const files = [...(input.files ?? [])];
    input.value = "";
    if (files.length) void attach(files);
  };

  async function attach(files: File[]) {
    const open = store.open;
    if (!open || open.in_trash || open.locked) {
      status(
        !open ? "Open a note to attach a file to it." : open.in_trash ? "Restore the note from the trash to attach files to it." : "Unlock the note to attach files to it.",
        true,
      );
      return;
    }
    const added: AddedAttachment[] = [];
    for (const file of files) {
      status(`Attaching ${file.name || "the pasted file"}…`);
      try {
        added.push(await api.attach(open.note_id, file));
      } catch (e) {
        status(`${file.name || "The pasted file"} was not attached: ${describeError(e)}`, true);
      }
    }
    // The note may have changed meanwhile: the links go into the note they belong to only.
    if (!added.length || store.open?.note_id !== open.note_id) return;
    if (placedIn !== open.note_id) editor.view.dispatch({ selection: { anchor: editor.view.state.doc.length } });
    insert(added.map((a) => a.markdown).join("\n\n"));
    open.attachments.push(
      ...added.map((a) => ({ attachment_id: a.attachment_id, title: a.title, mime: a.mime, size: a.size, has_text: false })),
    );
    status(added.length === 1 ? `Attached ${added[0].title}` : `Attached ${added.length} files`);
    page.renderPreview();
  }

  /// The Markdown as a paragraph of its own where the cursor is (on a line of its own, an image would run into the
  /// text around it).
  function insert(markdown: string) {
    const view = editor.view;
    const { from, to } = view.state.selection.main;
    const prev = view.state.sliceDoc(Math.max(0, from - 2), from);
    const before = from === 0 || prev.endsWith("\n\n") ? "" : prev.endsWith("\n") ? "\n" : "\n\n";
    const next = view.state.sliceDoc(to, to + 2);
    // At the end, a blank line after it too: what is typed next is a paragraph of its own, not the image's.
    const after = to === view.state.doc.length ? "\n\n" : next.startsWith("\n\n") ? "" : next.startsWith("\n") ? "\n" : "\n\n";
    const text = `${before}${markdown}${after}`;
    view.dispatch({ changes: { from, to, insert: text }, selection: { anchor: from + text.length }, userEvent: "input.paste" });
  }
}
