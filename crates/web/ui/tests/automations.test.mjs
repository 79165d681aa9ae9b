// Automations in Settings (issue 49): one added with the form is listed with when it runs and its next time; Run
// now runs it with the model (the mock) and shows its run, whose write waits in the Review inbox under its name; a
// wrong schedule is said in the form; one added in a terminal while the page is open appears without a reload; Pause
// and Remove work.
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { SHOTS, browserSuite, cli, eventually, expectCount, expectText } from "./support.mjs";

const { mock, session } = await browserSuite();

test("an automation added in Settings runs now, shows its run, and its write waits for review", async (t) => {
  const { page, home, expect } = await session(t);
  // The wrong schedule below, refused on purpose.
  expect(/status of 400/);
  await page.click("#settings-button");
  const box = page.locator("#automation-settings");
  await expectText(box, /No automation yet/);
  await page.fill("#automation-name", "Morning");
  await page.fill("#automation-prompt", "Summarise what came in.");
  await page.selectOption("#automation-kind", "schedule");
  await page.fill("#automation-when", "sometimes");
  await page.click("#automation-settings button[type=submit]");
  await expectText(box.locator(".automation-form .error"), /"sometimes" is not a schedule/);
  await page.fill("#automation-when", "daily 07:30");
  await page.click("#automation-settings button[type=submit]");
  const card = box.locator(".automation[data-automation=Morning]");
  await expectText(card, /daily at 07:30 · by the default model · all notebooks · writes wait for your review/);
  await expectText(card, /Next: \d{4}-\d\d-\d\d 07:30/);
  await expectText(card, /It has not run yet/);

  mock.script.push({ calls: [["create_note", { title: "Morning summary", body: "Nothing came in." }]] }, { text: "Wrote the morning summary." });
  await card.getByRole("button", { name: "Run now" }).click();
  await expectText(card.locator(".automation-run"), /done \(run by hand\) · 300 tokens/);
  await expectText(card.locator(".automation-run"), /Wrote the morning summary\./);
  await expectText(card.locator(".automation-review"), /review \d+/);
  assert.match(mock.seen(), /This is the automation “Morning”, run by hand/);
  await box.screenshot({ path: join(SHOTS, "automation-settings.png") });
  await eventually(() => cli(home, "review", "list"), (sets) => assert.match(JSON.stringify(sets), /Morning \(automation\)/));
  assert.ok(!JSON.stringify(cli(home, "note", "list")).includes("Morning summary"), "the note waits for review");

  // Added in a terminal while the page is open: it appears at the section's next look.
  home.env.QUIRE_MODEL = "openai-compatible:mock";
  home.env.QUIRE_BASE_URL = mock.base;
  cli(home, "automation", "add", "Triage", "--prompt", "Tag what came in.", "--trigger", "note created");
  await expectText(box.locator(".automation[data-automation=Triage]"), /when a note is created/);

  await card.getByRole("button", { name: "Pause" }).click();
  await expectText(card, /paused \(daily at 07:30\)/);
  await card.getByRole("button", { name: "Remove" }).click();
  await page.getByRole("button", { name: "Remove Morning" }).click();
  await expectCount(box.locator(".automation[data-automation=Morning]"), 0);
  await eventually(() => cli(home, "automation", "list").map((a) => a.name), (names) => assert.deepEqual(names, ["Triage"]));
});
