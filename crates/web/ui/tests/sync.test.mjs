// Sync in a real browser (issue 33): `quire serve` on one device syncs in the background; the top bar says so, a
// note added and an edit made on the other device (the real CLI, through the same folder) appear in the page
// without a reload, and the page's own edit reaches the other device. A target that goes away shows as offline.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { QUIRE, SHOTS, addNote, browserSuite, cli, editorText, eventually, expectAttribute, expectEditorText, expectText, openNote, serverNote, tempHome } from "./support.mjs";

const { session } = await browserSuite();

const PASSPHRASE = "correct horse battery";

/// A page on the laptop, whose workspace (seeded by `seed`, then given a passphrase) syncs every second with the
/// desktop's (another home, returned as `other`) through a folder; resolves once the page says it synced.
async function laptopAndDesktop(t, seed) {
  const other = tempHome();
  t.after(() => other.remove());
  const target = join(other.dir, "target");
  const { page, seeded, home, expect } = await session(t, (home) => {
    mkdirSync(join(home.env.XDG_CONFIG_HOME, "quire"), { recursive: true });
    writeFileSync(join(home.env.XDG_CONFIG_HOME, "quire/config.toml"), `[sync]\ninterval = "1s"\n`);
    const seeded = seed(home);
    withPassphrase(home, "lock", "init", "--kdf-memory-kib", "8", "--kdf-passes", "1");
    withPassphrase(home, "sync", "init", target, "--name", "laptop");
    withPassphrase(other, "sync", "join", target, "--name", "desktop");
    return seeded;
  });
  await page.locator("#sync-state").filter({ hasText: /^Synced/ }).waitFor();
  return { page, seeded, other, home, expect };
}

function withPassphrase(home, ...args) {
  return execFileSync(QUIRE, ["--passphrase-stdin", ...args], { env: home.env, input: `${PASSPHRASE}\n${PASSPHRASE}\n`, encoding: "utf8" });
}

test("changes from another device show in the open page, and the page's reach it", async (t) => {
  const other = tempHome();
  t.after(() => other.remove());
  const target = join(other.dir, "target");
  const { page, home, seeded } = await session(t, (home) => {
    mkdirSync(join(home.env.XDG_CONFIG_HOME, "quire"), { recursive: true });
    writeFileSync(join(home.env.XDG_CONFIG_HOME, "quire/config.toml"), `[sync]\ninterval = "1s"\n`);
    const plan = addNote(home, "Plan", "first line\n").note_id;
    withPassphrase(home, "lock", "init", "--kdf-memory-kib", "8", "--kdf-passes", "1");
    withPassphrase(home, "sync", "init", target, "--name", "laptop");
    withPassphrase(other, "sync", "join", target, "--name", "desktop");
    return { plan };
  });
  const bar = page.locator("#sync-state");
  await bar.filter({ hasText: /^Synced/ }).waitFor();
  // ux-2 #24: the time as the locale writes it, without a padded hour ("Synced 2:17 AM", not "02:17 AM").
  await expectText(bar, /^Synced [1-9]\d?:\d{2}/);

  // From the other device: a new note, and an edit of the one open here.
  await openNote(page, "Plan");
  addNote(other, "From the desktop", "written elsewhere\n");
  const edit = JSON.stringify({ note_id: seeded.plan, body: "first line\nadded on the desktop\n" });
  execFileSync(QUIRE, ["tools", "call", "update_note", edit], { env: other.env });
  execFileSync(QUIRE, ["sync"], { env: other.env });
  await page.locator("#notes").getByText("From the desktop").waitFor({ timeout: 15_000 });
  await page.waitForFunction(
    () => document.querySelector("#editor .cm-content")?.textContent?.includes("added on the desktop"),
    null,
    { timeout: 15_000 },
  );
  await expectEditorText(page, "first line\nadded on the desktop\n");
  await page.screenshot({ path: join(SHOTS, "sync-arrived.png") });

  // From the page to the other device.
  await page.locator("#editor .cm-content").click();
  await page.keyboard.press("Control+End");
  await page.keyboard.type("typed in the browser\n");
  // The page saves it, this device's sync sends it, and the other device's next sync brings it.
  await eventually(() => serverNote(page, seeded.plan), (note) => assert.match(note.body, /typed in the browser/), { interval: 200 });
  await eventually(
    () => {
      execFileSync(QUIRE, ["sync"], { env: other.env });
      return cli(other, "note", "show", seeded.plan).body;
    },
    (body) => assert.equal(body, "first line\nadded on the desktop\ntyped in the browser\n"),
    { interval: 500, timeout: 30_000 },
  );
  const history = execFileSync(QUIRE, ["history"], { env: other.env, encoding: "utf8" });
  assert.match(history, /sync from device laptop/);

  // Typing here while the other device changes the top of the same note: the change merges in around the cursor,
  // which stays where it was, and the typing goes on where it was.
  await page.locator("#editor .cm-content").click();
  await page.keyboard.press("Control+End");
  await page.keyboard.type("still typing");
  const head = () => page.evaluate(() => document.querySelector("#editor .cm-content").cmTile.root.view.state.selection.main.head);
  // Where the cursor is, read once the typing is in the editor.
  await expectEditorText(page, /still typing$/);
  const before = await head();
  const edit2 = JSON.stringify({ note_id: seeded.plan, prepend: "a title line from the desktop\n" });
  execFileSync(QUIRE, ["sync"], { env: other.env });
  execFileSync(QUIRE, ["tools", "call", "update_note", edit2], { env: other.env });
  execFileSync(QUIRE, ["sync"], { env: other.env });
  await expectEditorText(page, /a title line from the desktop/, "the desktop's change reached the open editor");
  await eventually(head, (now) => assert.equal(now, before + "a title line from the desktop\n".length, "the cursor moved with the text"));
  await page.keyboard.type(" and more");
  await expectEditorText(page, "a title line from the desktop\nfirst line\nadded on the desktop\ntyped in the browser\nstill typing and more");
  await page.screenshot({ path: join(SHOTS, "sync-merged.png") });
  // Saved: the server holds what the editor shows.
  await eventually(
    async () => ({ server: (await serverNote(page, seeded.plan)).body, editor: await editorText(page) }),
    ({ server, editor }) => assert.equal(server, editor),
    { interval: 200 },
  );

  // The folder goes away (a disk unmounted): offline, with the reason; back, synced again.
  renameSync(target, `${target}-away`);
  await bar.filter({ hasText: "Sync offline" }).waitFor({ timeout: 15_000 });
  await expectAttribute(bar, "title", /does not exist|not a quire sync target|could not/);
  await page.screenshot({ path: join(SHOTS, "sync-offline.png") });
  renameSync(`${target}-away`, target);
  await bar.filter({ hasText: /^Synced/ }).waitFor({ timeout: 15_000 });
  void home;
});

// sync.md #1, #2 (ux-2 #1, #2): the same line changed in the page and on another device before either synced. The
// open note shows both versions whole (never a mix of their words, never a line lost) and a panel names them; the
// person keeps this device's, and the other device settles too.
test("the same line changed here and on another device shows both versions until the person chooses", async (t) => {
  const { page, seeded, other } = await laptopAndDesktop(t, (home) => {
    const shopping = addNote(home, "Shopping", "Milk (2 liters)\nEggs\nBread\nButter\n").note_id;
    addNote(home, "Other", "Nothing here\n");
    return { shopping };
  });
  await openNote(page, "Shopping");
  // The desktop changes the line first, and keeps it to itself for now.
  const theirs = JSON.stringify({ note_id: seeded.shopping, edits: [{ old_text: "Eggs", new_text: "Brown eggs (desktop)" }] });
  execFileSync(QUIRE, ["tools", "call", "update_note", theirs], { env: other.env });
  // The same line, changed in the page.
  await page.locator("#editor .cm-content").click();
  await page.keyboard.press("Control+Home");
  await page.keyboard.press("ArrowDown");
  await page.keyboard.press("End");
  await page.keyboard.type(" x12 (laptop)");
  await eventually(() => serverNote(page, seeded.shopping), (note) => assert.match(note.body, /Eggs x12 \(laptop\)/), { interval: 200 });
  execFileSync(QUIRE, ["sync"], { env: other.env });
  const panel = page.locator("#sync-conflicts");
  await panel.getByRole("button", { name: "Keep desktop's" }).waitFor({ timeout: 20_000 });
  await expectText(panel, /changed here and on desktop at the same time/);
  await expectText(panel.locator(".version").first(), /Eggs x12 \(laptop\)/);
  await expectText(panel.locator(".version").nth(1), /Brown eggs \(desktop\)/);
  // Both versions whole in the text, the lines around them kept.
  await expectEditorText(page, /^Milk \(2 liters\)\n(Eggs x12 \(laptop\)\nBrown eggs \(desktop\)|Brown eggs \(desktop\)\nEggs x12 \(laptop\))\nBread\nButter\n$/);
  await page.screenshot({ path: join(SHOTS, "sync-conflict.png") });
  // The top bar counts it, and leads back to it from another note.
  const bar = page.locator("#sync-state");
  await expectText(bar, /· 1 conflict$/);
  await page.screenshot({ path: join(SHOTS, "sync-conflict-count.png"), clip: { x: 0, y: 0, width: 1500, height: 60 } });
  await openNote(page, "Other");
  await expectEditorText(page, "Nothing here\n");
  await bar.click();
  await panel.getByRole("button", { name: "Keep this device's" }).waitFor();
  await expectEditorText(page, /Brown eggs \(desktop\)/);

  await panel.getByRole("button", { name: "Keep this device's" }).click();
  await expectEditorText(page, "Milk (2 liters)\nEggs x12 (laptop)\nBread\nButter\n");
  await panel.waitFor({ state: "hidden" });
  await eventually(() => bar.getAttribute("data-conflicts"), (count) => assert.equal(count, "0"));
  await eventually(
    () => {
      execFileSync(QUIRE, ["sync"], { env: other.env });
      return { body: cli(other, "note", "show", seeded.shopping).body, open: cli(other, "sync", "conflicts") };
    },
    ({ body, open }) => {
      assert.equal(body, "Milk (2 liters)\nEggs x12 (laptop)\nBread\nButter\n");
      assert.deepEqual(open, [], "the desktop's conflict settled with the choice made here");
    },
    { interval: 500, timeout: 30_000 },
  );
});

test("a conflict kept whole in a terminal leaves the open page's panel, and the other device stops asking", async (t) => {
  const { page, seeded, other } = await laptopAndDesktop(t, (home) => ({
    plan: addNote(home, "Plan", "Monday\nTuesday\n").note_id,
    home,
  }));
  await openNote(page, "Plan");
  const edit = (text) => JSON.stringify({ note_id: seeded.plan, edits: [{ old_text: "Monday", new_text: text }] });
  // The desktop changes the line and keeps it to itself until the laptop changed it too.
  execFileSync(QUIRE, ["tools", "call", "update_note", edit("Monday: gym (desktop)")], { env: other.env });
  execFileSync(QUIRE, ["tools", "call", "update_note", edit("Monday: dentist (laptop)")], { env: seeded.home.env });
  execFileSync(QUIRE, ["sync"], { env: other.env });
  const panel = page.locator("#sync-conflicts");
  await panel.getByRole("button", { name: "Keep both" }).waitFor({ timeout: 20_000 });
  const [open] = cli(seeded.home, "sync", "conflicts");
  // The desktop sees the conflict too, once the laptop's line reaches it.
  const atDesktop = () => {
    execFileSync(QUIRE, ["sync"], { env: other.env });
    return cli(other, "sync", "conflicts");
  };
  await eventually(atDesktop, (listed) => assert.equal(listed.length, 1), { interval: 500, timeout: 30_000 });
  // Keeping both changes no text: only the choice is recorded, and the page still hears of it.
  withPassphrase(seeded.home, "sync", "resolve", String(open.id), "--keep", "both");
  await panel.waitFor({ state: "hidden", timeout: 20_000 });
  // The choice travels though the text does not change: the desktop stops asking too.
  await eventually(atDesktop, (listed) => assert.deepEqual(listed, []), { interval: 500, timeout: 30_000 });
  await expectEditorText(page, /Monday: dentist \(laptop\)\nMonday: gym \(desktop\)|Monday: gym \(desktop\)\nMonday: dentist \(laptop\)/);
  await eventually(() => page.locator("#sync-state").getAttribute("data-conflicts"), (count) => assert.equal(count, "0"));
});

// Issue 46, "protection never rolls back": the desktop changes a note and seals it before the laptop's edit, made
// in this page, reaches it. The page says the laptop's edit waits beside the sealed note; unlocking merges it in
// (different lines: no question), the editor shows both, and the desktop gets the merge.
test("an edit made here while another device sealed the note waits beside it and merges when the page is unlocked", async (t) => {
  const { page, seeded, other, home, expect } = await laptopAndDesktop(t, (home) => ({
    shopping: addNote(home, "Shopping", "Eggs\nMilk\nBread\n").note_id,
  }));
  // The sealed note, read while locked, is answered "Locked" (423): the page shows it so.
  expect(/status of 423/);
  await eventually(() => cli(other, "note", "show", seeded.shopping).body, (body) => assert.equal(body, "Eggs\nMilk\nBread\n"), {
    interval: 500,
    timeout: 30_000,
    message: "the desktop has the note",
  });
  // The desktop, not syncing for now: its own change, then protected (sealed).
  const desk = JSON.stringify({ note_id: seeded.shopping, edits: [{ old_text: "Eggs", new_text: "Eggs x12 (desktop)" }] });
  execFileSync(QUIRE, ["tools", "call", "update_note", desk], { env: other.env });
  withPassphrase(other, "note", "protect", seeded.shopping);
  // The laptop's change, typed here and synced before the seal arrives.
  await openNote(page, "Shopping");
  await page.locator("#editor .cm-content").click();
  await page.keyboard.press("Control+End");
  await page.keyboard.press("ArrowUp");
  await page.keyboard.press("End");
  await page.keyboard.type(" (rye, laptop)");
  await eventually(() => serverNote(page, seeded.shopping), (note) => assert.match(note.body, /Bread \(rye, laptop\)/), { interval: 200 });
  await eventually(() => page.locator("#sync-state").getAttribute("data-phase"), (phase) => assert.equal(phase, "synced"));
  execFileSync(QUIRE, ["sync"], { env: other.env });

  // Sealed here too, the laptop's edit beside it: said in the panel, and nothing of the text in the page.
  await eventually(() => cli(home, "sync", "conflicts"), (open) => assert.equal(open.length, 1, JSON.stringify(open)), { timeout: 20_000 });
  const panel = page.locator("#sync-conflicts");
  await expectText(panel, /Edits made on this device wait beside this note: desktop sealed it before they arrived/, undefined, { timeout: 20_000 });
  await page.locator("#locked-panel").waitFor();
  await page.screenshot({ path: join(SHOTS, "sync-sealed-aside.png") });
  await eventually(() => page.content(), (html) => assert.ok(!html.includes("rye, laptop"), "the edit is sealed"));

  await page.click("#unlock-note");
  const dialog = page.getByRole("dialog", { name: "Unlock sealed notes" });
  await dialog.getByLabel("Passphrase").fill(PASSPHRASE);
  await dialog.getByLabel("Passphrase").press("Enter");
  await dialog.waitFor({ state: "detached" });
  await expectEditorText(page, "Eggs x12 (desktop)\nMilk\nBread (rye, laptop)\n", "merged once unlocked", { timeout: 20_000 });
  await panel.waitFor({ state: "hidden" });
  await page.screenshot({ path: join(SHOTS, "sync-sealed-merged.png") });
  await eventually(
    () => {
      execFileSync(QUIRE, ["sync"], { env: other.env });
      return withPassphrase(other, "--json", "note", "show", seeded.shopping);
    },
    (shown) => assert.equal(JSON.parse(shown).body, "Eggs x12 (desktop)\nMilk\nBread (rye, laptop)\n"),
    { interval: 500, timeout: 30_000 },
  );
});
