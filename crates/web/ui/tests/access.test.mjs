// The page for everyone, in a real browser: no serious accessibility problem on the main screens, one pane at a time
// at phone width, and the keyboard (the tree's Tab stops and arrows, the shortcuts and their help).
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { SHOTS, addNote, axeClean, browserSuite, cli, editorText, openNote } from "./support.mjs";

const { session } = await browserSuite();

test("the main screens have no serious accessibility problems; screenshots", async (t) => {
  const { page } = await session(t, (home) => {
    const note = addNote(home, "Meeting notes", "# Monday\n\n- agree on the plan\n- send the summary\n", "--tag", "work");
    cli(home, "tools", "call", "update_note", JSON.stringify({ note_id: note.note_id, body: "# Monday\n\n- agree on the plan\n" }));
  });
  const check = (screen) => axeClean(page, screen);
  await check("start");
  await openNote(page, "Meeting notes");
  await check("editor");
  await page.click("#tab-history");
  await page.locator("details.revision summary").first().click();
  await page.locator(".diff").waitFor();
  await check("history");
  await page.screenshot({ path: join(SHOTS, "history.png") });
  await page.getByRole("button", { name: "Restore this version" }).click();
  await page.click("#tab-edit");
  assert.equal(await editorText(page), "# Monday\n\n- agree on the plan\n- send the summary\n");
  await page.click("#recent-button");
  await page.locator("#recent .change-sets").waitFor();
  await check("recent changes");
});

test("at phone width one pane shows at a time: tapping a note shows it, the bar switches to the assistant", async (t) => {
  const { page } = await session(t, (home) => {
    addNote(home, "Groceries", "- milk\n- bread\n");
    addNote(home, "Trip", "Pack the tent.");
  });
  await page.setViewportSize({ width: 390, height: 844 });
  const visible = (selector) => page.locator(selector).isVisible();
  assert.equal(await visible("#pane-bar"), true);
  assert.equal(await visible("#list-pane"), true);
  assert.equal(await visible("#note-pane"), false);
  assert.equal(await visible("#sidebar"), false);
  await axeClean(page, "phone: notes");
  await page.locator("#notes .note-item", { hasText: "Trip" }).click();
  await page.waitForFunction(() => document.querySelector("#title").value === "Trip");
  assert.equal(await visible("#note-pane"), true);
  assert.equal(await visible("#list-pane"), false);
  const title = await page.locator("#title").boundingBox();
  assert.ok(title && title.y >= 0 && title.y < 844, "the note starts on screen");
  const editor = await page.locator("#editor").boundingBox();
  assert.ok(editor && editor.y < 844, "the editor is on screen");
  assert.equal(await page.locator("#pane-note").getAttribute("aria-pressed"), "true");
  await axeClean(page, "phone: note");
  await page.screenshot({ path: join(SHOTS, "phone-layout.png") });
  await page.click("#pane-assistant");
  assert.equal(await visible("#sidebar"), true);
  assert.equal(await visible("#note-pane"), false);
  const box = await page.locator("#message").boundingBox();
  assert.ok(box && box.y + box.height <= 844, "the message box is on screen");
  await axeClean(page, "phone: assistant");
  await page.screenshot({ path: join(SHOTS, "phone-assistant.png") });
  await page.click("#pane-list");
  assert.equal(await visible("#list-pane"), true);
});

test("keyboard: one Tab stop per notebook, its tools by arrow keys; shortcuts for a new note, search, the assistant and the editor, listed by ?", async (t) => {
  const { page } = await session(t, (home) => {
    for (const title of ["Big", "Personal", "Work"]) cli(home, "tools", "call", "create_notebook", JSON.stringify({ title }));
    for (let i = 0; i < 30; i++) addNote(home, `Note ${i}`, "x", "--notebook", "Big");
  });
  await page.setViewportSize({ width: 1400, height: 900 });
  // "+ Notebook" stays on one line, and the chosen notebook's name is not cut by its tools.
  const button = await page.locator("#new-notebook").boundingBox();
  assert.ok(button && button.height < 40, `one line: ${JSON.stringify(button)}`);
  const big = page.locator("#tree .tree-item", { hasText: "Big" });
  await big.click();
  assert.equal(await big.evaluate((b) => b.scrollWidth <= b.clientWidth), true, "Big (30) shows whole");
  assert.equal(await big.innerText(), "Big (30)");
  // Tab goes through the tree one row at a time.
  // Focused again until it holds: a live update that redraws the tree just then would take the focus away.
  await page.waitForFunction(() => {
    const all = [...document.querySelectorAll("#tree .tree-item")].find((e) => e.textContent === "All notes");
    all?.focus();
    return document.activeElement === all;
  });
  const stops = [];
  for (let i = 0; i < 10; i++) {
    const where = await page.evaluate(() => (document.activeElement.closest("#tree") ? document.activeElement.textContent : null));
    if (where === null) break;
    stops.push(where);
    await page.keyboard.press("Tab");
  }
  assert.deepEqual(stops, ["All notes", "Top level", "Big (30)", "Personal (0)", "Work (0)", "Trash"]);
  // The arrows reach a notebook's tools.
  await big.focus();
  await page.keyboard.press("ArrowDown");
  assert.equal(await page.evaluate(() => document.activeElement.textContent), "Personal (0)");
  await page.keyboard.press("ArrowRight");
  await page.keyboard.press("ArrowRight");
  assert.equal(await page.evaluate(() => document.activeElement.getAttribute("aria-label")), "Rename Personal");
  await page.keyboard.press("Enter");
  await page.getByRole("dialog", { name: "Rename notebook" }).waitFor();
  await page.keyboard.press("Escape");
  await page.locator("dialog").waitFor({ state: "detached" });
  // Shortcuts.
  await page.locator("#list-title").click();
  await page.keyboard.press("?");
  const help = page.getByRole("dialog", { name: "Keyboard shortcuts" });
  await help.waitFor();
  assert.match(await help.innerText(), /New note[\s\S]*Search[\s\S]*assistant[\s\S]*Edit/);
  await axeClean(page, "help");
  await page.screenshot({ path: join(SHOTS, "shortcuts-help.png") });
  await page.keyboard.press("Escape");
  await help.waitFor({ state: "detached" });
  await page.keyboard.press("/");
  assert.equal(await page.evaluate(() => document.activeElement.id), "search");
  await page.keyboard.press("Escape");
  await page.locator("#list-title").click();
  await page.keyboard.press("n");
  await page.waitForFunction(() => document.activeElement?.id === "title" && document.querySelector("#title").value === "Untitled");
  await page.keyboard.press("Alt+Shift+A");
  assert.equal(await page.evaluate(() => document.activeElement.id), "message");
  await page.keyboard.press("Alt+Shift+E");
  await page.waitForFunction(() => document.activeElement?.closest("#editor") !== null);
});
