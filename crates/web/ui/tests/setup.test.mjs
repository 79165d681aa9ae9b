// Setting up a passphrase and sync from Settings (ux-2 #8), in a real browser against the real binary: the recovery
// key shown once, closed only when its last group is typed back, and real (it resets the passphrase in a terminal);
// sync started from one page (asking for the passphrase to unlock), joined from another workspace's page with the
// passphrase, the note arriving there, and stopped with one confirmation.
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { QUIRE, SHOTS, addNote, browserSuite, cli, eventually, expectHidden, expectText } from "./support.mjs";

const { session } = await browserSuite();
const PASSPHRASE = "correct horse battery";

/// Sets the workspace's passphrase in a terminal (`quire lock init`), with a cheap key derivation for tests.
function lockInit(home) {
  execFileSync(QUIRE, ["lock", "init", "--passphrase-stdin", "--kdf-memory-kib", "8", "--kdf-passes", "1"], {
    env: home.env,
    input: `${PASSPHRASE}\n${PASSPHRASE}\n`,
    stdio: ["pipe", "ignore", "inherit"],
  });
}

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
    lockInit(home);
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

/// wsgidav (from `QUIRE_SYNC_SERVERS`, which CI sets: the test is then mandatory) serving `root` to `me` with
/// `password` alone; `null` where it is not installed.
async function webdavWithPassword(t, root, password) {
  const dir = process.env.QUIRE_SYNC_SERVERS;
  const program = dir ? join(dir, "wsgidav") : null;
  if (!program || !existsSync(program)) return null;
  const port = await freePort();
  const config = join(root, "..", "wsgidav.json");
  writeFileSync(
    config,
    JSON.stringify({
      host: "127.0.0.1",
      port,
      provider_mapping: { "/": root },
      http_authenticator: { domain_controller: null, accept_basic: true, accept_digest: false, default_to_digest: false },
      simple_dc: { user_mapping: { "*": { me: { password, roles: [] } } } },
      verbose: 1,
      logging: { enable: false },
    }),
  );
  const server = spawn(program, [`--config=${config}`], { stdio: "ignore" });
  t.after(() => server.kill());
  // Up when it answers (401: it asks who is there).
  await eventually(
    () => fetch(`http://127.0.0.1:${port}/`, { method: "PROPFIND" }).then((r) => r.status, () => 0),
    (status) => assert.equal(status, 401),
  );
  return port;
}

function freePort() {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolvePort(port));
    });
    server.on("error", reject);
  });
}

test("a WebDAV password typed in Settings is kept for the user alone, used by the terminal too, and forgotten on leaving", async (t) => {
  // issue 45: the page set up WebDAV or S3 only when quire serve's environment held the password or keys.
  const base = mkdtempSync(join(tmpdir(), "quire-dav-"));
  t.after(() => rmSync(base, { recursive: true, force: true }));
  const root = join(base, "root");
  mkdirSync(root);
  const password = "dav-Pa55word-91";
  const port = await webdavWithPassword(t, root, password);
  if (port === null) {
    assert.ok(!process.env.QUIRE_SYNC_SERVERS, "the sync servers were installed: wsgidav must be there");
    t.skip("wsgidav is not installed");
    return;
  }
  const desk = await session(t, (home) => {
    addNote(home, "Packing list", "passport, charger");
    lockInit(home);
  });
  desk.expect(/status of 423/);
  desk.expect(/status of 400/);
  const { page, home } = desk;
  const kept = join(home.env.XDG_CONFIG_HOME, "quire", "sync-credentials.json");
  await page.click("#settings-button");
  await page.locator("#sync-target").waitFor();
  // A folder asks for nothing; a WebDAV address for its password, S3 for its keys.
  await expectHidden(page.locator("#sync-webdav"));
  await expectHidden(page.locator("#sync-s3"));
  await page.fill("#sync-target", "s3://bucket/notes");
  await page.locator("#sync-s3-secret").waitFor();
  await expectHidden(page.locator("#sync-webdav"));
  const target = `webdav+http://me@127.0.0.1:${port}/notes`;
  await page.fill("#sync-target", target);
  await page.locator("#sync-webdav-password").waitFor();
  await expectHidden(page.locator("#sync-s3"));
  // A wrong password: refused, and not kept.
  await page.fill("#sync-webdav-password", "not-it");
  await page.fill("#sync-name", "desk");
  await page.click("#sync-start");
  const unlock = page.getByRole("dialog", { name: "Unlock sealed notes" });
  await unlock.getByLabel("Passphrase").fill(PASSPHRASE);
  await unlock.getByLabel("Passphrase").press("Enter");
  await expectText(page.locator("#sync-settings .error"), /401|nauthori|denied|permission/i);
  await page.locator("#sync-settings").screenshot({ path: join(SHOTS, "setup-sync-webdav-refused.png") });
  await eventually(
    () => (existsSync(kept) ? readFileSync(kept, "utf8") : ""),
    (text) => assert.ok(!text.includes("not-it"), "a refused password is not kept"),
  );
  await page.fill("#sync-webdav-password", password);
  await page.click("#sync-start");
  await expectText(page.locator("#sync-summary"), /“desk”, syncs with/);
  await page.locator("#sync-settings").screenshot({ path: join(SHOTS, "setup-sync-webdav.png") });

  // Kept for the user alone; not in the workspace file, nor said on the server's terminal.
  assert.equal(statSync(kept).mode & 0o777, 0o600);
  assert.ok(readFileSync(kept, "utf8").includes(password));
  assert.ok(!readFileSync(home.env.QUIRE_WORKSPACE).includes(password), "the password is in the workspace file");
  assert.ok(!desk.server.stderr().includes(password), "the password is on the server's terminal");
  // The terminal finds it there: a sync without QUIRE_WEBDAV_PASSWORD.
  addNote(home, "Added in a terminal", "sunscreen");
  const synced = cli(home, "sync");
  assert.equal(synced.sent_notes, 1, JSON.stringify(synced));

  await page.click("#sync-leave");
  await page.getByRole("dialog", { name: "Stop syncing?" }).getByRole("button", { name: "Stop syncing" }).click();
  await expectHidden(page.locator("#sync-summary"));
  await eventually(
    () => readFileSync(kept, "utf8"),
    (text) => assert.ok(!text.includes(password), "leaving forgets the password"),
  );
});
