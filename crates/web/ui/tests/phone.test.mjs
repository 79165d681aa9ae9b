// Your notes on your phone (issue 48), in Chromium emulating a phone (390x844, touch): a device pairs with a one-time
// code made in Settings or by the CLI, reaches only what it was given, stops at once when ended; the app installs
// (manifest, icons, service worker), opens offline with the notes opened lately, keeps an edit made offline and
// merges it into the note when the server is back, by sync's rule, with a change made meanwhile on the computer.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { test } from "node:test";
import {
  QUIRE,
  SHOTS,
  addNote,
  axeClean,
  browserSuite,
  cli,
  eventually,
  expectAttribute,
  expectCount,
  expectHidden,
  expectEditorText,
  expectText,
  expectVisible,
  openNote,
} from "./support.mjs";

const { browser, session } = await browserSuite();

/// A 1x1 PNG.
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

const PHONE = {
  viewport: { width: 390, height: 844 },
  deviceScaleFactor: 3,
  isMobile: true,
  hasTouch: true,
  userAgent: "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0 Mobile Safari/537.36",
};

/// A phone's browser, with page errors kept (a revoked phone's refusals are expected by the test that makes them).
async function phone(t) {
  const context = await browser.newContext(PHONE);
  const page = await context.newPage();
  const problems = [];
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  t.after(() => context.close());
  return { context, page, problems };
}

/// A phone paired (by a code from the CLI) with `server`, its page under the service worker's control.
async function pairedPhone(t, server, home) {
  const made = JSON.parse(execFileSync(QUIRE, ["--json", "device", "pair", "pocket"], { env: home.env, encoding: "utf8" }));
  const phoneAt = await phone(t);
  const p = phoneAt.page;
  await p.goto(`${server.base}/pair#code=${made.code}`);
  await p.waitForURL(`${server.base}/`);
  await p.evaluate(() => navigator.serviceWorker.ready);
  await p.reload();
  await p.waitForFunction(() => !!navigator.serviceWorker.controller);
  return phoneAt;
}

/// What the phone keeps: the kept answers' paths (IndexedDB) and the service worker's cached addresses.
const keptOnPhone = (page) =>
  page.evaluate(async () => {
    const db = await new Promise((resolve, reject) => {
      const open = indexedDB.open("quire-offline", 1);
      open.onsuccess = () => resolve(open.result);
      open.onerror = () => reject(open.error);
    });
    const paths = await new Promise((resolve) => {
      const request = db.transaction("kept").objectStore("kept").getAllKeys();
      request.onsuccess = () => resolve(request.result);
    });
    db.close();
    const cached = [];
    for (const name of await caches.keys()) for (const r of await (await caches.open(name)).keys()) cached.push(new URL(r.url).pathname);
    return { paths, cached };
  });

/// The phone's own API call with its cookie and its page's secret: the status.
const phoneCall = (page, path) =>
  page.evaluate(async (path) => (await fetch(`/api${path}`, { headers: { "x-quire-session": localStorage.getItem("quire-session") ?? "" } })).status, path);

test("a phone pairs with a code from Settings, reaches only its notebook, and stops at once when ended", async (t) => {
  const { page, server, home } = await session(t, (home) => {
    cli(home, "notebook", "add", "Home");
    cli(home, "notebook", "add", "Work");
    addNote(home, "Shopping", "Milk\n", "--notebook", "Home");
    addNote(home, "Salaries", "confidential\n", "--notebook", "Work");
    return {};
  });
  // On the computer: Settings, "Your phone and other devices", a device limited to Home, read-only.
  await page.click("#settings-button");
  await page.locator("#device-form").waitFor();
  await page.fill("#device-name", "phone");
  await page.locator("#device-notebooks label", { hasText: "Home" }).locator("input").check();
  await page.check("#device-read-only");
  await page.click("#device-pair");
  const code = await eventually(() => page.locator("#device-code .pair-code").innerText({ timeout: 2_000 }), (c) => assert.match(c, /^[0-9A-Z]{5}-[0-9A-Z]{5}$/));
  await page.locator("#device-code img.qr").waitFor();
  await page.screenshot({ path: `${SHOTS}/phone-pair-settings.png` });

  // The phone types the code (as a person may: small letters, no dash).
  const { page: p } = await phone(t);
  await p.goto(`${server.base}/pair`);
  await axeClean(p, "the pairing page");
  await p.fill("#pair-code", "wrong-code");
  await p.click("#pair-button");
  await expectText(p.locator("#pair-status"), /not valid/);
  await p.fill("#pair-code", code.replace("-", "").toLowerCase());
  await p.click("#pair-button");
  await p.waitForURL(`${server.base}/`);
  // It opens on its notebook (it has nothing at the top level).
  await p.locator("#notes .note-item", { hasText: "Shopping" }).waitFor();
  await expectText(p.locator("#list-title"), "Home");
  await p.click("#pane-notebooks");
  await axeClean(p, "the phone's notebooks");
  await p.locator("#tree .tree-item", { hasText: "Home" }).click();
  await p.locator("#notes .note-item", { hasText: "Shopping" }).waitFor();
  await p.screenshot({ path: `${SHOTS}/phone-list.png` });
  await axeClean(p, "the phone's list");
  await expectCount(p.locator("#tree .tree-item", { hasText: "Work" }), 0, "Work is not the phone's");
  assert.equal(await phoneCall(p, "/devices"), 403, "a phone makes no devices");
  const salaries = cli(home, "note", "list", "--notebook", "Work").notes[0].note_id;
  assert.equal(await phoneCall(p, `/notes/${salaries}`), 404, "a note outside its notebook does not exist for it");
  const status = await p.evaluate(async () =>
    (await fetch("/api/notes", { method: "POST", headers: { "content-type": "application/json", "x-quire-session": localStorage.getItem("quire-session") }, body: JSON.stringify({ title: "x", body: "" }) })).status,
  );
  assert.equal(status, 403, "a read-only phone writes nothing");
  await openNote(p, "Shopping");
  // A device that only reads shows no editing: no new note, a text that takes no typing, a title that is disabled.
  await expectAttribute(p.locator("body"), "data-device", "device read-only limited");
  await expectAttribute(p.locator("#editor .cm-content"), "contenteditable", "false");
  await expectHidden(p.locator("#attach"));
  await eventually(() => p.locator("#title").isDisabled(), (disabled) => assert.equal(disabled, true));
  await p.screenshot({ path: `${SHOTS}/phone-note.png` });
  // Nor the assistant, which reads the whole workspace.
  await p.click("#pane-assistant");
  await expectHidden(p.locator("#message"));
  await p.click("#pane-note");
  await axeClean(p, "the phone's note");

  // The phone's Settings says what it is; the server's settings are changed on the computer.
  await p.click("#settings-button");
  await expectText(p.locator("#settings"), /This device is paired with the quire on your computer, for some notebooks, to read only/);
  // Settings lists it; ending it from the terminal stops the phone's next request, and its open page at once.
  await page.click("#settings-button");
  await expectText(page.locator("#device-list"), /phone\s+Home, read-only; paired/);
  execFileSync(QUIRE, ["device", "revoke", "phone"], { env: home.env });
  await expectText(p.locator(".session-ended h2"), "This device is no longer paired");
  await expectVisible(p.locator(".session-ended a[href='/pair']"));
  await eventually(() => phoneCall(p, "/notebooks"), (s) => assert.equal(s, 401, "a revoked phone gets nothing"));
  await p.reload();
  await expectText(p.locator("body"), /pair it/);
});

test("the app installs, opens offline, and an edit made offline is merged when the server is back", async (t) => {
  const { server, home, seeded } = await session(t, (home) => ({ plan: addNote(home, "Plan", "Milk\nEggs\nBread\n").note_id }));
  const { context, page: p } = await pairedPhone(t, server, home);
  // Installable: a manifest with icons and a service worker that controls the page.
  const manifest = await p.evaluate(async () => (await fetch(document.querySelector('link[rel="manifest"]').href)).json());
  assert.equal(manifest.display, "standalone");
  assert.ok(manifest.icons.some((i) => i.sizes === "512x512" && i.type === "image/png"));
  assert.equal(manifest.share_target.action, "/share");
  await openNote(p, "Plan");
  await expectEditorText(p, "Milk\nEggs\nBread\n");

  // Offline: the edit is kept on the phone and says so.
  await context.setOffline(true);
  await p.locator("#editor .cm-content").click();
  await p.keyboard.press("Control+Home");
  await p.keyboard.press("End");
  await p.keyboard.type(" (2 L)");
  await p.keyboard.press("Control+End");
  await p.keyboard.type("Jam\n");
  await expectText(p.locator("#save-state"), /Offline: kept on this device/);
  await expectText(p.locator("#offline-state"), /Offline: 1 edit waits/);
  // A reload offline opens the app from what the phone kept, with the edit.
  await p.reload();
  await p.click("#pane-list");
  await openNote(p, "Plan");
  await expectEditorText(p, "Milk (2 L)\nEggs\nBread\nJam\n");
  await p.screenshot({ path: `${SHOTS}/phone-offline.png` });

  // Meanwhile on the computer: the same first line, and another.
  const edit = JSON.stringify({ note_id: seeded.plan, body: "Oat milk\nEggs\nRye bread\n" });
  execFileSync(QUIRE, ["tools", "call", "update_note", edit], { env: home.env });

  // Back online: the edit goes in, merged by sync's rule; both versions of the first line are kept, with a choice.
  await context.setOffline(false);
  await p.evaluate(() => window.dispatchEvent(new Event("online")));
  const stored = await eventually(
    () => cli(home, "note", "show", seeded.plan).body,
    (body) => {
      for (const words of ["Oat milk", "Milk (2 L)", "Rye bread", "Jam"]) assert.ok(body.includes(words), `${words} is kept`);
    },
  );
  for (const once of ["Eggs", "Jam", "Milk \\(2 L\\)", "Rye bread"]) assert.equal(stored.match(new RegExp(once, "g")).length, 1, `${once} once`);
  await expectEditorText(p, stored);
  await eventually(() => p.locator("#offline-state").isVisible(), (shown) => assert.equal(shown, false));
  await p.locator("#sync-conflicts .versions").first().waitFor();
  await p.screenshot({ path: `${SHOTS}/phone-merged.png` });
});

test("Chromium finds the app installable, and the share sheet's text, link and image become a note in Inbox", async (t) => {
  const { server, home } = await session(t, (home) => addNote(home, "Plan", "x\n"));
  const { context, page: p } = await pairedPhone(t, server, home);
  // Chromium's own installability checks (what Lighthouse reports): none fails but the test browser's private
  // profile ("in-incognito"), which is the browser's, not the app's.
  const cdp = await context.newCDPSession(p);
  const { installabilityErrors } = await cdp.send("Page.getInstallabilityErrors");
  assert.deepEqual(installabilityErrors.filter((e) => e.errorId !== "in-incognito"), []);

  // The share sheet posts a form to the manifest's share target, which the service worker takes.
  await p.evaluate((png) => {
    const form = document.createElement("form");
    form.method = "POST";
    form.action = "/share";
    form.enctype = "multipart/form-data";
    for (const [name, value] of [["title", "Trail map"], ["text", "The route for Sunday"], ["url", "https://example.org/trail"]]) {
      const input = document.createElement("input");
      input.name = name;
      input.value = value;
      form.append(input);
    }
    const file = document.createElement("input");
    file.type = "file";
    file.name = "files";
    const data = new DataTransfer();
    data.items.add(new File([Uint8Array.from(atob(png), (c) => c.charCodeAt(0))], "map.png", { type: "image/png" }));
    file.files = data.files;
    form.append(file);
    document.body.append(form);
    form.submit();
  }, PNG);
  // Any page could post there: quire asks before it saves what was shared.
  await p.getByRole("button", { name: "Save to Inbox" }).click();
  await p.waitForFunction(() => document.querySelector("#title")?.value === "Trail map");
  const inbox = await eventually(
    () => cli(home, "note", "list", "--notebook", "Inbox").notes,
    (notes) => assert.equal(notes.length, 1),
  );
  const note = cli(home, "note", "show", inbox[0].note_id);
  assert.match(note.body, /^The route for Sunday\n\nhttps:\/\/example\.org\/trail\n\n!\[map\.png\]\(quire:\/\/attachment\/\w+\)$/);
  await p.screenshot({ path: `${SHOTS}/phone-shared.png` });
});

test("a notebook kept on the phone opens offline whole, notes never opened there included", async (t) => {
  const { server, home } = await session(t, (home) => {
    cli(home, "notebook", "add", "Trip");
    addNote(home, "Tent", "Two poles\n", "--notebook", "Trip");
    addNote(home, "Stove", "Gas for three days\n", "--notebook", "Trip");
    const passport = addNote(home, "Passport", "In the drawer\n", "--notebook", "Trip").note_id;
    cli(home, "note", "protect", passport);
    return {};
  });
  const { context, page: p } = await pairedPhone(t, server, home);
  await p.click("#pane-notebooks");
  await p.locator("#tree .tree-item", { hasText: "Trip" }).click();
  await p.check("#keep-offline");
  await expectText(p.locator("#status"), /“Trip” is kept on this device/);
  // The phone keeps Trip's notes but the protected one, and the worker never an answer of the API.
  const passport = cli(home, "note", "list", "--notebook", "Trip").notes.find((n) => n.title === "Passport").note_id;
  await eventually(
    () => keptOnPhone(p),
    ({ paths, cached }) => {
      assert.ok(paths.some((k) => /^\/notes\/[0-9a-f]+$/.test(k)), `notes kept: ${paths}`);
      assert.ok(!paths.includes(`/notes/${passport}`), "a protected note is never kept");
      assert.ok(cached.includes("/assets/app.js") && !cached.some((c) => c.startsWith("/api/")), `cached: ${cached}`);
    },
  );

  await context.setOffline(true);
  await p.reload();
  await p.click("#pane-notebooks");
  await p.locator("#tree .tree-item", { hasText: "Trip" }).click();
  await openNote(p, "Stove");
  await expectEditorText(p, "Gas for three days\n");
  // A protected note is never kept: offline it is not there to open.
  await p.click("#pane-list");
  await openNoteExpectingNothing(p, "Passport");
});

/// Opens a note from the list and waits until the page says it cannot (offline, not kept).
async function openNoteExpectingNothing(page, title) {
  await page.locator("#notes .note-item", { hasText: title }).first().click();
  await expectText(page.locator("#status"), /kept no copy/);
}

test("a phone adds a passkey when it pairs, signs in again with it when its cookie is gone, and not once ended", async (t) => {
  const { page, server, home } = await session(t, (home) => {
    addNote(home, "Shopping", "Milk\n");
    return {};
  });
  const made = JSON.parse(execFileSync(QUIRE, ["--json", "device", "pair", "pocket"], { env: home.env, encoding: "utf8" }));
  // Passkeys need a host name (browsers make none for an IP address): the phone reaches quire as localhost. Its
  // authenticator is Chromium's virtual one (a platform authenticator that verifies the user).
  const named = server.base.replace("127.0.0.1", "localhost");
  const { context, page: p } = await phone(t);
  const cdp = await context.newCDPSession(p);
  await cdp.send("WebAuthn.enable");
  const { authenticatorId } = await cdp.send("WebAuthn.addVirtualAuthenticator", {
    options: { protocol: "ctap2", transport: "internal", hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  });
  await p.goto(`${named}/pair#code=${made.code}`);
  await expectVisible(p.locator("#passkey-offer"));
  await expectText(p.locator("#pair-status"), "Paired as “pocket”.");
  await axeClean(p, "the passkey offer");
  await p.screenshot({ path: `${SHOTS}/phone-passkey-offer.png` });
  await p.click("#passkey-add");
  await p.waitForURL(`${named}/`);
  await p.locator("#notes .note-item", { hasText: "Shopping" }).waitFor();
  await eventually(async () => (await cdp.send("WebAuthn.getCredentials", { authenticatorId })).credentials, (c) => assert.equal(c.length, 1));
  await eventually(() => execFileSync(QUIRE, ["device", "list"], { env: home.env, encoding: "utf8" }), (out) => assert.match(out, /pocket {2}all notebooks {2}a passkey/));
  await page.click("#settings-button");
  await expectText(page.locator("#device-list"), /pocket\s+all notebooks; paired .*signs in with a passkey/);

  // Its cookie and storage are gone (cleared, or the app on the home screen, which has cookies of its own): the
  // pairing page signs it in with the passkey, no new code.
  await context.clearCookies();
  await p.evaluate(() => localStorage.clear());
  await p.goto(`${named}/`);
  await expectText(p.locator("body"), /pair it/);
  await p.goto(`${named}/pair`);
  await expectVisible(p.locator("#passkey-signin"));
  await p.screenshot({ path: `${SHOTS}/phone-passkey-signin.png` });
  await p.click("#passkey-signin-button");
  await p.waitForURL(`${named}/`);
  await p.locator("#notes .note-item", { hasText: "Shopping" }).waitFor();
  assert.equal(await phoneCall(p, "/notebooks"), 200);
  // Signed in, its Settings lead to its pairing page, which offers another passkey rather than a sign-in; the one it
  // has is not made twice.
  await p.click("#settings-button");
  await p.click("#device-passkeys");
  await p.waitForURL(`${named}/pair`);
  await expectText(p.locator("#pair-status"), "This device is paired as “pocket”, with one passkey.");
  await p.click("#passkey-add");
  await expectText(p.locator("#pair-status"), "This device has a passkey for quire already.");

  // Ended in the terminal: the passkey opens nothing.
  execFileSync(QUIRE, ["device", "revoke", "pocket"], { env: home.env });
  await context.clearCookies();
  await p.evaluate(() => localStorage.clear());
  await p.goto(`${named}/pair`);
  await p.click("#passkey-signin-button");
  await expectText(p.locator("#pair-status"), /no longer paired/);
  assert.equal(await phoneCall(p, "/notebooks"), 401);
});
