// The page for everyone, in a real browser: no serious accessibility problem on the main screens, one pane at a time
// at phone width, and the keyboard (the tree's Tab stops and arrows, the shortcuts and their help).
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { SHOTS, addNote, axeClean, browserSuite, cli, eventually, expectAttribute, expectEditorText, expectHidden, expectText, expectVisible, openNote } from "./support.mjs";

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
  await expectEditorText(page, "# Monday\n\n- agree on the plan\n- send the summary\n");
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
  // What shows first (the layout has switched to one pane), then what does not.
  const visible = (selector) => expectVisible(page.locator(selector));
  const hidden = (selector) => expectHidden(page.locator(selector));
  // The element's box, once `check` holds for it.
  const box = (selector, check) => eventually(() => page.locator(selector).boundingBox(), check);
  await visible("#pane-bar");
  await visible("#list-pane");
  await hidden("#note-pane");
  await hidden("#sidebar");
  await axeClean(page, "phone: notes");
  await page.locator("#notes .note-item", { hasText: "Trip" }).click();
  await page.waitForFunction(() => document.querySelector("#title").value === "Trip");
  await visible("#note-pane");
  await hidden("#list-pane");
  await box("#title", (title) => assert.ok(title && title.y >= 0 && title.y < 844, "the note starts on screen"));
  await box("#editor", (editor) => assert.ok(editor && editor.y < 844, "the editor is on screen"));
  await expectAttribute(page.locator("#pane-note"), "aria-pressed", "true");
  await axeClean(page, "phone: note");
  await page.screenshot({ path: join(SHOTS, "phone-layout.png") });
  // The assistant is a sheet over the note: the note stays in view above it.
  await page.click("#pane-assistant");
  await visible("#sidebar");
  await visible("#note-pane");
  await box("#sidebar", (sheet) => assert.ok(sheet && sheet.y > 100 && sheet.y + sheet.height <= 844, `a sheet: ${JSON.stringify(sheet)}`));
  await box("#message", (message) => assert.ok(message && message.y + message.height <= 844, "the message box is on screen"));
  await axeClean(page, "phone: assistant");
  await page.screenshot({ path: join(SHOTS, "phone-assistant.png") });
  await page.click("#pane-list");
  await visible("#list-pane");
  await hidden("#tree-pane");
  // The notebooks, and search, have buttons of their own; every button is a 44 px target.
  await page.click("#pane-notebooks");
  await visible("#tree-pane");
  await hidden("#list-pane");
  await page.click("#pane-search");
  await visible("#search");
  await eventually(() => page.evaluate(() => document.activeElement?.id), (id) => assert.equal(id, "search"));
  await box("#pane-search", (b) => assert.ok(b && b.height >= 44, `44 px: ${JSON.stringify(b)}`));
});

test("keyboard: one Tab stop per notebook, its tools by arrow keys; shortcuts for a new note, search, the assistant and the editor, listed by ?", async (t) => {
  const { page } = await session(t, (home) => {
    for (const title of ["Big", "Personal", "Work"]) cli(home, "tools", "call", "create_notebook", JSON.stringify({ title }));
    for (let i = 0; i < 30; i++) addNote(home, `Note ${i}`, "x", "--notebook", "Big");
  });
  await page.setViewportSize({ width: 1400, height: 900 });
  // "+ Notebook" stays on one line, and the chosen notebook's name is not cut by its tools.
  await eventually(
    () => page.locator("#new-notebook").boundingBox(),
    (button) => assert.ok(button && button.height < 40, `one line: ${JSON.stringify(button)}`),
  );
  const big = page.locator("#tree .tree-item", { hasText: "Big" });
  await big.click();
  await eventually(() => big.evaluate((b) => b.scrollWidth <= b.clientWidth), (whole) => assert.equal(whole, true, "Big (30) shows whole"));
  await expectText(big, "Big (30)");
  // Tab goes through the tree one row at a time.
  // Focused again until it holds: a live update that redraws the tree just then would take the focus away.
  await page.waitForFunction(() => {
    const all = [...document.querySelectorAll("#tree .tree-item")].find((e) => e.textContent === "All notes");
    all?.focus();
    return document.activeElement === all;
  });
  // Each stop in turn, and after the last one Tab leaves the tree.
  const focused = () =>
    page.evaluate(() => ({
      id: document.activeElement.id,
      text: document.activeElement.textContent,
      label: document.activeElement.getAttribute("aria-label"),
      inTree: !!document.activeElement.closest("#tree"),
    }));
  const stops = ["All notes", "Top level", "Big (30)", "Personal (0)", "Work (0)", "Trash"];
  for (const [i, stop] of stops.entries()) {
    await eventually(focused, (f) => assert.deepEqual([f.inTree, f.text], [true, stop], `Tab stop ${i + 1} of ${stops.join(", ")}`));
    await page.keyboard.press("Tab");
  }
  await eventually(focused, (f) => assert.equal(f.inTree, false, `no Tab stop in the tree after ${stops.join(", ")}`));
  // The arrows reach a notebook's tools.
  await big.focus();
  await page.keyboard.press("ArrowDown");
  await eventually(focused, (f) => assert.equal(f.text, "Personal (0)"));
  await page.keyboard.press("ArrowRight");
  await page.keyboard.press("ArrowRight");
  await eventually(focused, (f) => assert.equal(f.label, "Rename Personal"));
  await page.keyboard.press("Enter");
  await page.getByRole("dialog", { name: "Rename notebook" }).waitFor();
  await page.keyboard.press("Escape");
  await page.locator("dialog").waitFor({ state: "detached" });
  // Shortcuts.
  await page.locator("#list-title").click();
  await page.keyboard.press("?");
  const help = page.getByRole("dialog", { name: "Keyboard shortcuts" });
  await help.waitFor();
  await expectText(help, /New note[\s\S]*Search[\s\S]*assistant[\s\S]*Edit/);
  await axeClean(page, "help");
  await page.screenshot({ path: join(SHOTS, "shortcuts-help.png") });
  await page.keyboard.press("Escape");
  await help.waitFor({ state: "detached" });
  await page.keyboard.press("/");
  await eventually(focused, (f) => assert.equal(f.id, "search"));
  await page.keyboard.press("Escape");
  await page.locator("#list-title").click();
  await page.keyboard.press("n");
  await page.waitForFunction(() => document.activeElement?.id === "title" && document.querySelector("#title").value === "Untitled");
  await page.keyboard.press("Alt+Shift+A");
  await eventually(focused, (f) => assert.equal(f.id, "message"));
  await page.keyboard.press("Alt+Shift+E");
  await page.waitForFunction(() => document.activeElement?.closest("#editor") !== null);
});

test("a live update that redraws the tree keeps the keyboard where it was: on the row, or on the row's tool", async (t) => {
  const { page, home } = await session(t, (home) => cli(home, "tools", "call", "create_notebook", JSON.stringify({ title: "Work" })));
  const focused = () => page.evaluate(() => ({ text: document.activeElement.textContent, label: document.activeElement.getAttribute("aria-label") }));
  const work = page.locator("#tree .tree-item", { hasText: "Work (0)" });
  await work.focus();
  await eventually(focused, (f) => assert.equal(f.text, "Work (0)"));
  // A notebook made elsewhere (the terminal) reaches the open page, whose tree is drawn again.
  cli(home, "tools", "call", "create_notebook", JSON.stringify({ title: "Later" }));
  await page.locator("#tree .tree-item", { hasText: "Later (0)" }).waitFor();
  await eventually(focused, (f) => assert.equal(f.text, "Work (0)", "the focus stayed on the row"));
  await page.keyboard.press("Tab");
  await eventually(focused, (f) => assert.equal(f.text, "Trash", "and Tab goes on from there (Later sorts before Work)"));
  // On a row's tool, the same tool of the same row after the redraw.
  await work.focus();
  await page.keyboard.press("ArrowRight");
  await page.keyboard.press("ArrowRight");
  await eventually(focused, (f) => assert.equal(f.label, "Rename Work"));
  cli(home, "note", "add", "--title", "Into Work", "--body", "x", "--notebook", "Work");
  await page.locator("#tree .tree-item", { hasText: "Work (1)" }).waitFor();
  await eventually(focused, (f) => assert.equal(f.label, "Rename Work", "the focus stayed on the tool"));
});
