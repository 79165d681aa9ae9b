// Sealed notes in a real browser (issue 32): while the workspace is locked a sealed note shows its title and an
// Unlock button, not its text; a wrong passphrase is said in the dialog, which stays open; the right one opens the
// note, the top bar shows the time left and locks again by hand; a short unlock period runs out and the note asks
// again; protecting and unprotecting from the page; without a passphrase, protecting says it hides from AI only.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { QUIRE, SHOTS, addNote, axeClean, browserSuite, cli, eventually, expectAttribute, expectEditorText, expectHidden, expectText, expectVisible, openNote, serverNote } from "./support.mjs";

const { session } = await browserSuite();

const PASSPHRASE = "correct horse battery";
const BODY = "PIN 4921 for the blue card";

/// A workspace with "Bank" protected and "Groceries" plain, a passphrase set with the cheapest key derivation (the
/// real `quire lock init`), and `[lock] timeout` set to `timeout`.
function sealedWorkspace(home, timeout) {
  mkdirSync(join(home.env.XDG_CONFIG_HOME, "quire"), { recursive: true });
  writeFileSync(join(home.env.XDG_CONFIG_HOME, "quire/config.toml"), `[lock]\ntimeout = "${timeout}"\n`);
  const bank = addNote(home, "Bank", BODY).note_id;
  const groceries = addNote(home, "Groceries", "milk and eggs").note_id;
  cli(home, "note", "protect", bank);
  execFileSync(QUIRE, ["lock", "init", "--passphrase-stdin", "--kdf-memory-kib", "8", "--kdf-passes", "1"], {
    env: home.env,
    input: `${PASSPHRASE}\n${PASSPHRASE}\n`,
    stdio: ["pipe", "ignore", "ignore"],
  });
  return { bank, groceries };
}

/// Opens a note from the list; a sealed one while locked shows its title only.
async function openLocked(page, title) {
  await openNote(page, title);
  await page.locator("#locked-panel").waitFor();
}

/// Types the passphrase into the open Unlock dialog and submits it with Enter.
async function typePassphrase(page, passphrase) {
  const dialog = page.getByRole("dialog", { name: "Unlock sealed notes" });
  await dialog.getByLabel("Passphrase").fill(passphrase);
  await dialog.getByLabel("Passphrase").press("Enter");
  return dialog;
}

const lockText = (page) => page.locator("#lock-text");

test("a sealed note opens with the passphrase, not a wrong one, and locks again by hand", async (t) => {
  const { page, seeded, expect } = await session(t, (home) => sealedWorkspace(home, "10m"));
  expect(/status of 423/);
  expect(/status of 400/);
  await page.waitForFunction(() => /Bank · sealed/.test(document.querySelector("#notes").innerText));
  await expectText(lockText(page), "Locked");

  // Locked: the title and an Unlock button, no text and no error.
  await openLocked(page, "Bank");
  await expectText(page.locator("#locked-text"), /“Bank” is sealed: its text is encrypted/);
  await expectHidden(page.locator("#editor"));
  await expectText(page.locator("#lock"), "Sealed");
  // A message goes by itself after a while: a short wait, so as not to outlast one that was shown.
  await expectText(page.locator("#status"), "", "no error is shown", { timeout: 1_000 });
  // Words of the text, not its number alone: the page's random ids (hex) may hold "4921" by chance.
  await eventually(
    () => page.content(),
    (html) => assert.ok(!html.includes("PIN 4921") && !html.includes("blue card"), "nothing of the text reaches the page"),
  );
  await axeClean(page, "a sealed note, locked");
  await page.screenshot({ path: join(SHOTS, "sealed-locked.png") });

  // A wrong passphrase is said in the dialog, which stays open; nothing opens.
  await page.click("#unlock-note");
  const dialog = await typePassphrase(page, "not the passphrase");
  await dialog.locator(".dialog-error").getByText("Wrong passphrase. Nothing changed.").waitFor();
  await expectVisible(dialog);
  await expectAttribute(dialog.getByLabel("Passphrase"), "type", "password");
  await page.screenshot({ path: join(SHOTS, "sealed-unlock-wrong.png") });
  await expectVisible(page.locator("#locked-panel"));

  // The right one opens the note; the top bar shows the time left and a Lock button.
  await typePassphrase(page, PASSPHRASE);
  await dialog.waitFor({ state: "detached" });
  await page.waitForFunction(() => document.querySelector("#locked-panel").hidden);
  await expectEditorText(page, BODY);
  await expectText(lockText(page), /^Unlocked · locks in (10:00|9:[0-5]\d)$/);
  await page.screenshot({ path: join(SHOTS, "sealed-unlocked.png") });

  // It is edited and saved as any note, through the key.
  await page.click("#editor .cm-content");
  await page.keyboard.press("Control+End");
  await page.keyboard.type(", kept safe");
  await page.waitForFunction(() => document.querySelector("#save-state").textContent === "Saved");
  await eventually(() => serverNote(page, seeded.bank), (note) => assert.equal(note.body, `${BODY}, kept safe`));

  // Lock: the note shows locked again, and the server answers it locked.
  await page.getByRole("button", { name: /^Lock sealed notes now/ }).click();
  await page.locator("#locked-panel").waitFor();
  await expectText(lockText(page), "Locked");
  await expectEditorText(page, "");
  await eventually(() => serverNote(page, seeded.bank), (note) => assert.equal(note.kind, "locked"));

  // Locked, it still goes to the trash (that needs no text), and shows locked there.
  await page.getByRole("button", { name: "Move to trash" }).click();
  await page.waitForFunction(() => /“Bank” is in the trash/.test(document.querySelector("#status").textContent));
  // The trashed note's panel is drawn after the status line: wait for it rather than read it at once (under load
  // in CI it was read before it showed).
  await page.locator("#restore").waitFor({ state: "visible" });
  await expectVisible(page.locator("#locked-panel"));
});

test("the unlock period runs out without use, and the sealed note asks again", async (t) => {
  const { page, expect } = await session(t, (home) => sealedWorkspace(home, "2s"));
  expect(/status of 423/);
  await openLocked(page, "Bank");
  await page.click("#unlock-note");
  await typePassphrase(page, PASSPHRASE);
  await page.waitForFunction((body) => document.querySelector("#editor .cm-content")?.cmTile.root.view.state.doc.toString() === body, BODY);
  // Nothing uses the key for two seconds: the page shows it locked again by itself.
  await page.locator("#locked-panel").waitFor({ timeout: 20_000 });
  await expectText(lockText(page), "Locked");
  await expectText(page.locator("#status"), /locked again \(2 seconds without use, or quire serve restarted\)/);
  await page.screenshot({ path: join(SHOTS, "sealed-timed-out.png") });
  // The next look at it asks for the passphrase again.
  await page.getByRole("button", { name: "Unlock sealed notes" }).click();
  await typePassphrase(page, PASSPHRASE);
  await page.waitForFunction(() => document.querySelector("#locked-panel").hidden);
  await expectEditorText(page, BODY);
});

test("protecting seals a note without the passphrase; unprotecting asks for it first", async (t) => {
  const { page, home, seeded, expect } = await session(t, (home) => sealedWorkspace(home, "10m"));
  expect(/status of 423/);
  await openNote(page, "Groceries");
  await page.getByRole("button", { name: "Protect", exact: true }).click();
  await page.locator("#locked-panel").waitFor();
  await expectText(page.locator("#status"), /“Groceries” is protected and sealed: its text is encrypted on disk/);
  await page.locator("#notes .note-item", { hasText: "Groceries · sealed" }).waitFor();
  await eventually(
    () => cli(home, "note", "list").notes.find((n) => n.note_id === seeded.groceries),
    (groceries) => assert.equal(groceries?.is_protected, true),
  );

  // Unprotecting a sealed note while locked: the passphrase first, then the question.
  await page.getByRole("button", { name: "Unprotect", exact: true }).click();
  const dialog = page.getByRole("dialog", { name: "Unlock sealed notes" });
  await expectText(dialog, /Unprotecting “Groceries” stores its text unencrypted again/);
  await page.screenshot({ path: join(SHOTS, "sealed-unprotect-asks.png") });
  await typePassphrase(page, PASSPHRASE);
  await page.getByRole("dialog", { name: "Unprotect note" }).getByRole("button", { name: "Unprotect" }).click();
  await page.waitForFunction(() => document.querySelector("#protect").textContent === "Protect");
  await expectEditorText(page, "milk and eggs");
  await expectText(page.locator("#status"), /no longer protected; its text is stored unencrypted again/);
  await eventually(() => serverNote(page, seeded.groceries), (note) => assert.equal(note.body, "milk and eggs"));
});

test("without a passphrase, protecting says it keeps the note from AI only", async (t) => {
  const { page } = await session(t, (home) => addNote(home, "Plan", "the plan"));
  // The page asks how the lock stands before it draws the tree (which opening the page waited for).
  await expectHidden(page.locator("#lock-state"));
  await openNote(page, "Plan");
  await page.getByRole("button", { name: "Protect", exact: true }).click();
  await page.waitForFunction(() => document.querySelector("#protect").textContent === "Unprotect");
  await expectText(page.locator("#status"), /not encrypted until a passphrase is set: run `quire lock init`/);
  await expectText(page.locator("#lock"), "Protected");
  // The list is fetched again after the protect answers: wait for it rather than read it at once.
  await page.waitForFunction(() => /Plan · protected/.test(document.querySelector("#notes").innerText));
  await expectEditorText(page, "the plan");
});
