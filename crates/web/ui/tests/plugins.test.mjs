// Plugins in the web app: the Python probe plugin (official MCP SDK) and the reference "everything" server as the
// assistant's tools, driven by the mock model. Results with an image and an MCP Apps view (framed in a sandbox that
// reaches neither the page nor its cookies), a destructive call approved and refused, a crash and a hang that end as
// tool errors and a plugin that comes back, an answer of 10 MB cut at the cap, the Settings screen's list, add and
// remove, a chat that leaves a plugin out, and a plugin's progress and log lines under its card. `cargo xtask browser` installs the runtimes (QUIRE_PLUGIN_RUNTIMES).
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { QUIRE, SHOTS, ask, browserSuite, eventually, expectAttribute, turnDone } from "./support.mjs";

const root = resolve(fileURLToPath(new URL("../../../..", import.meta.url)));
const RUNTIMES = process.env.QUIRE_PLUGIN_RUNTIMES ?? join(root, "target/plugin-runtimes");
const PYTHON = join(RUNTIMES, "bin/python");
const EVERYTHING = join(RUNTIMES, "node_modules/.bin/mcp-server-everything");
const PROBE = join(root, "tests/plugins/probe_plugin.py");
assert.ok(existsSync(PYTHON) && existsSync(EVERYTHING), `the plugin runtimes are missing in ${RUNTIMES}: cargo xtask browser installs them`);

const { mock, session } = await browserSuite();

/// A workspace with the probe plugin (calls cut at 3 s).
function withProbe(home) {
  execFileSync(QUIRE, ["plugin", "add", "probe", "--timeout", "3s", "--", PYTHON, PROBE], { env: home.env });
  return {};
}

/// A session whose probe plugin is up (quire serve starts plugins in the background; the sidebar lists them once they
/// are).
async function probeSession(t) {
  const opened = await session(t, withProbe);
  await opened.page.locator("#plugin-toggles input[data-plugin=probe]").waitFor({ state: "attached" });
  return opened;
}

/// The card of the n-th tool call of the conversation.
const card = (page, n) => page.locator("#messages .tool-card").nth(n);

/// Waits until the n-th tool card's text (all of it, folded parts too) matches `pattern`.
const cardSays = (page, n, pattern) => eventually(() => card(page, n).textContent(), (text) => assert.match(text, pattern));

test("a plugin's image and its MCP Apps view show in the sidebar, the view sandboxed", async (t) => {
  const { page } = await probeSession(t);
  mock.script.push(
    { calls: [["find_tools", { query: "dashboard chart" }]] },
    { calls: [["probe__dashboard", { topic: "rain" }], ["probe__chart", {}]] },
    { text: "Here is the dashboard and the chart." },
  );
  await ask(page, "Show me the rain dashboard");
  await turnDone(page);
  // The first request offers find_tools and what fits beside the built-in tools, not the dashboard; after it, the
  // tools it found.
  assert.ok(mock.requests[0].tools.some((tool) => tool.function.name === "find_tools"));
  assert.ok(!mock.requests[0].tools.some((tool) => tool.function.name === "probe__dashboard"));
  assert.ok(mock.requests[1].tools.some((tool) => tool.function.name === "probe__dashboard"));
  const image = page.locator("#messages .tool-media img.tool-image");
  await image.waitFor();
  await eventually(() => image.evaluate((img) => img.complete && img.naturalWidth), (width) => assert.equal(width, 48));
  const frame = page.frameLocator("#messages iframe.app-view");
  await frame.locator("#result", { hasText: "result: dashboard for rain" }).waitFor();
  // The view asked for 160 px and got them; it reaches neither this page nor its cookies.
  await page.waitForFunction(() => document.querySelector("iframe.app-view").style.height === "160px");
  await expectAttribute(frame.locator("#title"), "data-reach", "cookie:blocked;parent:blocked");
  await expectAttribute(page.locator("iframe.app-view"), "sandbox", "allow-scripts");
  // The view cannot call the API: it has no session secret, and its policy allows no connection at all.
  const address = await eventually(() => page.locator("iframe.app-view").getAttribute("src"), (src) => assert.ok(src, "the view has an address"));
  const policy = await page.evaluate(async (address) => (await fetch(address)).headers.get("content-security-policy"), address);
  assert.match(policy, /sandbox allow-scripts/);
  assert.match(policy, /connect-src 'none'/);
  await page.locator("#sidebar").screenshot({ path: join(SHOTS, "plugin-results.png") });
});

test("a destructive plugin call waits for the user: refused, then allowed", async (t) => {
  const { page } = await probeSession(t);
  for (const allow of [false, true]) {
    mock.script.push(
      { calls: [["find_tools", { query: "forget everything" }]] },
      { calls: [["probe__forget_everything", { reason: "spring" }]] },
      { text: allow ? "Forgotten." : "I did not." },
    );
    await ask(page, "Forget everything");
    const approval = page.locator("#messages .approval").last();
    await approval.waitFor();
    await approval.getByRole("button", { name: allow ? "Allow" : "Refuse" }).click();
    await turnDone(page);
    const told = JSON.stringify(mock.requests.at(-1).messages.at(-1));
    if (allow) assert.match(told, /forgot everything because spring/);
    else assert.match(told, /declined/);
  }
});

test("a crash and a hang are tool errors, and the plugin answers again", async (t) => {
  const { page } = await probeSession(t);
  mock.script.push(
    { calls: [["find_tools", { query: "crash hang shout" }]] },
    { calls: [["probe__crash", {}]] },
    { calls: [["probe__hang", { seconds: 60 }]] },
    { calls: [["probe__shout", { text: "still here" }]] },
    { text: "It came back." },
  );
  await ask(page, "Break the plugin");
  await turnDone(page);
  await assert.doesNotReject(card(page, 1).locator(".tool-state", { hasText: "failed" }).waitFor());
  await cardSays(page, 1, /stopped while running crash/);
  await cardSays(page, 2, /did not finish hang within 3 s/);
  await cardSays(page, 3, /STILL HERE/);
});

test("what a plugin reports while it runs shows under its card", async (t) => {
  // Issue 44: progress and log messages, which an MCP client gets as notifications, are the sidebar's too.
  const { page } = await probeSession(t);
  mock.script.push({ calls: [["find_tools", { query: "count" }]] }, { calls: [["probe__count_to", { n: 4 }]] }, { text: "Counted." });
  await ask(page, "Count to four");
  await turnDone(page);
  const counted = card(page, 1);
  await expectAttribute(counted.locator(".tool-progress progress"), "max", "4");
  await eventually(() => counted.locator(".tool-progress").textContent(), (text) => assert.match(text, /step 4 \(4 of 4\)/));
  await eventually(() => counted.locator(".tool-log li").allTextContents(), (lines) => assert.deepEqual(lines, ["counting to 4", "done counting"]));
  await expectAttribute(counted.locator(".tool-log li").nth(1), "class", "log-warning");
  await cardSays(page, 1, /counted to 4/);
  await page.screenshot({ path: join(SHOTS, "plugin-progress-folded.png") });
  await counted.locator("summary").click();
  await counted.locator("pre").first().waitFor();
  await page.screenshot({ path: join(SHOTS, "plugin-progress.png") });
});

test("a plugin's question is a form under its card, and the answer reaches the plugin", async (t) => {
  // Issue 44: a plugin's elicitation becomes a sidebar event, as approval is; the call waits for the person.
  const { page } = await probeSession(t);
  mock.script.push({ calls: [["find_tools", { query: "city" }]] }, { calls: [["probe__ask_city", {}]] }, { text: "Asked." });
  await ask(page, "Where should the parcel go?");
  const form = card(page, 1).locator("form.question");
  await form.locator(".question-message", { hasText: "Which city should the parcel go to?" }).waitFor();
  await form.getByLabel("city").fill("Lyon");
  await form.getByLabel("express").check();
  await page.screenshot({ path: join(SHOTS, "plugin-question.png") });
  await form.getByRole("button", { name: "Send" }).click();
  await turnDone(page);
  await cardSays(page, 1, /sending to Lyon by express/);
  await form.getByText("Sent.").waitFor();
  // Declined: the plugin hears it and goes on.
  mock.script.push({ calls: [["find_tools", { query: "city" }]] }, { calls: [["probe__ask_city", {}]] }, { text: "Declined." });
  await ask(page, "Ask again");
  const again = card(page, 3).locator("form.question");
  await again.getByRole("button", { name: "Decline" }).click();
  await turnDone(page);
  await cardSays(page, 3, /the person chose to decline/);
});

test("an answer of 10 MB reaches the sidebar cut at the cap", async (t) => {
  const { page } = await probeSession(t);
  mock.script.push({ calls: [["find_tools", { query: "huge" }]] }, { calls: [["probe__huge", { megabytes: 10 }]] }, { text: "Long." });
  await ask(page, "Say a lot");
  await turnDone(page);
  await cardSays(page, 1, /over the 1048576 bytes quire passes on/);
  const sent = JSON.stringify(mock.requests.at(-1)).length;
  assert.ok(sent < 3_000_000, `the model was sent ${sent} bytes`);
});

test("Settings lists, adds and removes plugins, and a chat can leave one out", async (t) => {
  const { page } = await probeSession(t);
  await page.click("#settings-button");
  const probe = page.locator("#plugin-settings .plugin[data-plugin=probe]");
  await probe.locator(".plugin-state", { hasText: "running" }).waitFor();
  await probe.locator("summary", { hasText: "15 tools" }).click();
  await eventually(() => probe.textContent(), (text) => assert.match(text, /probe__forget_everything.*removes or overwrites.*asks you first/s));
  await eventually(() => probe.locator(".plugin-reach").textContent(), (text) => assert.match(text, /and for AI clients connected to quire mcp/));
  await page.fill("#plugin-name", "everything");
  await page.fill("#plugin-command", EVERYTHING);
  // Kept to the sidebar: quire mcp's clients do not get it, and its card says so.
  await page.check("#plugin-sidebar-only");
  await page.click("#plugin-settings button[type=submit]");
  const everything = page.locator("#plugin-settings .plugin[data-plugin=everything]");
  await everything.locator(".plugin-state", { hasText: "running" }).waitFor();
  await eventually(() => everything.locator(".plugin-reach").textContent(), (text) => assert.match(text, /for this assistant only/));
  await page.locator("#plugin-settings").screenshot({ path: join(SHOTS, "plugin-settings.png") });
  // It answers at once, from the page's chat.
  mock.script.push(
    { calls: [["find_tools", { query: "tiny image" }]] },
    { calls: [["everything__get-tiny-image", {}]] },
    { text: "A tiny image." },
  );
  await ask(page, "A tiny image please");
  await turnDone(page);
  await page.locator("#messages img.tool-image").waitFor();
  // This chat leaves the probe out: its tools are not offered any more (nor find_tools for them).
  await page.locator("#plugin-toggles summary").click();
  await page.locator("#plugin-toggles input[data-plugin=probe]").uncheck();
  await page.locator("#plugin-toggles input[data-plugin=everything]").uncheck();
  mock.script.push({ text: "No plugins." });
  await ask(page, "Anything?");
  await turnDone(page);
  // (find_tools may stay, for quire's own query and task tools, but it names no plugin.)
  const last = mock.requests.at(-1).tools;
  assert.ok(!last.some((tool) => tool.function.name.includes("__")));
  const find = last.find((tool) => tool.function.name === "find_tools");
  assert.ok(!find || !/probe|everything/.test(find.function.description), find?.function.description);
  // Removed from the page: gone from the list and from config.toml.
  // Asked in the page, as every other question (ux-2 #25): a browser dialog here would fail the test.
  page.once("dialog", (dialog) => {
    void dialog.dismiss();
    assert.fail(`a browser dialog asked: ${dialog.message()}`);
  });
  await everything.getByRole("button", { name: "Remove everything" }).click();
  await page.locator("dialog.app-dialog").getByRole("button", { name: "Remove everything" }).click();
  await everything.waitFor({ state: "detached" });
});

test("a plugin added and removed in a terminal reaches the running server and the open Settings", async (t) => {
  // ux-2 #4: `quire plugin add` while `quire serve` ran gave a plugin the server never started, and Settings said
  // there were none.
  const { page, home } = await probeSession(t);
  await page.click("#settings-button");
  await page.locator("#plugin-settings .plugin[data-plugin=probe] .plugin-state", { hasText: "running" }).waitFor();
  execFileSync(QUIRE, ["plugin", "add", "everything", "--", EVERYTHING], { env: home.env });
  const everything = page.locator("#plugin-settings .plugin[data-plugin=everything]");
  await everything.locator(".plugin-state", { hasText: "running" }).waitFor({ timeout: 20_000 });
  // The sidebar offers it, and the assistant calls it.
  await page.locator("#plugin-toggles input[data-plugin=everything]").waitFor({ state: "attached", timeout: 20_000 });
  mock.script.push(
    { calls: [["find_tools", { query: "tiny image" }]] },
    { calls: [["everything__get-tiny-image", {}]] },
    { text: "A tiny image." },
  );
  await ask(page, "A tiny image please");
  await turnDone(page);
  await page.locator("#messages img.tool-image").waitFor();
  execFileSync(QUIRE, ["plugin", "remove", "everything"], { env: home.env });
  await everything.waitFor({ state: "detached", timeout: 20_000 });
});
