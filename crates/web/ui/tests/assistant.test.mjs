// The assistant sidebar in a real browser: a turn's reply streamed with its tool cards, proposed edits accepted and
// rejected (by keyboard too, and stale once the user touched their text), chats resumed, approval of a destructive
// call, cancel and a closed tab, protected notes the model never sees, and a model added from the page.
import assert from "node:assert/strict";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { SHOTS, addNote, ask, browserSuite, cli, eventually, expectCount, expectEditorText, expectHidden, expectText, expectValue, expectVisible, openApp, openNote, serverNote, startQuire, tempHome, turnDone } from "./support.mjs";

const { browser, mock, session } = await browserSuite();

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
  await expectVisible(page.locator("#cancel"), "the turn is still running");
  await eventually(() => page.locator(".bubble.assistant").innerText(), (text) => assert.notEqual(text, "I capitalised a word and added a note."));
  await turnDone(page);
  assert.match(JSON.stringify(mock.requests[0]), /alpha beta gamma/, "the focused note went to the model");
  await expectText(page.locator(".bubble.assistant").last(), /capitalised a word/);
  await eventually(
    async () => ({ cards: await page.locator(".tool-card").count(), messages: await page.locator("#messages").innerText() }),
    ({ cards, messages }) => assert.equal(cards, 3, messages),
  );
  await page.locator("#notes .note-item", { hasText: "Side note" }).waitFor();
  await expectText(page.locator(".tool-card").first(), /Rewrite paragraph/);
  await expectCount(page.locator(".cm-ai-proposal"), 2);
  await expectText(page.locator("#proposal-count"), /2 proposed edits/);
  await page.screenshot({ path: join(SHOTS, "editor-sidebar-diff.png") });
  await page.locator(".cm-ai-accept").first().click();
  await page.waitForFunction(() => document.querySelectorAll(".cm-ai-proposal").length === 1);
  await page.locator(".cm-ai-reject").first().click();
  await expectCount(page.locator(".cm-ai-proposal"), 0);
  await expectEditorText(page, "alpha BETA gamma\n\nsecond line here\n");
  await eventually(() => serverNote(page, id), (note) => assert.equal(note.body, "alpha BETA gamma\n\nsecond line here\n", "saved once, on accept"));
  await page.click("#editor .cm-content");
  await page.keyboard.press("Control+z");
  await expectEditorText(page, "alpha beta gamma\n\nsecond line here\n", "one undo takes the whole accept back");
  await page.keyboard.press("Control+Shift+z");
  await expectEditorText(page, "alpha BETA gamma\n\nsecond line here\n", "and redo puts it back");
  await page.waitForFunction(() => document.querySelector("#save-state").textContent === "Saved");

  // A selection bounds what the assistant may change.
  await page.locator("#editor .cm-content").getByText("second line here").dblclick({ position: { x: 5, y: 5 } });
  await eventually(
    () =>
      page.evaluate(() => {
        const state = document.querySelector("#editor .cm-content").cmTile.root.view.state;
        return state.sliceDoc(state.selection.main.from, state.selection.main.to);
      }),
    (selected) => assert.equal(selected, "second"),
  );
  mock.script.push({ calls: [["edit_selection", { text: "2nd" }]] }, { text: "Shortened." });
  await ask(page, "Shorter");
  await turnDone(page);
  const offered = mock.requests.at(-2).tools.map((tool) => tool.function.name);
  assert.ok(offered.includes("edit_selection") && !offered.includes("insert_after_anchor"), offered.join());
  assert.match(JSON.stringify(mock.requests.at(-2)), /second/, "the selection went to the model");
  await page.click("#accept-all");
  await page.waitForFunction(() => document.querySelectorAll(".cm-ai-proposal").length === 0);
  await expectEditorText(page, "alpha BETA gamma\n\n2nd line here\n");
  await page.waitForFunction(async (id) => (await (await fetch(`/api/notes/${id}`, { headers: { "x-quire-session": localStorage.getItem("quire-session") } })).json()).body.startsWith("alpha BETA gamma\n\n2nd"), id);
});

test("a note's chats are listed and resumed with their history", async (t) => {
  const { page } = await session(t, (home) => addNote(home, "Garden", "tomatoes and basil"));
  await openNote(page, "Garden");
  mock.script.push({ calls: [["search_notes", { query: "basil" }]] }, { text: "Basil likes sun." });
  await ask(page, "What does basil need?");
  await turnDone(page);
  // Two requests of 120 tokens in (100 cached) and 30 out: the turn's and the chat's tokens under the reply.
  const spent = "240 tokens in (200 cached), 60 out";
  await expectText(page.locator("#usage"), `This turn: ${spent}, 2 steps · This chat: 1 turn, ${spent}`);
  await page.reload();
  await page.waitForSelector("#tree .tree-item");
  await openNote(page, "Garden");
  const chats = page.locator("#chats option");
  await page.waitForFunction(() => document.querySelectorAll("#chats option").length === 2);
  // ux-2 #12: with the time, to the minute, so that chats asked the same question differ.
  await expectText(chats.nth(1), /What does basil need.* · \S+ \d{1,2}:\d{2}/);
  await page.selectOption("#chats", { index: 1 });
  await page.locator(".bubble.assistant", { hasText: "Basil likes sun." }).waitFor();
  await expectText(page.locator("#messages"), /Search notes · called/);
  await expectText(page.locator("#usage"), `This chat: 1 turn, ${spent}`, "a resumed chat shows its totals");
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
  await eventually(() => serverNote(page, id), (note) => assert.equal(note.in_trash, false));
  await expectText(page.locator(".tool-card").last(), /declined/);
});

test("cancel stops a turn mid-way and rolls its writes back", async (t) => {
  const { page, home } = await session(t);
  mock.script.push({ calls: [["create_note", { title: "Made by the assistant" }]] }, { hang: true });
  await ask(page, "Make a note, then think for a long time");
  await page.locator(".tool-card:not(.running)").waitFor();
  await page.click("#cancel");
  await turnDone(page);
  await expectText(page.locator("#messages"), /cancelled/);
  // ux-2 #11: the card of a call whose write was rolled back says so, not "done".
  await expectText(page.locator(".tool-card .tool-state").first(), " · cancelled, rolled back");
  await eventually(() => cli(home, "note", "list").notes.length, (count) => assert.equal(count, 0, "the note the turn made is gone"));
});

test("closing the tab stops the turn and keeps what it wrote", async (t) => {
  const { page, home, context } = await session(t);
  mock.script.push({ calls: [["create_note", { title: "Kept after leaving" }]] }, { hang: true });
  await ask(page, "Make a note, then think for a long time");
  await page.locator(".tool-card:not(.running)").waitFor();
  await page.close();
  // The server notices the closed stream and stops the turn; the note stays, in the turn's change set.
  await eventually(() => cli(home, "note", "list").notes, (notes) => assert.equal(notes.length, 1), { interval: 100 });
  await eventually(() => cli(home, "history"), (history) => assert.match(history.change_sets[0]?.actor, /agent/), { interval: 100 });
  // The turn stopped: its model call (the hanging step) was closed by the server.
  await eventually(() => mock.openRequests(), (open) => assert.equal(open, 0, "the server stopped the turn when the page went away"));
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
  await expectCount(page.locator(".cm-ai-proposal"), 2);
  await expectCount(page.locator(".cm-ai-proposal.cm-ai-stale"), 1);
  await expectCount(page.locator(".cm-ai-stale .cm-ai-accept"), 0, "a stale edit cannot be accepted");
  // By keyboard: Alt+N goes to an edit, Alt+A accepts the one under the cursor.
  await page.click("#editor .cm-content");
  await page.keyboard.press("Control+End");
  await page.keyboard.press("Alt+n");
  await page.keyboard.press("Alt+a");
  await page.waitForFunction(() => document.querySelectorAll(".cm-ai-accept").length === 0);
  await expectEditorText(page, "FIRST\n\nsecond para (mine)\n");
});

test("a protected note never reaches the model", async (t) => {
  const { page } = await session(t, (home) => {
    const note = addNote(home, "Diary", "my secret words");
    cli(home, "note", "protect", note.note_id);
  });
  await openNote(page, "Diary");
  await expectVisible(page.locator("#lock"));
  await expectText(page.locator("#focus"), /protected/);
  mock.script.push({ text: "I cannot see that note." });
  await page.locator("#editor .cm-content").getByText("my secret words").dblclick();
  await ask(page, "What does this say?");
  await turnDone(page);
  assert.equal(mock.requests.length, 1);
  assert.doesNotMatch(mock.seen(), /secret words/);
});

test("cancel drops the turn's proposed edits", async (t) => {
  const { page } = await session(t, (home) => addNote(home, "Draft", "first line\n"));
  await openNote(page, "Draft");
  mock.script.push({ calls: [["insert_after_anchor", { anchor: "first line", text: " (added)" }]] }, { hang: true });
  await ask(page, "Add something, then think for a long time");
  await page.locator(".tool-card:not(.running)").waitFor();
  await page.click("#cancel");
  await turnDone(page);
  // What the cancel says first, then what it took away.
  await expectText(page.locator("#status"), /proposed edit was dropped/);
  await expectCount(page.locator(".cm-ai-proposal"), 0, "no proposal is left on offer");
  await expectHidden(page.locator("#proposal-bar"));
  await expectEditorText(page, "first line\n");
});

test("the open note is protected and unprotected from the page; the assistant says once, in words, that it cannot see it", async (t) => {
  const { page, home } = await session(t, (home) => addNote(home, "Bob", "private words"));
  const bob = () => cli(home, "note", "list").notes.find((n) => n.title === "Bob");
  await openNote(page, "Bob");
  await expectHidden(page.locator("#lock"));
  await page.getByRole("button", { name: "Protect", exact: true }).click();
  await page.locator("#lock").waitFor();
  await eventually(bob, (note) => assert.equal(note.is_protected, true));
  await expectText(page.locator("#focus"), /protected/);
  mock.script.push({ text: "First answer." }, { text: "Second answer." });
  await ask(page, "What is here?");
  await turnDone(page);
  await ask(page, "And now?");
  await turnDone(page);
  assert.doesNotMatch(mock.seen(), /private words/);
  await eventually(
    () => page.locator("#messages .notice").allInnerTexts(),
    (notices) => {
      const refusals = notices.filter((n) => /protected/.test(n));
      assert.equal(refusals.length, 1, `said once: ${JSON.stringify(notices)}`);
      assert.match(refusals[0], /“Bob” is protected/);
      assert.doesNotMatch(refusals[0], /[0-9a-f]{8}/, "no hex id");
    },
  );
  await page.getByRole("button", { name: "Unprotect", exact: true }).click();
  await page.getByRole("dialog", { name: "Unprotect note" }).getByRole("button", { name: "Unprotect" }).click();
  await page.locator("#lock").waitFor({ state: "hidden" });
  await eventually(bob, (note) => assert.equal(note.is_protected, false));
  await expectText(page.locator("#focus"), /In focus: “Bob”/);
});

test("Enter sends a message to the assistant; Shift+Enter starts a new line; by meaning searches again", async (t) => {
  const { page } = await session(t, (home) => addNote(home, "Garden", "tomatoes and basil"));
  mock.script.push({ text: "Sent." });
  await page.fill("#message", "first line");
  await page.press("#message", "Shift+Enter");
  await page.keyboard.type("second line");
  await expectValue(page.locator("#message"), "first line\nsecond line");
  await page.press("#message", "Enter");
  await turnDone(page);
  assert.match(JSON.stringify(mock.requests.at(-1).messages), /first line\\nsecond line/);
  await expectValue(page.locator("#message"), "");
  // Turning "by meaning" on runs the same words again, by meaning.
  await page.locator("#search").pressSequentially("basil");
  await page.locator("#notes .note-item", { hasText: "Garden" }).waitFor();
  const searched = [];
  page.on("request", (r) => r.url().includes("/api/search") && searched.push(r.url()));
  await page.check("#semantic");
  await page.waitForFunction(() => document.querySelector("#list-title").textContent.startsWith("Search: basil"));
  await page.locator("#notes:not([aria-busy])").waitFor();
  await eventually(() => searched, (urls) => assert.ok(urls.some((u) => u.includes("semantic=true") && u.includes("basil")), urls.join()));
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
  await eventually(
    () => page.locator("#messages .setup").innerText(),
    (card) => {
      assert.match(card, new RegExp(`${join(home.dir, "home/.config/quire/config.toml").replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}`));
      assert.match(card, /started again/);
      assert.doesNotMatch(card, /--model/, "quire serve has no --model flag");
    },
  );
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
  // Settings' form beside the setup card's: every id of the page is its own.
  await page.click("#settings-button");
  await page.getByRole("form", { name: "Add a chat model" }).nth(1).waitFor();
  await eventually(
    () => page.evaluate(() => [...document.querySelectorAll("[id]")].map((e) => e.id).filter((id, i, all) => all.indexOf(id) !== i)),
    (repeated) => assert.deepEqual(repeated, []),
  );
  await page.keyboard.press("Escape");
  await form.getByRole("button", { name: "Add the model" }).click();
  await page.locator("#model option", { hasText: "Mock" }).waitFor({ state: "attached" });
  await expectCount(page.locator("#messages .setup"), 0, "the setup card is gone");
  await page.fill("#message", "Say hello");
  await page.press("#message", "Enter");
  await page.locator("#messages", { hasText: "Hello from the added model." }).waitFor();
  // Kept for the next start and for quire chat, readable by its owner only; the key never comes back to the page.
  const config = join(home.dir, "home/.config/quire/config.toml");
  const kept = readFileSync(config, "utf8");
  assert.match(kept, /\[\[chat\.models\]\]/);
  assert.match(kept, /api_key = "sk-kept-on-the-server"/);
  assert.equal(statSync(config).mode & 0o777, 0o600);
  await eventually(() => page.evaluate(() => document.body.innerHTML), (settings) => assert.doesNotMatch(settings, /sk-kept-on-the-server/));
  assert.deepEqual(problems.filter((p) => !/400 \(Bad Request\)/.test(p)), []);
});

test("on a phone, Enter starts a new line in a message and Send sends it", async (t) => {
  // ux-2 #15: a phone's keyboard has no Shift+Enter, so Enter sent and a message could not have two lines.
  const { page } = await session(t);
  await page.setViewportSize({ width: 390, height: 844 });
  await page.click("#pane-assistant");
  const box = page.locator("#message");
  await eventually(() => box.getAttribute("placeholder"), (text) => assert.match(text, /Send sends, Enter starts a new line/));
  await box.click();
  await box.type("first line");
  await box.press("Enter");
  await box.type("second line");
  await expectValue(box, "first line\nsecond line");
  mock.script.push({ text: "Two lines read." });
  await page.click("#send");
  await turnDone(page);
  await eventually(() => JSON.stringify(mock.requests.at(-1)), (sent) => assert.match(sent, /first line\\nsecond line/));
});

test("what the assistant read is in the note's History and in Settings, with the part it read", async (t) => {
  const { page, home } = await session(t, (home) => {
    addNote(home, "Garden", "tomatoes and basil");
    addNote(home, "Orchard", "apples and pears");
    return {};
  });
  await openNote(page, "Garden");
  mock.script.push({ calls: [["search_notes", { query: "pears" }]] }, { text: "The orchard has pears." });
  await ask(page, "Where are the pears?");
  await turnDone(page);
  // The note the chat is about was sent to the model whole; the search gave a snippet of the other.
  await page.click("#tab-history");
  await expectText(page.locator("#note-ledger"), /the assistant\s*whole note/);
  await page.screenshot({ path: `${SHOTS}/ledger-history.png` });
  await openNote(page, "Orchard");
  await page.click("#tab-history");
  await expectText(page.locator("#note-ledger"), /the assistant\s*search snippet/);
  // Shown while another turn reads the note whole: the read appears without opening the tab again.
  mock.script.push({ calls: [["read_note", { note_id: cli(home, "note", "list").notes.find((n) => n.title === "Orchard").note_id }]] }, { text: "Read it." });
  await ask(page, "Read the orchard note");
  await turnDone(page);
  await expectText(page.locator("#note-ledger"), /the assistant\s*whole note/, "the open tab follows the reads");
  await page.click("#settings-button");
  await page.locator("#ledger-settings details summary", { hasText: "the assistant" }).click();
  await expectText(page.locator("#ledger-settings .ledger"), /search snippet of “Orchard”/);
  await expectText(page.locator("#ledger-settings .ledger"), /whole note of “Garden”/);
  await page.locator("#ledger-settings").scrollIntoViewIfNeeded();
  await page.screenshot({ path: `${SHOTS}/ledger-settings.png` });
  // The CLI lists the same reads.
  // (Reads of the same part within a moment share a row: which rows there are, not how many.)
  await eventually(() => [...new Set(cli(home, "ledger", "--client", "quire assistant").entries.map((e) => `${e.title}: ${e.part}`))].sort(), (rows) => assert.deepEqual(rows, ["Garden: whole note", "Orchard: search snippet", "Orchard: whole note"]));
});
