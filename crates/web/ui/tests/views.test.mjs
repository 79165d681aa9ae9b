// Saved views and query blocks in a real browser: a note's ```query and ```dataview blocks render as a table (sorted
// by a header, a cell edited back into its note), a board (a card moved by its menu and by dragging sets the field),
// a list, a task list (a box completes the task in its note) and a calendar; the Today button and "From template".
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { SHOTS, addNote, axeClean, browserSuite, cli, eventually, expectAttribute, expectCount, expectText, openNote } from "./support.mjs";

const { session } = await browserSuite();

const fence = (info, query) => "```" + info + "\n" + query + "\n```\n";

const VIEWS =
  "# Reading\n\n" +
  fence("query", "TABLE rating, status FROM #book SORT file.name") +
  "\n## Board\n\n" +
  fence("query board", "TABLE FROM #book GROUP BY status SORT key") +
  "\n" +
  fence("dataview", "LIST FROM #book SORT file.name") +
  "\n" +
  fence("dataview", "TASK FROM #book WHERE !completed") +
  "\n" +
  fence("query calendar", "TASK FROM #book WHERE due") +
  "\n" +
  fence("dataviewjs", "dv.table(['x'], [])") +
  "\n" +
  fence("query", "TABLE WHERE (") +
  "\n";

function seed(home) {
  const dune = addNote(home, "Dune", "rating:: 4\nstatus:: reading\n\n- [ ] finish part two 📅 2026-12-10\n", "--tag", "book").note_id;
  const emma = addNote(home, "Emma", "A novel.\nrating:: 3\nstatus:: todo\n", "--tag", "book").note_id;
  addNote(home, "Reading", VIEWS);
  return { dune, emma };
}

/// A note's body as the server has it now.
const body = (home, id) => cli(home, "note", "show", id).body;

test("a note's query blocks render as a table, a board, a list, tasks and a calendar, and write back into the notes", async (t) => {
  const { page, home, seeded, expect } = await session(t, seed);
  // The block whose query does not read is answered 400, which it shows.
  expect(/status of 400/);
  await openNote(page, "Reading");
  await page.click("#tab-preview");
  const views = page.locator("#preview .query-view");
  await expectCount(views, 7);
  const ready = page.locator("#preview .query-result[data-ready]");
  await expectCount(ready, 6, "every block but the JavaScript one shows its result");

  // The table: every book, sortable; the File column counts them.
  const table = views.nth(0).locator("table.query-table");
  await expectText(table.locator("thead"), /File \(2\)\s*rating\s*status/);
  await expectText(table.locator("tbody tr").first(), /Dune\s*4\s*reading/);
  const rating = table.locator("th", { hasText: "rating" });
  await rating.locator("button").click();
  await rating.locator("button").click();
  await eventually(() => rating.getAttribute("aria-sort"), (s) => assert.equal(s, "descending"));
  await expectText(table.locator("tbody tr").first(), /Dune/);
  await rating.locator("button").click();
  await expectText(table.locator("tbody tr").first(), /Emma/, "ascending puts the lower rating first");

  // A cell edits its field in its note.
  const emmaRating = table.locator("tbody tr", { hasText: "Emma" }).locator("td.editable").first();
  await emmaRating.dblclick();
  await page.locator(".query-cell-input").fill("5");
  await page.keyboard.press("Enter");
  await eventually(() => body(home, seeded.emma), (b) => assert.equal(b, "A novel.\nrating:: 5\nstatus:: todo\n"));
  await expectText(views.nth(0).locator("tbody tr", { hasText: "Emma" }), /Emma\s*5\s*todo/);
  // The sort chosen (rating, ascending) stays when the block runs again: Emma's 5 now comes after Dune's 4.
  await expectAttribute(rating, "aria-sort", "ascending");
  await expectText(views.nth(0).locator("tbody tr").first(), /Dune/);

  // The board: a column per status; a card's menu moves it, and so does dragging it.
  const board = views.nth(1).locator(".query-board");
  await expectCount(board.locator(".board-column"), 2);
  await expectText(board.locator(".board-column").nth(0).locator("h4"), "reading (1)");
  await board.locator(".board-card", { hasText: "Emma" }).locator("select").selectOption("reading");
  await eventually(() => body(home, seeded.emma), (b) => assert.match(b, /status:: reading/));
  // Both books are being read; the emptied column stays, so a card can go back to it.
  await expectText(views.nth(1).locator('.board-column[data-key="todo"] h4'), "todo (0)");
  await expectText(views.nth(1).locator('.board-column[data-key="reading"] h4'), "reading (2)");
  await expectText(views.nth(0).locator("tbody tr", { hasText: "Emma" }), /Emma\s*5\s*reading/, "the table above shows the move too");
  await page.screenshot({ path: join(SHOTS, "views-table-board.png"), fullPage: true });

  // The list.
  await expectText(views.nth(2).locator(".query-list"), /Dune\s*Emma/);

  // The tasks: the box completes the task in its note, with today's done date, and the open list runs again.
  const task = views.nth(3).locator(".query-task", { hasText: "finish part two" });
  await expectText(views.nth(3).locator(".query-task-group h4"), "Dune");
  await task.locator("input[type=checkbox]").check();
  await eventually(() => body(home, seeded.dune), (b) => assert.match(b, /- \[x\] finish part two 📅 2026-12-10 ✅ \d{4}-\d{2}-\d{2}/));
  await expectText(views.nth(3).locator(".query-result"), "No results.");
  await expectText(page.locator("#status"), /Done: finish part two/);

  // The calendar shows the task on its due day.
  const day = views.nth(4).locator('[data-day="2026-12-10"]');
  await expectText(day, /finish part two/);

  // JavaScript is shown, not run; a query that does not read says why, in the block.
  await expectText(views.nth(5), /quire runs no code from notes/);
  await expectText(views.nth(6).locator(".query-error"), /This query did not run: .*/);
  await page.screenshot({ path: join(SHOTS, "views-tasks-calendar.png"), fullPage: true });
  await axeClean(page, "query views");
});

test("dragging a board card to another column sets the field it is grouped by", async (t) => {
  const { page, home, seeded, expect } = await session(t, seed);
  expect(/status of 400/);
  await openNote(page, "Reading");
  await page.click("#tab-preview");
  const board = page.locator("#preview .query-board");
  await expectCount(board.locator(".board-column"), 2);
  // Held by its edge (its middle is its menu), dropped on the column's heading.
  await board
    .locator(".board-card", { hasText: "Dune" })
    .dragTo(board.locator('.board-column[data-key="todo"] h4'), { sourcePosition: { x: 3, y: 3 } });
  await eventually(() => body(home, seeded.dune), (b) => assert.match(b, /^rating:: 4\nstatus:: todo\n/));
  await expectText(page.locator('#preview .query-board .board-column[data-key="todo"] h4'), "todo (2)");
  await expectText(page.locator('#preview .query-board .board-column[data-key="reading"] h4'), "reading (0)");
  // And back, into the column the move emptied.
  await page
    .locator("#preview .board-card", { hasText: "Emma" })
    .dragTo(page.locator('#preview .board-column[data-key="reading"] h4'), { sourcePosition: { x: 3, y: 3 } });
  await eventually(() => body(home, seeded.emma), (b) => assert.match(b, /status:: reading/));
  await expectText(page.locator('#preview .query-board .board-column[data-key="reading"] h4'), "reading (1)");
});

test("Today opens the day's note from its template, once; From template fills a template in", async (t) => {
  const { page, home } = await session(t, (home) => {
    mkdirSync(join(home.dir, "home/.config/quire"), { recursive: true });
    writeFileSync(join(home.dir, "home/.config/quire/config.toml"), '[daily]\nnotebook = "Journal"\ntemplate = "Day"\n');
    addNote(home, "Day", "# {{date:dddd}}\n- [ ] plan the day\n", "--notebook", "Templates");
    addNote(home, "Meeting", "## {{title}}\nattendees:: \n", "--notebook", "Templates");
  });
  const today = await page.evaluate(() => {
    const d = new Date();
    return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, "0")}-${String(d.getDate()).padStart(2, "0")}`;
  });
  await page.click("#today-note");
  await page.waitForFunction((today) => document.querySelector("#title")?.value === today, today);
  await expectText(page.locator("#status"), /Made today's note in Journal/);
  await eventually(
    () => cli(home, "search", `title:${today}`).results,
    (r) => {
      assert.equal(r.length, 1);
      assert.match(body(home, r[0].note_id), /^# \w+day\n- \[ \] plan the day\n$/);
    },
  );
  // Again: the same note, no second one.
  await page.click("#today-note");
  await page.waitForFunction((today) => document.querySelector("#title")?.value === today, today);
  await eventually(() => cli(home, "search", `title:${today}`).results.length, (n) => assert.equal(n, 1));

  await page.click("#from-template");
  const dialog = page.locator("dialog.app-dialog");
  await dialog.locator("select").selectOption({ label: "Meeting" });
  await dialog.locator("button[type=submit]").click();
  await dialog.locator("input").fill("Budget review");
  await dialog.locator("button[type=submit]").click();
  await page.waitForFunction(() => document.querySelector("#title")?.value === "Budget review");
  await eventually(
    () => cli(home, "search", "title:Budget").results,
    (r) => assert.equal(body(home, r[0].note_id), "## Budget review\nattendees:: \n"),
  );
});

test("a change made in a terminal shows in the open note's views without a reload", async (t) => {
  const { page, home, seeded, expect } = await session(t, seed);
  expect(/status of 400/);
  await openNote(page, "Reading");
  await page.click("#tab-preview");
  const views = page.locator("#preview .query-view");
  await expectText(views.nth(3).locator(".query-task"), /finish part two/);
  await expectText(views.nth(0).locator("tbody tr", { hasText: "Emma" }), /Emma\s*3\s*todo/);
  // Decided in the CLI, looked at in the page: the task is done, and a field set in another note.
  cli(home, "tasks", "done", seeded.dune, "3");
  cli(home, "tools", "call", "update_note", JSON.stringify({ note_id: seeded.emma, edits: [{ find: "rating:: 3", replace: "rating:: 2" }] }));
  await expectText(views.nth(3).locator(".query-result"), "No results.");
  await expectText(views.nth(0).locator("tbody tr", { hasText: "Emma" }), /Emma\s*2\s*todo/);
});
