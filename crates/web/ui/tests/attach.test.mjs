// Adding files in the web app (ux-2 #7): an image pasted into the text, a file dropped on it and one picked with
// "Attach file…" each become the note's attachment, their Markdown goes where the cursor is, and the preview shows
// the images; an empty file is refused with its reason; a phone has the file picker too.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { SHOTS, addNote, browserSuite, editorText, eventually, expectAttribute, expectEditorText, expectText, expectVisible, openNote, serverNote } from "./support.mjs";

const { session } = await browserSuite();

/// A small PNG (a blue and white checkerboard, 48x24).
const PNG_BASE64 =
  "iVBORw0KGgoAAAANSUhEUgAAADAAAAAYCAIAAAAzn+mLAAAAsUlEQVR4nO3UkZLCYRRA8R4mCIIgCBaCYCEImjlBEARBsLAQBAvBQhAEQRA0ZxaCIAiCIFgIgiAIot5gvR6gz3fmf2eu3TN3fnRzeSxgEUtYxgq+YRWv97+X08Ue9vEDP3GAQ/xK90v8wRWucYNb3OE+3ecCFKAAZQ6UWtTwHevYwCa2sI2d9KERfuMYJzjFGc5xke4P+ItHPOEZL88SbxigAAUoe6B/9xgDFKAAZQ30AEQgbgjPQucOAAAAAElFTkSuQmCC";

/// Puts a file into the text the way the browser does for a paste (`kind` "paste") or a drop ("drop").
async function give(page, kind, name, type, base64) {
  await page.evaluate(
    ({ kind, name, type, base64 }) => {
      const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
      const data = new DataTransfer();
      data.items.add(new File([bytes], name, { type }));
      const content = document.querySelector("#editor .cm-content");
      const box = content.getBoundingClientRect();
      const event =
        kind === "paste"
          ? new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true })
          : new DragEvent("drop", { dataTransfer: data, bubbles: true, cancelable: true, clientX: box.left + 5, clientY: box.bottom - 5 });
      content.dispatchEvent(event);
    },
    { kind, name, type, base64 },
  );
}

const openId = (page) => page.evaluate(() => new URLSearchParams(location.hash.slice(1)).get("note"));

test("a pasted image, a dropped file and a picked one become the note's attachments and show in the preview", async (t) => {
  const { page, expect } = await session(t, (home) => addNote(home, "Trip", "Day one at the lake."));
  // The empty file's refusal, below.
  expect(/status of 400/);
  await openNote(page, "Trip");
  await page.locator("#editor .cm-content").click();
  await page.keyboard.press("Control+End");

  await give(page, "paste", "image.png", "image/png", PNG_BASE64);
  await eventually(() => editorText(page), (text) => assert.match(text, /^Day one at the lake\.\n\n!\[image\.png\]\(quire:\/\/attachment\/\w+\)\n\n$/));
  await expectText(page.locator("#status"), /Attached image\.png/);

  await give(page, "drop", "plan.pdf", "application/pdf", Buffer.from("%PDF-1.4 a plan").toString("base64"));
  await eventually(() => editorText(page), (text) => assert.match(text, /\n\n\[plan\.pdf\]\(quire:\/\/attachment\/\w+\)\n/));

  await page.setInputFiles("#attach-input", { name: "map.png", mimeType: "image/png", buffer: Buffer.from(PNG_BASE64, "base64") });
  await eventually(() => editorText(page), (text) => assert.match(text, /!\[map\.png\]\(quire:\/\/attachment\/\w+\)/));

  // An empty file: refused, said, and nothing goes into the text.
  let before = "";
  await eventually(() => editorText(page), (text) => {
    assert.match(text, /map\.png/);
    before = text;
  });
  await page.setInputFiles("#attach-input", { name: "empty.txt", mimeType: "text/plain", buffer: Buffer.alloc(0) });
  await expectText(page.locator("#status.error"), /^empty\.txt was not attached: the file is empty\.$/);
  await expectEditorText(page, before);

  // Saved: the server holds the three files as the note's attachments and the text that shows them.
  const id = await openId(page);
  await eventually(
    () => serverNote(page, id),
    (note) => {
      assert.deepEqual(note.attachments.map((a) => a.title).sort(), ["image.png", "map.png", "plan.pdf"]);
      assert.match(note.body, /!\[map\.png\]\(quire:\/\/attachment\//);
    },
  );

  await page.click("#tab-preview");
  await page.waitForFunction(
    () => [...document.querySelectorAll("#preview img")].filter((img) => img.naturalWidth === 48).length === 2,
    null,
    { timeout: 10_000 },
  );
  await expectVisible(page.locator("#preview a.attachment-link, #preview a", { hasText: "plan.pdf" }).first());
  await page.screenshot({ path: join(SHOTS, "attach-desktop.png") });
});

test("on a phone, the file picker attaches an image", async (t) => {
  const { page } = await session(t, (home) => addNote(home, "Receipts", "Kept here."));
  await page.setViewportSize({ width: 390, height: 844 });
  await openNote(page, "Receipts");
  await expectVisible(page.locator("#attach"));
  await page.setInputFiles("#attach-input", { name: "receipt.png", mimeType: "image/png", buffer: Buffer.from(PNG_BASE64, "base64") });
  // The text was never clicked into: the image goes after it.
  await eventually(() => editorText(page), (text) => assert.match(text, /^Kept here\.\n\n!\[receipt\.png\]\(quire:\/\/attachment\/\w+\)\n\n$/));
  await page.click("#tab-preview");
  await page.waitForFunction(() => document.querySelector("#preview img")?.naturalWidth === 48, null, { timeout: 10_000 });
  await page.screenshot({ path: join(SHOTS, "attach-phone.png") });
  // Settings pressed from another pane shows where it opens (found in use: it opened in the hidden note pane).
  await page.click("#pane-assistant");
  await page.click("#settings-button");
  await expectVisible(page.locator("#settings"));
});

test("a PDF attached in the page is read beside the server, and search names its page and opens it there", async (t) => {
  const { page } = await session(t, (home) => addNote(home, "Papers", "Filed here."));
  await openNote(page, "Papers");
  const pdf = readFileSync(new URL("../../../capture/tests/fixtures/letter.pdf", import.meta.url));
  await page.setInputFiles("#attach-input", { name: "letter.pdf", mimeType: "application/pdf", buffer: pdf });
  await expectText(page.locator("#status"), /Attached letter\.pdf/);
  // `quire serve` reads it within seconds: the search is asked again until a result names the file's page.
  const citation = page.locator("#notes .note-citation");
  await eventually(
    async () => {
      // Enter searches again, the same words too.
      await page.fill("#search", "quetzalcoatl");
      await page.press("#search", "Enter");
      await page.locator("#notes:not([aria-busy])").waitFor();
      return citation.count();
    },
    (count) => assert.equal(count, 1),
    { timeout: 30_000, interval: 500, message: "no search result named the PDF's page" },
  );
  await expectText(citation, /^in letter\.pdf, page 3$/);
  const href = await expectAttribute(citation, "href", /#page=3$/);
  // The browser's own viewer opens it: served as a PDF, not a download.
  const served = await page.evaluate(async (href) => {
    const response = await fetch(href);
    return [response.headers.get("content-type"), response.headers.get("content-disposition")];
  }, href);
  assert.deepEqual(served, ["application/pdf", null]);
  // Opened in a tab it shows (a download would fail the navigation), at the page (pdf-viewer.png: "3 / 3").
  const viewer = await page.context().newPage();
  const opened = await viewer.goto(new URL(href, page.url()).href);
  assert.equal(opened.status(), 200);
  await viewer.waitForLoadState("load");
  await viewer.screenshot({ path: join(SHOTS, "pdf-viewer.png") });
  await viewer.close();
  await page.screenshot({ path: join(SHOTS, "search-citation.png") });
});
