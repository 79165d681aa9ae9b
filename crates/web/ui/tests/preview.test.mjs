// The preview in a real browser: lists and task boxes that change the text, embedded images and notes, and links to
// headings, aliases, paths and missing notes.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { QUIRE, SHOTS, addNote, browserSuite, cli, eventually, expectCount, expectEditorText, expectText, openNote } from "./support.mjs";

const { session } = await browserSuite();

/// A small PNG (a blue and white checkerboard, 48x24).
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAADAAAAAYCAIAAAAzn+mLAAAAsUlEQVR4nO3UkZLCYRRA8R4mCIIgCBaCYCEImjlBEARBsLAQBAvBQhAEQRA0ZxaCIAiCIFgIgiAIot5gvR6gz3fmf2eu3TN3fnRzeSxgEUtYxgq+YRWv97+X08Ue9vEDP3GAQ/xK90v8wRWucYNb3OE+3ecCFKAAZQ6UWtTwHevYwCa2sI2d9KERfuMYJzjFGc5xke4P+ItHPOEZL88SbxigAAUoe6B/9xgDFKAAZQ30AEQgbgjPQucOAAAAAElFTkSuQmCC",
  "base64",
);

/// Writes an Obsidian vault of `files` (path to text or bytes) under the test's home and imports it.
function importVault(home, files) {
  const vault = join(home.dir, "vault");
  for (const [path, content] of Object.entries({ ".obsidian/app.json": "{}", ...files })) {
    mkdirSync(dirname(join(vault, path)), { recursive: true });
    writeFileSync(join(vault, path), content);
  }
  execFileSync(QUIRE, ["import", vault], { env: home.env, encoding: "utf8" });
}

test("the preview shows bullets and task boxes, and a click on a box marks the task in the text and saves it", async (t) => {
  const body = "# Launch\n\n- Freeze the branch\n- Tell the team\n\n- [ ] write changelog\n- [x] book the room\n\n```\n- [ ] not a task in code\n```\n";
  const { page, home } = await session(t, (home) => addNote(home, "Checklist", body));
  const id = cli(home, "note", "list").notes[0].note_id;
  await openNote(page, "Checklist");
  await page.click("#tab-preview");
  await eventually(
    () => page.locator("#preview li", { hasText: "Freeze the branch" }).evaluate((li) => getComputedStyle(li).listStyleType),
    (bullet) => assert.equal(bullet, "disc", "a note's list keeps its bullets"),
  );
  const boxes = page.locator("#preview .task-box.interactive");
  await expectCount(boxes, 2);
  await eventually(() => boxes.evaluateAll((b) => b.map((x) => x.getAttribute("aria-checked"))), (checked) => assert.deepEqual(checked, ["false", "true"]));
  await page.screenshot({ path: join(SHOTS, "preview-lists-tasks.png") });
  await boxes.first().click();
  await page.waitForFunction(() => document.querySelector("#save-state").textContent === "Saved");
  await page.waitForFunction(
    async (id) => (await (await fetch(`/api/notes/${id}`, { headers: { "x-quire-session": localStorage.getItem("quire-session") } })).json()).body.includes("- [x] write changelog"),
    id,
  );
  // By keyboard: Space on the second box unticks it.
  await page.locator("#preview .task-box.interactive").nth(1).focus();
  await page.keyboard.press(" ");
  await expectEditorText(page, body.replace("- [ ] write changelog", "- [x] write changelog").replace("- [x] book the room", "- [ ] book the room"));
  await expectEditorText(page, /- \[ \] not a task in code/, "code is left alone");
});

test("embeds: an image of the note's attachments, another note's text (no endless loop), and a heading link", async (t) => {
  const { page } = await session(t, (home) =>
    importVault(home, {
      "Home.md":
        "Our plan:\n\n![[diagram.png]]\n\n![[Alpha design]]\n\nSee [[Alpha design#Architecture|the architecture]].\n\n" +
        "![A diagram](attachments/diagram.png#wide)\n",
      "Alpha design.md": "Intro of alpha.\n\n![[Home]]\n\n## Goals\n\nShip it.\n\n## Architecture\n\nThree services talk over a queue.\n",
      "attachments/diagram.png": PNG,
    }),
  );
  await openNote(page, "Home");
  await page.click("#tab-preview");
  const image = page.locator("#preview img[alt='diagram.png']");
  await image.waitFor();
  await page.waitForFunction(() => document.querySelector("#preview img")?.naturalWidth === 48, null, { timeout: 10_000 });
  // A Markdown image with its own alt text and an anchor after the file (interop finding 2-#12) loads too.
  await page.waitForFunction(
    () => document.querySelector("#preview img[alt='A diagram']")?.naturalWidth === 48,
    null,
    { timeout: 10_000 },
  );
  const embedded = page.locator("#preview .embed.filled .embed-body").first();
  await embedded.getByText("Three services talk over a queue.").waitFor();
  // Alpha design embeds Home, which is already on the way: it stays a link.
  await expectText(embedded, /Home \(not embedded again/);
  await page.screenshot({ path: join(SHOTS, "preview-embeds.png") });
  await page.locator("#preview > p a.wikilink", { hasText: "the architecture" }).click();
  await page.waitForFunction(() => document.querySelector("#title").value === "Alpha design");
  await eventually(
    () =>
      page.evaluate(() => {
        const state = document.querySelector("#editor .cm-content").cmTile.root.view.state;
        return state.doc.lineAt(state.selection.main.head).text;
      }),
    (line) => assert.equal(line, "## Architecture", "the heading the link names"),
  );
  await expectCount(page.locator("#status.error"), 0);
});

test("a link to a missing note offers to create it, and the new note opens", async (t) => {
  const { page, home } = await session(t, (home) => addNote(home, "Index", "See [[Meeting notes]] and [[Index]]."));
  await openNote(page, "Index");
  await page.click("#tab-preview");
  const missing = page.locator("#preview a.missing-link", { hasText: "Meeting notes" });
  await missing.click();
  const dialog = page.getByRole("dialog", { name: "Create note" });
  await dialog.getByRole("button", { name: "Create “Meeting notes”" }).click();
  await page.waitForFunction(() => document.querySelector("#title").value === "Meeting notes");
  await eventually(() => cli(home, "note", "list").notes, (notes) => assert.ok(notes.some((n) => n.title === "Meeting notes")));
  // A short wait: a message goes by itself after a while, which a longer one could outlast.
  await eventually(() => page.locator("#status").innerText(), (text) => assert.doesNotMatch(text, /No note is titled/), { timeout: 1_000 });
});

test("a link to a note's alias or path opens that note, and a title two notes share is not shown as missing", async (t) => {
  const { page } = await session(t, (home) => {
    const target = addNote(home, "Quarterly plan", "The plan.", "--notebook", "Work");
    cli(home, "tools", "call", "set_attribute", JSON.stringify({ note_id: target.note_id, type: "label", name: "aliases", value: "Q-plan" }));
    addNote(home, "Twin", "one");
    addNote(home, "Twin", "two");
    addNote(home, "Links", "See [[Q-plan]], [[Work/Quarterly plan]] and [[Twin]].");
  });
  await openNote(page, "Links");
  await page.click("#tab-preview");
  const preview = page.locator("#preview");
  await preview.locator("a", { hasText: "Twin" }).waitFor();
  // The preview draws its links and which are missing at once: with "Twin" there, the rest is settled.
  await expectCount(preview.locator("a.missing-link"), 0, "neither an alias, a path nor a shared title is missing");
  await preview.locator("a", { hasText: "Q-plan" }).click();
  await page.waitForFunction(() => document.querySelector("#title")?.value === "Quarterly plan");
  await expectCount(page.getByRole("dialog"), 0, "no offer to create a second note");
  await openNote(page, "Links");
  await page.click("#tab-preview");
  await page.locator("#preview a", { hasText: "Work/Quarterly plan" }).click();
  await page.waitForFunction(() => document.querySelector("#title")?.value === "Quarterly plan");
});
