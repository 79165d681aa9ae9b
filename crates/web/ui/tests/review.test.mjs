// The Review inbox in a real browser (issue 35): an MCP client (the official Python SDK, over stdio, its writes staged
// with `quire mcp --review`) edits a note, makes one and deletes another; nothing changes until the user accepts.
// The page shows each change as a diff; one run of lines is accepted alone and merges onto the user's later edit,
// the run the user changed meanwhile is stale and rejected, the title is accepted and undone, the new note accepted
// whole, the deletion rejected.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { QUIRE, SHOTS, addNote, axeClean, browserSuite, cli, serverNote } from "./support.mjs";

const runtimes = process.env.QUIRE_PLUGIN_RUNTIMES;
const python = runtimes ? join(runtimes, "bin/python") : null;
const script = join(import.meta.dirname, "../../../../tests/review/review_client.py");
const { session } = await browserSuite();

/// Runs MCP steps as the Python SDK client over `quire mcp --review`; returns one answer per step.
function client(home, steps) {
  const out = execFileSync(python, [script, "--steps", JSON.stringify(steps), "--stdio", QUIRE, "mcp", "--review"], {
    env: home.env,
    encoding: "utf8",
  });
  return out.trim().split("\n").map((line) => JSON.parse(line));
}

test("staged changes are reviewed per change in the page: accepted, stale, rejected, undone", { skip: !python && "QUIRE_PLUGIN_RUNTIMES is not set" }, async (t) => {
  assert.ok(existsSync(python), `${python} is missing`);
  const { page, home, seeded } = await session(t, (home) => ({
    plan: addNote(home, "Plan", "one\ntwo\nthree\nfour\n").note_id,
    old: addNote(home, "Old idea", "obsolete\n").note_id,
  }));
  const answers = client(home, [
    { call: "update_note", args: { note_id: seeded.plan, title: "Plan v2", body: "ONE\ntwo\nthree\nFOUR\nfive\n" } },
    { call: "create_note", args: { title: "Fresh", body: "- new\n- list\n" } },
    { call: "delete_note", args: { note_id: seeded.old } },
  ]);
  assert.ok(answers.every((a) => a.texts.some((text) => text.includes("waits in review 1"))), JSON.stringify(answers));
  assert.equal((await serverNote(page, seeded.plan)).body, "one\ntwo\nthree\nfour\n", "nothing written yet");
  // The user changes "four" meanwhile.
  execFileSync(QUIRE, ["tools", "call", "update_note", JSON.stringify({ note_id: seeded.plan, body: "one\ntwo\nthree\nfour, or so\n" })], {
    env: home.env,
  });

  const button = page.locator("#review-button");
  await button.filter({ hasText: "Review" }).waitFor();
  await page.locator("#review-count").filter({ hasText: /^\d+$/ }).waitFor();
  await button.click();
  const set = page.locator('[data-review="1"]');
  await set.waitFor();
  await page.screenshot({ path: join(SHOTS, "review-inbox.png"), fullPage: true });
  await axeClean(page, "review");
  const plan = set.locator(`[data-item="note:${seeded.plan}"]`);
  const hunks = plan.locator(".review-hunk");
  assert.deepEqual(await hunks.evaluateAll((list) => list.map((h) => h.className)), [
    "review-hunk pending",
    "review-hunk stale",
    "review-hunk pending",
  ]);
  assert.match(await hunks.nth(0).textContent(), /− one\s*\+ ONE/);
  assert.equal(await hunks.nth(1).getByRole("button", { name: "Accept" }).count(), 0, "a stale change cannot be accepted");

  // The first run of lines alone: merged onto the user's edit.
  await hunks.nth(0).getByRole("button", { name: "Accept" }).click();
  await plan.locator(".review-hunk.accepted").waitFor();
  assert.equal((await serverNote(page, seeded.plan)).body, "ONE\ntwo\nthree\nfour, or so\n");
  // The stale one rejected; the title accepted, then undone from the message.
  await plan.locator(".review-hunk.stale").getByRole("button", { name: "Reject" }).click();
  await plan.locator(".review-hunk.rejected").waitFor();
  await plan.locator(".review-hunk.pending").getByRole("button", { name: "Accept" }).click();
  await page.locator("#review-undo").waitFor();
  assert.equal((await serverNote(page, seeded.plan)).title, "Plan v2");
  await page.locator("#review-undo").click();
  await page.locator("#status").filter({ hasText: "Undone" }).waitFor();
  assert.equal((await serverNote(page, seeded.plan)).title, "Plan");
  await page.locator("#review-decided").check();
  await set.locator(".review-hunk.undone").filter({ hasText: "Title" }).waitFor();
  await page.locator("#review-decided").uncheck();
  await set.waitFor();

  // The new note accepted whole; the deletion rejected.
  const fresh = set.locator(".review-item").filter({ hasText: "“Fresh” (new)" });
  await fresh.getByRole("button", { name: "Accept note" }).click();
  await fresh.locator(".review-hunk.accepted").waitFor();
  const made = cli(home, "note", "list").notes.find((n) => n.title === "Fresh");
  assert.ok(made, "the new note exists");
  const old = set.locator(`[data-item="note:${seeded.old}"]`);
  await old.getByRole("button", { name: "Reject", exact: true }).click();
  await old.locator(".review-hunk.rejected").waitFor();
  assert.equal((await serverNote(page, seeded.old)).in_trash, false);
  await set.getByText("0 waiting").waitFor();
  await page.screenshot({ path: join(SHOTS, "review-decided.png"), fullPage: true });
  // The client hears the outcome through its review resource.
  const [review] = client(home, [{ read: "quire://review/1" }]);
  const states = JSON.parse(review.text).items.flatMap((i) => i.hunks.map((h) => h.state));
  assert.ok(!states.includes("pending") && states.includes("accepted") && states.includes("rejected"), review.text);
});
