// Notes and notebooks in a real browser: writing a note and finding it again, a stale save's conflict, changes made
// elsewhere, renaming with the links that follow, notebooks made, moved into and deleted through the page's own
// dialogs, moving notes, All notes and the tree's counts, empty states, status messages and undo.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { test } from "node:test";
import { QUIRE, SHOTS, addNote, axeClean, browserSuite, cli, eventually, expectCount, expectEditorText, expectHidden, expectText, expectValue, expectVisible, openNote, serverNote } from "./support.mjs";

const { session } = await browserSuite();

test("create a notebook and a note, type, reload and find the text", async (t) => {
  const { page } = await session(t);
  await page.click("#new-notebook");
  await page.getByRole("dialog").getByLabel("Name of the new notebook").fill("Travel");
  await page.getByRole("dialog").getByRole("button", { name: "Create" }).click();
  await page.locator("#tree .tree-item", { hasText: "Travel" }).click();
  await page.click("#new-note");
  await page.waitForFunction(() => document.activeElement?.id === "title" && document.querySelector("#title").value === "Untitled");
  // Enter in the title goes on to the text.
  await page.keyboard.type("Lisbon");
  await page.keyboard.press("Enter");
  await page.keyboard.type("Pastéis de nata at the bakery by the river.");
  await expectValue(page.locator("#title"), "Lisbon");
  await page.waitForFunction(() => document.querySelector("#save-state").textContent === "Saved");
  await page.reload();
  await page.waitForSelector("#tree .tree-item");
  // Search runs as you type.
  await page.locator("#search").pressSequentially("bakery");
  await page.locator("#notes .note-item", { hasText: "Lisbon" }).click();
  await page.waitForFunction(() => document.querySelector("#title").value === "Lisbon");
  await expectEditorText(page, "Pastéis de nata at the bakery by the river.");
  await expectText(page.locator("#notes"), /Travel/);
});

test("a stale save shows the conflict and loses nothing", async (t) => {
  const { page, home, expect } = await session(t, (home) => addNote(home, "Shared", "version one"));
  expect(/status of 409/);
  const id = cli(home, "note", "list").notes[0].note_id;
  await openNote(page, "Shared");
  cli(home, "tools", "call", "update_note", JSON.stringify({ note_id: id, body: "changed by an AI client" }));
  await page.click("#editor .cm-content");
  await page.keyboard.press("End");
  await page.keyboard.type(" plus my words");
  await page.locator("#conflict").waitFor();
  await expectText(page.locator("#conflict-text"), /changed since it was loaded/);
  await expectEditorText(page, "version one plus my words", "the user's text stays in the editor");
  await page.click("#conflict-keep");
  await page.waitForFunction(() => document.querySelector("#save-state").textContent === "Saved");
  await eventually(() => serverNote(page, id), (note) => assert.equal(note.body, "version one plus my words"));
  await eventually(() => cli(home, "note", "revisions", id).revisions, (revisions) => assert.equal(revisions.some((r) => r.title === "Shared"), true));

  // Again, choosing their version: it loads, and mine stays on screen to copy from.
  cli(home, "tools", "call", "update_note", JSON.stringify({ note_id: id, body: "second from a client" }));
  await page.click("#editor .cm-content");
  await page.keyboard.press("End");
  await page.keyboard.type(" again");
  await page.locator("#conflict-load").click();
  await expectEditorText(page, "second from a client");
  await expectValue(page.locator("#conflict-mine"), "version one plus my words again");
  // A third conflict offers both choices again, with only this text. (The client's change touches the words typed
  // here; a change of other words merges instead, below.)
  cli(home, "tools", "call", "update_note", JSON.stringify({ note_id: id, body: "a wholly different text" }));
  await page.click("#editor .cm-content");
  await page.keyboard.type("!");
  await page.locator("#conflict-keep").waitFor();
  await expectVisible(page.locator("#conflict-load"));
  await expectHidden(page.locator("#conflict-mine"));
  await page.click("#conflict-keep");
  await page.waitForFunction(() => document.querySelector("#save-state").textContent === "Saved");

  // Tags changed after a client's edit, with nothing unsaved here: their version loads and the tag goes on it.
  cli(home, "tools", "call", "update_note", JSON.stringify({ note_id: id, body: "fourth from a client" }));
  await page.fill("#tags", "shared");
  await page.press("#tags", "Tab");
  await page.waitForFunction(async (id) => (await (await fetch(`/api/notes/${id}`, { headers: { "x-quire-session": localStorage.getItem("quire-session") } })).json()).tags.includes("shared"), id);
  await eventually(() => serverNote(page, id), (note) => assert.equal(note.body, "fourth from a client"));
  await expectEditorText(page, "fourth from a client");

});

test("changes made elsewhere show in the open page: the tree, the list, and the open note", async (t) => {
  const { page, home, expect } = await session(t, (home) => addNote(home, "Shared", "version one"));
  expect(/status of 409/);
  const id = cli(home, "note", "list").notes[0].note_id;
  await openNote(page, "Shared");
  // The quire command adds a notebook and a note: they appear without a reload.
  cli(home, "tools", "call", "create_notebook", JSON.stringify({ title: "Imported" }));
  addNote(home, "From the command line", "hello");
  await page.locator("#tree .tree-item", { hasText: "Imported" }).waitFor();
  await page.locator("#notes .note-item", { hasText: "From the command line" }).waitFor();
  // An AI client edits the open note while nothing is typed here: the new text loads.
  cli(home, "tools", "call", "update_note", JSON.stringify({ note_id: id, body: "changed by an AI client" }));
  await page.waitForFunction(() => document.querySelector("#editor .cm-content").innerText.includes("changed by an AI client"));
  await page.locator("#status", { hasText: "changed elsewhere" }).waitFor();
  await expectHidden(page.locator("#conflict"));
  // Typing here, then a change elsewhere: the conflict says so, their version loads, and the panel closes when done.
  await page.click("#editor .cm-content");
  await page.keyboard.press("End");
  await page.keyboard.type(" and mine");
  await page.waitForFunction(() => document.querySelector("#save-state").textContent === "Saved");
  cli(home, "tools", "call", "update_note", JSON.stringify({ note_id: id, body: "second from a client" }));
  await page.keyboard.type(" again");
  await page.locator("#conflict-load").waitFor();
  await page.click("#conflict-load");
  await expectEditorText(page, "second from a client");
  await expectText(page.locator("#conflict-text"), /Their version is loaded/);
  await page.getByRole("button", { name: "Close", exact: true }).click();
  await expectHidden(page.locator("#conflict"));
  await expectHidden(page.locator("#conflict-mine"));
});

test("backlinks show the words around a link, and renaming a note updates the links to it", async (t) => {
  const { page } = await session(t, (home) => {
    addNote(home, "Garden plan", "Tomatoes by the fence.");
    addNote(home, "Journal", "Spent the morning on [[Garden plan]] before the rain came.");
  });
  await openNote(page, "Garden plan");
  await page.locator("#backlinks li", { hasText: "Journal" }).waitFor();
  await expectText(page.locator("#backlinks"), /morning on \[\[Garden plan\]\] before the rain/);
  await page.fill("#title", "Vegetable garden");
  await page.press("#title", "Enter");
  await page.waitForFunction(() => document.querySelector("#status").textContent.includes("1 note linking here now uses the new title"));
  await page.waitForFunction(() => document.querySelector("#save-state").textContent === "Saved");
  await openNote(page, "Journal");
  await expectEditorText(page, "Spent the morning on [[Vegetable garden]] before the rain came.");
  await openNote(page, "Vegetable garden");
  await page.locator("#backlinks li", { hasText: "Journal" }).waitFor();
});

test("dialogs are the page's own: an empty name and a refused one are said in the dialog", async (t) => {
  const { page, expect } = await session(t);
  expect(/status of 400/);
  let native = 0;
  page.on("dialog", (d) => {
    native++;
    void d.dismiss();
  });
  await page.click("#new-notebook");
  const dialog = page.getByRole("dialog");
  await dialog.getByRole("button", { name: "Create" }).click();
  await expectText(dialog.getByRole("alert"), /Give the notebook a name/);
  // The server's refusal stays in the dialog, whole, and the text can be corrected.
  await dialog.getByLabel("Name of the new notebook").fill("x".repeat(1001));
  await dialog.getByRole("button", { name: "Create" }).click();
  await dialog.getByRole("alert").filter({ hasText: "longer than 1000 characters" }).waitFor();
  await page.screenshot({ path: join(SHOTS, "dialog-refusal.png") });
  await dialog.getByLabel("Name of the new notebook").fill("Work");
  await dialog.getByRole("button", { name: "Create" }).click();
  await page.locator("#tree .tree-item", { hasText: "Work" }).waitFor();
  await expectCount(page.getByRole("dialog"), 0);
  // Deleting asks in the page too.
  await page.locator("#tree li", { hasText: "Work" }).hover();
  await page.getByRole("button", { name: "Delete Work" }).click();
  await page.getByRole("dialog").getByRole("button", { name: "Delete" }).click();
  await page.locator("#tree .tree-item", { hasText: "Work" }).waitFor({ state: "detached" });
  assert.equal(native, 0, "no prompt() or confirm()");
});

test("a '/' in a new notebook's name makes the path, as quire notebook add does; a path that exists is refused in the dialog", async (t) => {
  const { page, home, expect } = await session(t, (home) => cli(home, "tools", "call", "create_notebook", JSON.stringify({ title: "Work" })));
  expect(/status of 400/);
  await page.click("#new-notebook");
  let dialog = page.getByRole("dialog");
  await dialog.getByLabel("Name of the new notebook").fill("Work/Projects");
  await dialog.getByRole("button", { name: "Create" }).click();
  await page.locator("#tree .tree-item", { hasText: "Projects" }).waitFor();
  const paths = await eventually(
    () => cli(home, "notebook", "list").notebooks.map((n) => n.path),
    (paths) => {
      assert.ok(paths.includes("Work/Projects"), JSON.stringify(paths));
      assert.equal(paths.filter((p) => p === "Work").length, 1, "Work is found, not made again");
    },
  );
  // The same path again: said in the dialog, nothing made.
  await page.click("#new-notebook");
  dialog = page.getByRole("dialog");
  await dialog.getByLabel("Name of the new notebook").fill("work/projects");
  await dialog.getByRole("button", { name: "Create" }).click();
  const alert = dialog.getByRole("alert");
  await alert.filter({ hasText: "exists already" }).waitFor();
  await page.screenshot({ path: join(SHOTS, "dialog-slash.png") });
  await dialog.getByRole("button", { name: "Cancel" }).click();
  await eventually(() => cli(home, "notebook", "list").notebooks.length, (count) => assert.equal(count, paths.length));
});

test("a note moves to another notebook by dragging it onto the tree, or with Move… and a notebook picker", async (t) => {
  const { page, home } = await session(t, (home) => {
    cli(home, "tools", "call", "create_notebook", JSON.stringify({ title: "Work" }));
    cli(home, "tools", "call", "create_notebook", JSON.stringify({ title: "Home" }));
    addNote(home, "Quarterly plan", "numbers");
  });
  await page.locator("#notes .note-item", { hasText: "Quarterly plan" }).dragTo(page.locator("#tree .tree-item", { hasText: "Work" }));
  await page.locator("#status", { hasText: "Moved “Quarterly plan”" }).waitFor();
  await eventually(() => cli(home, "note", "list", "--notebook", "Work").notes[0]?.title, (title) => assert.equal(title, "Quarterly plan"));
  await expectCount(page.locator("#notes .note-item", { hasText: "Quarterly plan" }), 0, "it left the top level's list");
  await page.locator("#tree .tree-item", { hasText: "Work (1)" }).click();
  await openNote(page, "Quarterly plan");
  await page.click("#move-note");
  const dialog = page.getByRole("dialog", { name: "Move note" });
  await dialog.getByLabel("Move “Quarterly plan” to the notebook").selectOption({ label: "Home" });
  await page.screenshot({ path: join(SHOTS, "move-dialog.png") });
  await dialog.getByRole("button", { name: "Move" }).click();
  await page.locator("#status", { hasText: "Moved “Quarterly plan” to “Home”" }).waitFor();
  // The dialog closes once the tree and the list are loaded again, just after the message.
  await page.locator("dialog").waitFor({ state: "detached" });
  await eventually(() => cli(home, "note", "list", "--notebook", "Home").notes[0]?.title, (title) => assert.equal(title, "Quarterly plan"));
  // The open note keeps working: typing after the move saves without a conflict.
  await page.click("#editor .cm-content");
  await page.keyboard.press("End");
  await page.keyboard.type(" and more");
  await page.waitForFunction(() => document.querySelector("#save-state").textContent === "Saved");
  await expectHidden(page.locator("#conflict"));
  await expectText(page.locator("#tree"), /Home \(1\)/);
});

test("All notes lists every notebook's notes, and a notebook's count includes its sub-notebooks'", async (t) => {
  const { page } = await session(t, (home) => {
    const bulk = JSON.parse(execFileSync(QUIRE, ["--json", "tools", "call", "create_notebook", JSON.stringify({ title: "Bulk" })], { env: home.env, encoding: "utf8" }));
    const parent = bulk.notebook_id ?? bulk.notebook?.notebook_id ?? bulk.id;
    cli(home, "tools", "call", "create_notebook", JSON.stringify({ title: "Big", parent_id: parent }));
    for (const title of ["One", "Two", "Three"]) addNote(home, title, "x", "--notebook", "Bulk/Big");
    addNote(home, "Loose", "y");
  });
  await expectText(page.locator("#tree"), /Bulk \(3\)[\s\S]*Big \(3\)/);
  await page.locator("#tree .tree-item", { hasText: "All notes" }).click();
  await page.waitForFunction(() => document.querySelector("#list-title").textContent === "All notes");
  await page.locator("#notes .note-item", { hasText: "Three" }).waitFor();
  await eventually(() => page.locator("#notes .note-title").allInnerTexts(), (titles) => assert.deepEqual([...titles].sort(), ["Loose", "One", "Three", "Two"]));
  await expectText(page.locator("#notes"), /Bulk\/Big/);
});

test("empty states say what the place is for, and an empty workspace opens on a welcome", async (t) => {
  const { page } = await session(t);
  await page.locator("#empty .welcome").waitFor();
  await expectText(page.locator("#empty"), /Welcome to quire/);
  await axeClean(page, "first run");
  await page.screenshot({ path: join(SHOTS, "first-run.png") });
  await page.locator("#tree .tree-item", { hasText: "Trash" }).click();
  await page.locator("#notes .empty-state", { hasText: "The trash is empty" }).waitFor();
  await page.locator("#tree .tree-item", { hasText: "Top level" }).click();
  await page.getByRole("button", { name: "Write your first note" }).click();
  await page.waitForFunction(() => document.querySelector("#title").value === "Untitled");
  await page.check("#todos-only");
  await expectText(page.locator("#notes"), /None of these notes is a to-do/);
  await page.uncheck("#todos-only");
  await page.click("#new-notebook");
  await page.getByRole("dialog").getByLabel("Name of the new notebook").fill("Recipes");
  await page.getByRole("dialog").getByRole("button", { name: "Create" }).click();
  await page.locator("#tree .tree-item", { hasText: "Recipes" }).click();
  await expectText(page.locator("#notes .empty-state"), /“Recipes” has no notes yet/);
});

test("status messages are whole, readable, and go away", async (t) => {
  const long = "A note with a rather long title that is there, to make the message long";
  const { page } = await session(t, (home) => addNote(home, long, "words"));
  await openNote(page, long);
  await page.click("#trash");
  const message = page.locator("#status");
  await page.waitForFunction(() => document.querySelector("#status").textContent.includes("is in the trash"));
  await expectText(message, /to make the message long” is in the trash; restore it from there\./, "the whole message");
  await eventually(
    () => message.evaluate((s) => ({ scroll: s.scrollWidth, client: s.clientWidth })),
    (box) => assert.ok(box.scroll <= box.client + 1, `not cut off: ${JSON.stringify(box)}`),
  );
  await page.screenshot({ path: join(SHOTS, "status-wrapped.png") });
  // The next action takes it away, once the message had 1.5 s to be read: the person clicks until it goes, which
  // must be well before the 8 s after which news goes by itself (so it is the click's doing).
  await eventually(
    async () => {
      await page.click("#tab-edit");
      return page.evaluate(() => document.querySelector("#status").textContent);
    },
    (text) => assert.equal(text, "", "a click after the reading pause took the message away"),
    { timeout: 5_000, interval: 250 },
  );
});

test("an undo refused by a later change says so in words and offers to undo both", async (t) => {
  const { page, expect } = await session(t, (home) => {
    const note = addNote(home, "Launch plan", "Ship in May.");
    cli(home, "tools", "call", "update_note", JSON.stringify({ note_id: note.note_id, body: "Ship in June." }));
    const revision = cli(home, "note", "revisions", note.note_id).revisions[0].revision;
    // The person puts their own text back: a later change to the same note.
    cli(home, "note", "restore", note.note_id, String(revision));
  });
  expect(/409 \(Conflict\)/);
  await page.click("#recent-button");
  const item = page.locator("#recent .change-sets li", { hasText: "mcp client" }).first();
  await item.getByRole("button", { name: "Undo" }).click();
  const dialog = page.getByRole("dialog", { name: "Undo the later change too?" });
  await dialog.waitFor();
  await eventually(
    () => dialog.innerText(),
    (said) => {
      assert.match(said, /Cannot undo: the note “?"?Launch plan"?”? was changed again afterwards, by you on/);
      assert.doesNotMatch(said, /[0-9a-f]{32}/, "no ids");
    },
  );
  await page.screenshot({ path: join(SHOTS, "undo-both.png") });
  const rows = page.locator("#recent .change-sets > li");
  let before = 0;
  await eventually(() => rows.count(), (count) => {
    assert.ok(count > 0, "the list is drawn");
    before = count;
  });
  await dialog.getByRole("button", { name: "Undo both" }).click();
  await page.locator("#status", { hasText: "and 1 later change" }).waitFor();
  // The open list follows (ux-2 #5): the undo is a new entry, and both changes are marked undone, without Undo.
  await eventually(() => rows.count(), (count) => assert.equal(count, before + 1));
  await eventually(
    () => page.locator("#recent .change-sets > li").filter({ has: page.locator(".who", { hasText: "mcp client" }) }).first().innerText(),
    (text) => assert.match(text, /undone/i),
  );
  // The undo's own entry says it is an undo, and of whose change (ux-2 #13).
  await expectText(page.locator("#recent .change-sets > li").first().locator(".undo-of"), /^Undo of mcp client .*'s change of /);
  await openNote(page, "Launch plan");
  await expectEditorText(page, "Ship in May.");
});
