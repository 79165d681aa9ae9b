// A long note and a long chat in the sidebar: the model is sent the note's outline and the lines around the cursor,
// not the whole note; past its budget the chat's earlier turns are sent as a summary the page shows, and dropping it
// from the page sends the whole chat again.
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { SHOTS, addNote, ask, browserSuite, expectCount, expectText, openNote, turnDone } from "./support.mjs";

const { mock, session } = await browserSuite();

test("a long note is sent around the cursor, and a long chat as a summary the page shows and drops", async (t) => {
  const line = (p, l) => `Line ${l} of part ${p}, a sentence about the plan and who does what.`;
  const body = Array.from({ length: 40 }, (_, p) => `## Part ${p}\n\n${Array.from({ length: 10 }, (_, l) => line(p, l)).join("\n")}\n`).join("\n");
  const { page } = await session(t, (home) => addNote(home, "Plan", body));
  await openNote(page, "Plan");
  // The cursor at the end of the note.
  await page.locator("#editor .cm-content").click();
  await page.keyboard.press("Control+End");
  const answer = "A long and careful answer about the plan, what to do first and why it matters. ".repeat(60);
  for (let i = 0; i < 12; i++) mock.script.push({ text: answer });
  await ask(page, "Where are we?");
  await turnDone(page);
  const system = mock.requests[0].messages[0].content;
  assert.match(system, /The note is long/);
  assert.ok(system.includes(line(39, 9)), "the lines around the cursor are sent");
  assert.ok(!system.includes(line(1, 5)), "a far part is not");
  // Turn after turn until the chat is summarised (the page draws the summary card before the turn shows done).
  for (let turn = 1; turn < 9 && !(await page.locator(".chat-summary").count()); turn++) {
    await ask(page, `And then, step ${turn}?`);
    await turnDone(page);
  }
  const card = page.locator(".chat-summary");
  await expectCount(card, 1, "a summary card shows once the chat is long");
  await expectText(card, /The chat grew long: its first \d+ messages are sent as this summary/);
  const last = mock.requests.at(-1).messages.map((m) => m.content ?? "").join("\n");
  assert.match(last, /The earlier part of this chat, summarised/);
  assert.ok(!last.includes("Where are we?"), "the first turn is in the summary, not sent again");
  await card.locator("summary").click();
  await page.screenshot({ path: join(SHOTS, "chat-summary.png") });
  await card.getByRole("button", { name: "Send the whole chat again" }).click();
  await card.getByText("Summary dropped").waitFor();
});
