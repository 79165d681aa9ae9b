// The Review inbox in a real browser (issue 35): an MCP client (the official Python SDK, over stdio, its writes staged
// with `quire mcp --review`) edits a note, makes one and deletes another; nothing changes until the user accepts.
// The page shows each change as a diff; one run of lines is accepted alone and merges onto the user's later edit,
// the run the user changed meanwhile is stale and rejected, the title is accepted and undone, the new note accepted
// whole, the deletion rejected.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { QUIRE, SHOTS, addNote, axeClean, browserSuite, cli, eventually, expectCount, expectHidden, serverNote } from "./support.mjs";

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
  await eventually(() => serverNote(page, seeded.plan), (note) => assert.equal(note.body, "one\ntwo\nthree\nfour\n", "nothing written yet"));
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
  await eventually(
    () => hunks.evaluateAll((list) => list.map((h) => h.className)),
    (classes) => assert.deepEqual(classes, ["review-hunk pending", "review-hunk stale", "review-hunk pending"]),
  );
  await eventually(() => hunks.nth(0).textContent(), (text) => assert.match(text, /− one\s*\+ ONE/));
  await expectCount(hunks.nth(1).getByRole("button", { name: "Accept" }), 0, "a stale change cannot be accepted");

  // The first run of lines alone: merged onto the user's edit.
  await hunks.nth(0).getByRole("button", { name: "Accept" }).click();
  await plan.locator(".review-hunk.accepted").waitFor();
  await eventually(() => serverNote(page, seeded.plan), (note) => assert.equal(note.body, "ONE\ntwo\nthree\nfour, or so\n"));
  // The stale one rejected; the title accepted, then undone from the message.
  await plan.locator(".review-hunk.stale").getByRole("button", { name: "Reject" }).click();
  await plan.locator(".review-hunk.rejected").waitFor();
  await plan.locator(".review-hunk.pending").getByRole("button", { name: "Accept" }).click();
  await page.locator("#review-undo").waitFor();
  await eventually(() => serverNote(page, seeded.plan), (note) => assert.equal(note.title, "Plan v2"));
  await page.locator("#review-undo").click();
  await page.locator("#status").filter({ hasText: "Undone" }).waitFor();
  await eventually(() => serverNote(page, seeded.plan), (note) => assert.equal(note.title, "Plan"));
  await page.locator("#review-decided").check();
  await set.locator(".review-hunk.undone").filter({ hasText: "Title" }).waitFor();
  await page.locator("#review-decided").uncheck();
  await set.waitFor();

  // The new note accepted whole; the deletion rejected.
  const fresh = set.locator(".review-item").filter({ hasText: "“Fresh” (new)" });
  // The pair says what it decides on (ux-2 #28): a new note is accepted or rejected as a note.
  await fresh.getByRole("button", { name: "Reject note" }).waitFor();
  await fresh.getByRole("button", { name: "Accept note" }).click();
  await fresh.locator(".review-hunk.accepted").waitFor();
  await eventually(() => cli(home, "note", "list").notes.find((n) => n.title === "Fresh"), (made) => assert.ok(made, "the new note exists"));
  const old = set.locator(`[data-item="note:${seeded.old}"]`);
  await old.getByRole("button", { name: "Reject", exact: true }).click();
  await old.locator(".review-hunk.rejected").waitFor();
  await eventually(() => serverNote(page, seeded.old), (note) => assert.equal(note.in_trash, false));
  await set.getByText("0 waiting").waitFor();
  await page.screenshot({ path: join(SHOTS, "review-decided.png"), fullPage: true });
  // The client hears the outcome through its review resource.
  const [review] = client(home, [{ read: "quire://review/1" }]);
  const states = JSON.parse(review.text).items.flatMap((i) => i.hunks.map((h) => h.state));
  assert.ok(!states.includes("pending") && states.includes("accepted") && states.includes("rejected"), review.text);
});

/// `quire mcp --http --review` for the home, and a small MCP client of it that declares MCP Apps (fetch, JSON-RPC).
async function mcpOverHttp(home, t) {
  const { spawn } = await import("node:child_process");
  const child = spawn(QUIRE, ["mcp", "--review", "--http", "127.0.0.1:0"], { env: home.env, stdio: ["ignore", "ignore", "pipe"] });
  t.after(() => child.kill());
  const url = await new Promise((resolve, reject) => {
    let err = "";
    child.stderr.on("data", (d) => {
      err += d;
      // The whole address: a chunk of output may end in the middle of it.
      const found = /quire MCP server on (http:\/\/\S+) /.exec(err);
      if (found) resolve(found[1]);
    });
    child.on("exit", (code) => reject(new Error(`quire mcp exited with ${code}: ${err}`)));
  });
  const token = execFileSync(QUIRE, ["mcp", "token"], { env: home.env, encoding: "utf8" }).trim();
  let session = null;
  let next = 1;
  async function send(method, params, notification = false) {
    const message = notification ? { jsonrpc: "2.0", method, params } : { jsonrpc: "2.0", id: next++, method, params };
    const headers = { authorization: `Bearer ${token}`, accept: "application/json, text/event-stream", "content-type": "application/json" };
    if (session) headers["mcp-session-id"] = session;
    const response = await fetch(url, { method: "POST", headers, body: JSON.stringify(message) });
    session = response.headers.get("mcp-session-id") ?? session;
    if (notification) return null;
    const text = await response.text();
    const json = response.headers.get("content-type")?.includes("event-stream")
      ? text
          .split("\n")
          .filter((l) => l.startsWith("data:") && l.slice(5).trim())
          .map((l) => JSON.parse(l.slice(5)))
          .find((m) => m.id === message.id)
      : JSON.parse(text);
    if (json.error) throw new Error(json.error.message);
    return json.result;
  }
  await send("initialize", {
    protocolVersion: "2025-11-25",
    capabilities: { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } } },
    clientInfo: { name: "inline host", version: "1" },
  });
  await send("notifications/initialized", {}, true);
  return send;
}

test("a host that renders MCP Apps shows the staged change inline, and its Accept goes through quire's review", async (t) => {
  const { page, home, seeded } = await session(t, (home) => {
    // Inline review is for hosts one trusts to keep app-only tools from the model: off unless asked for.
    mkdirSync(join(home.env.XDG_CONFIG_HOME, "quire"), { recursive: true });
    writeFileSync(join(home.env.XDG_CONFIG_HOME, "quire/config.toml"), "[mcp]\ninline_review = true\n");
    return { plan: addNote(home, "Plan", "one\n").note_id };
  });
  const mcp = await mcpOverHttp(home, t);
  const { tools } = await mcp("tools/list", {});
  const update = tools.find((tool) => tool.name === "update_note");
  assert.equal(update._meta.ui.resourceUri, "ui://quire/review");
  const staged = await mcp("tools/call", { name: "update_note", arguments: { note_id: seeded.plan, body: "one\ntwo\n" } });
  const view = (await mcp("resources/read", { uri: "ui://quire/review" })).contents[0];
  assert.equal(view.mimeType, "text/html;profile=mcp-app");

  // The host: the view in a sandboxed frame, its messages answered here (initialize) or sent on to quire (tools/call).
  const host = await page.context().newPage();
  await host.exposeFunction("toHost", async (message) => {
    const reply = (result) => host.evaluate((m) => document.querySelector("iframe").contentWindow.postMessage(m, "*"), result);
    if (message.method === "ui/initialize") {
      await reply({ jsonrpc: "2.0", id: message.id, result: { protocolVersion: "2026-01-26", hostInfo: { name: "test host", version: "1" }, hostCapabilities: {} } });
    } else if (message.method === "ui/notifications/initialized") {
      await reply({ jsonrpc: "2.0", method: "ui/notifications/tool-result", params: staged });
    } else if (message.method === "tools/call") {
      await reply({ jsonrpc: "2.0", id: message.id, result: await mcp("tools/call", message.params) });
    }
  });
  await host.setContent(`<iframe sandbox="allow-scripts" style="width:700px;height:500px"></iframe>
    <script>window.addEventListener("message", (e) => window.toHost(e.data));</script>`);
  await host.evaluate((html) => { document.querySelector("iframe").srcdoc = html; }, view.text);
  const frame = host.frameLocator("iframe");
  await frame.getByText("Review 1: 1 change waiting").waitFor();
  await host.screenshot({ path: join(SHOTS, "review-inline.png") });
  await eventually(() => frame.locator("pre").first().textContent(), (text) => assert.match(text, /\+ two/));
  await frame.getByRole("button", { name: "Accept", exact: true }).click();
  await frame.getByText("Accepted 1 change(s).").waitFor();
  await eventually(() => serverNote(page, seeded.plan), (note) => assert.equal(note.body, "one\ntwo\n"));
  await host.close();
});

test("a staged write, a decision and an undo made elsewhere reach the open page without a reload", { skip: !python && "QUIRE_PLUGIN_RUNTIMES is not set" }, async (t) => {
  // Issue 44: the page learns of these from the server's news (no poll of its own). An MCP client stages a write:
  // the Review button appears with its count; a second write joins the open Review screen; the CLI accepts the set,
  // then undoes it.
  const { page, home, seeded } = await session(t, (home) => ({ plan: addNote(home, "Plan", "one\ntwo\n").note_id }));
  await expectHidden(page.locator("#review-button"));
  client(home, [{ call: "update_note", args: { note_id: seeded.plan, body: "ONE\ntwo\n" } }]);
  await page.locator("#review-count").filter({ hasText: "1" }).waitFor();
  await page.locator("#review-button").click();
  const set = page.locator('[data-review="1"]');
  await expectCount(set.locator(".review-hunk.pending"), 1);
  client(home, [{ call: "update_note", args: { note_id: seeded.plan, body: "ONE\ntwo\nthree\n" } }]);
  await expectCount(set.locator(".review-hunk.pending"), 2, "the open screen shows the write staged meanwhile");

  const accepted = cli(home, "review", "accept", "1");
  // The set on screen stays, showing what was decided elsewhere.
  await expectCount(set.locator(".review-hunk.accepted"), 2);
  await set.getByText("0 waiting").waitFor();
  await eventually(() => page.locator("#review-count").textContent(), (text) => assert.equal(text, ""));

  // Recent changes, open, shows the undo made in the terminal.
  await page.locator("#recent-button").click();
  const recent = page.locator("#recent");
  const rows = recent.locator(".change-sets > li");
  let before = 0;
  await eventually(() => rows.count(), (count) => {
    assert.ok(count > 0, "the list is drawn");
    before = count;
  });
  execFileSync(QUIRE, ["undo", accepted.change_set_id], { env: home.env });
  await eventually(() => rows.count(), (count) => assert.ok(count > before, `${count} rows, ${before} before`));
  await eventually(() => serverNote(page, seeded.plan), (note) => assert.equal(note.body, "one\ntwo\n"));
});
