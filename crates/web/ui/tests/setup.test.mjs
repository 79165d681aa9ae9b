// Setting up a passphrase and sync from Settings (ux-2 #8), in a real browser against the real binary: the recovery
// key shown once, closed only when its last group is typed back, and real (it resets the passphrase in a terminal);
// sync started from one page (asking for the passphrase to unlock), joined from another workspace's page with the
// passphrase, the note arriving there, and stopped with one confirmation.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { QUIRE, SHOTS, addNote, browserSuite, cli, eventually, expectHidden, expectText } from "./support.mjs";

const { session } = await browserSuite();
const PASSPHRASE = "correct horse battery";

test("a passphrase set in Settings seals protected notes and shows the recovery key once", async (t) => {
  const { page, home } = await session(t, (home) => {
    const diary = addNote(home, "Diary", "dear diary").note_id;
    cli(home, "note", "protect", diary);
  });
  await page.click("#settings-button");
  await page.locator("#set-passphrase").click();
  await page.fill("#new-passphrase", PASSPHRASE);
  await page.fill("#new-passphrase-again", "something else");
  await page.getByRole("button", { name: "Set the passphrase" }).click();
  await expectText(page.locator(".dialog-error"), /The two differ/);
  await page.fill("#new-passphrase-again", PASSPHRASE);
  await page.getByRole("button", { name: "Set the passphrase" }).click();

  const shown = page.getByRole("dialog", { name: "Your recovery key" });
  await shown.waitFor();
  let key = "";
  await eventually(() => page.locator("#recovery-key").textContent(), (text) => {
    assert.match(text, /^[0-9a-f]{8}(-[0-9a-f]{8}){7}$/);
    key = text;
  });
  await page.screenshot({ path: join(SHOTS, "setup-recovery-key.png") });
  // Escape does not close it, nor does a wrong group; the last group does.
  await page.keyboard.press("Escape");
  const wrote = shown.getByRole("button", { name: "I wrote it down" });
  await page.fill("#recovery-check", "00000000");
  await eventually(() => wrote.isDisabled(), (disabled) => assert.ok(disabled, "a wrong group does not close it"));
  await page.fill("#recovery-check", key.split("-").at(-1));
  await wrote.click();
  await shown.waitFor({ state: "detached" });
  await expectText(page.locator("#passphrase-settings"), /A passphrase is set/);

  const lock = cli(home, "lock", "status");
  assert.equal(lock.initialized, true);
  assert.equal(lock.sealed_notes, 1);
  // The key shown is the real one: it sets a new passphrase in a terminal.
  execFileSync(QUIRE, ["lock", "recover", "--passphrase-stdin", "--kdf-memory-kib", "8", "--kdf-passes", "1"], {
    env: home.env,
    input: `${key}\nan entirely new passphrase\n`,
    stdio: ["pipe", "ignore", "inherit"],
  });
});

test("sync starts from Settings, another workspace joins from its page, and stopping asks once", async (t) => {
  const target = mkdtempSync(join(tmpdir(), "quire-target-"));
  t.after(() => rmSync(target, { recursive: true, force: true }));
  const desk = await session(t, (home) => {
    addNote(home, "Shopping list", "milk, eggs");
    execFileSync(QUIRE, ["lock", "init", "--passphrase-stdin", "--kdf-memory-kib", "8", "--kdf-passes", "1"], {
      env: home.env,
      input: `${PASSPHRASE}\n${PASSPHRASE}\n`,
      stdio: ["pipe", "ignore", "inherit"],
    });
  });
  // Starting asks for the passphrase by the server's "locked" answer, as a sealed note's text does.
  desk.expect(/status of 423/);
  await desk.page.click("#settings-button");
  await desk.page.locator("#sync-target").waitFor();
  await desk.page.locator("#sync-settings").screenshot({ path: join(SHOTS, "setup-sync-form.png") });
  await desk.page.fill("#sync-target", target);
  await desk.page.fill("#sync-name", "desk");
  await desk.page.click("#sync-start");
  // Starting needs the key: the page asks for the passphrase, then goes on.
  const unlock = desk.page.getByRole("dialog", { name: "Unlock sealed notes" });
  await unlock.getByLabel("Passphrase").fill(PASSPHRASE);
  await unlock.getByLabel("Passphrase").press("Enter");
  await expectText(desk.page.locator("#sync-summary"), /“desk”, syncs with/);
  await expectText(desk.page.locator("#sync-state"), /Synced/);
  assert.equal(cli(desk.home, "sync", "status").name, "desk");

  const laptop = await session(t);
  // The wrong passphrase, below.
  laptop.expect(/status of 400/);
  await laptop.page.click("#settings-button");
  // A relative path is refused: the page cannot know the server's folder (found in use).
  await laptop.page.fill("#sync-target", "shared/quire");
  await laptop.page.click("#sync-join");
  await expectText(laptop.page.locator("#sync-settings .error"), /whole path/);
  await laptop.page.fill("#sync-target", target);
  await laptop.page.fill("#sync-name", "laptop");
  await laptop.page.fill("#sync-passphrase", "not the passphrase");
  await laptop.page.click("#sync-join");
  await expectText(laptop.page.locator("#sync-settings .error"), /Wrong passphrase/);
  await laptop.page.fill("#sync-passphrase", PASSPHRASE);
  await laptop.page.click("#sync-join");
  await expectText(laptop.page.locator("#sync-summary"), /“laptop”, syncs with/);
  // Joining set the other device's passphrase here: Settings says so.
  await expectText(laptop.page.locator("#passphrase-settings"), /A passphrase is set/);
  await laptop.page.locator("#notes .note-item", { hasText: "Shopping list" }).waitFor();
  await laptop.page.screenshot({ path: join(SHOTS, "setup-sync-joined.png") });

  await desk.page.click("#sync-leave");
  await desk.page.getByRole("dialog", { name: "Stop syncing?" }).getByRole("button", { name: "Stop syncing" }).click();
  await expectHidden(desk.page.locator("#sync-summary"));
  await eventually(() => cli(desk.home, "sync", "status"), (status) => assert.equal(status.syncing, false));
});
