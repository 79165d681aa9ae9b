// External agents (ACP) in the sidebar: the test agent (tests/acp/test-agent.mjs, built on the official ACP and MCP
// SDKs) added with `quire agent add` is offered in the model picker; a turn on it shows its plan and tool calls as
// cards, its permission request as an approval card, its reply; its write waits in the Review inbox under its name;
// the chat is kept; Cancel stops a turn that works until told. `cargo xtask browser` installs the SDK
// (QUIRE_PLUGIN_RUNTIMES).
import assert from "node:assert/strict";
import { copyFileSync, existsSync, mkdirSync, renameSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { SHOTS, addNote, ask, browserSuite, cli, eventually, expectCount, expectHidden, expectText, expectVisible, turnDone } from "./support.mjs";

const root = resolve(fileURLToPath(new URL("../../../..", import.meta.url)));
const RUNTIMES = process.env.QUIRE_PLUGIN_RUNTIMES ?? join(root, "target/plugin-runtimes");
assert.ok(existsSync(join(RUNTIMES, "node_modules/@agentclientprotocol/sdk")), `the ACP SDK is missing in ${RUNTIMES}: cargo xtask browser installs it`);
// Copied where the SDKs are (a module finds its packages from its own folder), in one rename.
const AGENT = join(RUNTIMES, "acp-test-agent.mjs");
copyFileSync(join(root, "tests/acp/test-agent.mjs"), `${AGENT}.${process.pid}`);
renameSync(`${AGENT}.${process.pid}`, AGENT);

const { session } = await browserSuite();

/// A workspace with notes about tomatoes and the test agent added as `tester`.
function withAgent(home) {
  addNote(home, "Tomato plan", "tomatoes in May");
  addNote(home, "Balcony", "tomatoes on the balcony");
  cli(home, "agent", "add", "tester", "--", "node", AGENT);
  return {};
}

test("an agent runs a turn in the sidebar: its plan, its tool calls, an approval card, and its write staged for review", async (t) => {
  const { page, home } = await session(t, withAgent);
  await page.locator("#model optgroup[label=Agents] option", { hasText: "tester (agent)" }).waitFor({ state: "attached" });
  await page.selectOption("#model", "agent:tester");
  await ask(page, "Find notes about tomatoes");
  await expectText(page.locator(".plan-card"), /✓ Search the notes for tomatoes\s*→ Write a summary note/);
  await expectText(page.locator("#messages .tool-card").first(), /Search notes for tomatoes · done/);
  const approval = page.locator(".approval");
  await expectText(approval, /tester wants to run “Create note “Agent summary””/);
  await page.screenshot({ path: `${SHOTS}/agent-approval.png` });
  await approval.getByRole("button", { name: "Allow" }).click();
  await expectText(page.locator(".bubble.assistant").last(), "Found 2 notes about tomatoes and wrote a summary.");
  await turnDone(page);
  await page.screenshot({ path: `${SHOTS}/agent-turn.png` });
  // The write waits for review, under the agent's name; its reads are in the ledger.
  await eventually(() => cli(home, "review", "list"), (sets) => assert.match(JSON.stringify(sets), /tester \(ACP agent\)/));
  await eventually(() => cli(home, "ledger", "--client", "tester (ACP agent)").entries.length, (n) => assert.equal(n, 2));
  // The chat is kept: a second message goes to the same session.
  await expectText(page.locator("#chats option:checked"), /Find notes about tomatoes/);
  await ask(page, "Find notes about balcony");
  await page.locator(".approval").last().getByRole("button", { name: "Refuse" }).click();
  // It sees its own staged summary (which names the balcony note) beside the note: a staged client reads its changes.
  await expectText(page.locator(".bubble.assistant").last(), "Found 2 notes about balcony; I wrote nothing.");
  await turnDone(page);
});

test("Cancel stops an agent that works until told", async (t) => {
  const { page } = await session(t, withAgent);
  await page.locator("#model optgroup[label=Agents] option").waitFor({ state: "attached" });
  await page.selectOption("#model", "agent:tester");
  await ask(page, "Please wait for me");
  await expectText(page.locator(".bubble.assistant").last(), "Working");
  await expectVisible(page.locator("#cancel"));
  await page.click("#cancel");
  await expectHidden(page.locator("#cancel"));
  await expectText(page.locator("#messages"), /cancelled/i);
});

test("an agent added in a terminal while the page is open is in the picker when the person comes back to type", async (t) => {
  const { page, home } = await session(t, (home) => addNote(home, "Tomato plan", "tomatoes in May"));
  await page.locator("#model option").first().waitFor({ state: "attached" });
  await page.selectOption("#model", { index: 0 });
  const chosen = await eventually(() => page.locator("#model").inputValue(), (value) => assert.ok(value));
  cli(home, "agent", "add", "late", "--", "node", AGENT);
  await page.click("#message");
  await page.locator("#model optgroup[label=Agents] option", { hasText: "late (agent)" }).waitFor({ state: "attached" });
  // What the person had picked stays picked.
  await eventually(() => page.locator("#model").inputValue(), (value) => assert.equal(value, chosen));
  // Removed in the terminal: gone from the picker at the next look.
  cli(home, "agent", "remove", "late");
  await page.evaluate(() => document.activeElement.blur());
  await page.click("#message");
  await expectCount(page.locator("#model optgroup[label=Agents] option"), 0);
});

/// A mock of OpenAI's Responses API, the one Codex speaks: a search through quire's tools, then its answer.
async function responsesModel() {
  const { createServer } = await import("node:http");
  const server = createServer(async (req, res) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    const request = JSON.parse(body);
    const quire = (request.tools ?? []).find((t) => t.type === "namespace" && t.name.endsWith("quire"));
    const answered = (request.input ?? []).filter((i) => i.type === "function_call_output").length;
    res.writeHead(200, { "content-type": "text/event-stream" });
    const event = (type, data) => res.write(`event: ${type}\ndata: ${JSON.stringify({ ...data, type })}\n\n`);
    event("response.created", { response: { id: "r1" } });
    if (quire && answered === 0) {
      const item = { type: "function_call", id: "fc1", call_id: "c1", namespace: quire.name, name: "search_notes", arguments: JSON.stringify({ query: "tomatoes" }) };
      event("response.output_item.done", { output_index: 0, item });
    } else {
      const text = "Codex looked through your tomato notes.";
      event("response.output_text.delta", { output_index: 0, content_index: 0, item_id: "m1", delta: text });
      event("response.output_item.done", { output_index: 0, item: { type: "message", id: "m1", role: "assistant", content: [{ type: "output_text", text }] } });
    }
    event("response.completed", { response: { id: "r1", usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15 } } });
    res.end();
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return { base: `http://127.0.0.1:${server.address().port}/v1`, close: () => new Promise((r) => server.close(r)) };
}

test("Codex, through its ACP adapter, runs a turn in the sidebar with quire's tools", async (t) => {
  const model = await responsesModel();
  t.after(() => model.close());
  const { page, home } = await session(t, (home) => {
    addNote(home, "Tomato plan", "tomatoes in May");
    const codexHome = join(home.dir, "codex-home");
    mkdirSync(codexHome, { recursive: true });
    writeFileSync(
      join(codexHome, "config.toml"),
      `model = "gpt-5"\nmodel_provider = "mock"\n\n[model_providers.mock]\nname = "Mock"\nbase_url = "${model.base}"\nwire_api = "responses"\n`,
    );
    cli(home, "agent", "add", "codex", "--env", `CODEX_HOME=${codexHome}`, "--", join(RUNTIMES, "node_modules/.bin/codex-acp"));
    return {};
  });
  await page.locator("#model optgroup[label=Agents] option", { hasText: "codex (agent)" }).waitFor({ state: "attached" });
  await page.selectOption("#model", "agent:codex");
  await ask(page, "Find my tomato notes");
  await expectText(page.locator("#messages .tool-card").first(), /quire\/search_notes · done/);
  await expectText(page.locator(".bubble.assistant").last(), /Codex looked through your tomato notes\./);
  await turnDone(page);
  await page.screenshot({ path: `${SHOTS}/codex-turn.png` });
  await eventually(() => cli(home, "ledger", "--client", "codex (ACP agent)").entries.length, (n) => assert.ok(n > 0));
});

test("an agent added in Settings says it works when tested, is offered in the picker, and is removed there", async (t) => {
  const { page, home } = await session(t, (home) => addNote(home, "Tomato plan", "tomatoes in May"));
  await page.click("#settings-button");
  const box = page.locator("#agent-settings");
  await expectText(box, /No agent yet/);
  await page.fill("#agent-name", "helper");
  await page.fill("#agent-command", `node ${AGENT}`);
  await page.fill("#agent-env", "HELPER_TOKEN=s3cret");
  await page.click("#agent-settings button[type=submit]");
  const card = box.locator(".automation[data-agent=helper]");
  await expectText(card, /helper\s+node .*acp-test-agent\.mjs\s+\(all notebooks; writes staged for review; no files, no terminal\)/);
  // Its environment's names are shown, never their values.
  await expectText(card, /Its environment: HELPER_TOKEN/);
  await eventually(() => box.innerText(), (text) => assert.ok(!text.includes("s3cret"), text));
  await card.getByRole("button", { name: "Test" }).click();
  await expectText(card.locator(".agent-test"), /helper works: quire-test-agent 1\.0\.0 started a session/);
  await box.screenshot({ path: `${SHOTS}/agent-settings.png` });
  assert.deepEqual(cli(home, "agent", "list").map((a) => a.name), ["helper"]);
  // Added in a terminal while Settings is open: it appears there without a reload.
  cli(home, "agent", "add", "late", "--", "node", AGENT);
  await expectText(box.locator(".automation[data-agent=late]"), /late\s+node/);
  await page.click("#message");
  await page.locator("#model optgroup[label=Agents] option", { hasText: "helper (agent)" }).waitFor({ state: "attached" });
  await card.getByRole("button", { name: "Remove" }).click();
  await page.getByRole("button", { name: "Remove helper" }).click();
  await expectCount(box.locator(".automation[data-agent=helper]"), 0);
  assert.deepEqual(cli(home, "agent", "list").map((a) => a.name), ["late"]);
});
