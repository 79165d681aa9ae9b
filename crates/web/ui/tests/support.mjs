// What the browser tests stand on: a mock OpenAI-compatible model on loopback that streams scripted replies and
// tool calls over the real wire protocol (server-sent events), the real `quire` binary serving a temporary
// workspace, and Debian's Chromium driven by playwright-core.
import assert from "node:assert/strict";
import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after } from "node:test";
import { fileURLToPath } from "node:url";
import { inspect } from "node:util";
import { chromium } from "playwright-core";

const root = resolve(fileURLToPath(new URL("../../../..", import.meta.url)));
export const QUIRE = process.env.QUIRE_BIN ?? join(root, "target/debug/quire");
export const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium";
export const SHOTS = process.env.QUIRE_SCREENSHOTS ?? join(root, "target/screenshots");

/// One streamed answer of the mock model.
///   { text: "...", pieces: 4, delayMs: 50 }      a reply, in pieces
///   { calls: [["name", {args}], ...], delayMs }    tool calls, after a pause
///   { hang: true }                                 never answers (until the request is closed)
export async function startMockModel() {
  const script = [];
  const requests = [];
  const open = new Set();
  const server = createServer(async (req, res) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    if (req.method !== "POST" || !req.url.endsWith("/chat/completions")) {
      res.writeHead(404).end();
      return;
    }
    requests.push(JSON.parse(body));
    const step = script.shift() ?? { text: "(the script has no more steps)" };
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    open.add(res);
    res.on("close", () => open.delete(res));
    const send = (value) => res.write(`data: ${JSON.stringify(value)}\n\n`);
    // As OpenAI reports it: the prompt's tokens include those its cache served.
    const usage = { prompt_tokens: 120, completion_tokens: 30, total_tokens: 150, prompt_tokens_details: { cached_tokens: 100 } };
    if (step.hang) return;
    if (step.calls && step.delayMs) await new Promise((r) => setTimeout(r, step.delayMs));
    if (step.calls) {
      const calls = step.calls.map(([name, args], index) => ({
        index,
        id: `call_${requests.length}_${index}`,
        type: "function",
        function: { name, arguments: JSON.stringify(args) },
      }));
      send({ choices: [{ index: 0, delta: { tool_calls: calls }, finish_reason: "tool_calls" }] });
    } else {
      const pieces = step.pieces ?? 1;
      const size = Math.ceil(step.text.length / pieces);
      for (let i = 0; i < step.text.length; i += size) {
        send({ choices: [{ index: 0, delta: { content: step.text.slice(i, i + size) }, finish_reason: null }] });
        if (step.delayMs) await new Promise((r) => setTimeout(r, step.delayMs));
      }
      send({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }] });
    }
    send({ choices: [], usage });
    res.end("data: [DONE]\n\n");
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address();
  return {
    base: `http://127.0.0.1:${port}/v1`,
    script,
    requests,
    /// Everything any request sent to the model, as one string.
    seen: () => JSON.stringify(requests),
    /// How many requests are still being answered (a hanging step stays open until the caller goes away).
    openRequests: () => open.size,
    close: () =>
      new Promise((r) => {
        for (const res of open) res.destroy();
        server.close(r);
      }),
  };
}

/// A temporary home and workspace for one `quire`.
export function tempHome() {
  const dir = mkdtempSync(join(tmpdir(), "quire-browser-"));
  mkdirSync(join(dir, "home/.config"), { recursive: true });
  const env = {
    ...process.env,
    HOME: join(dir, "home"),
    XDG_CONFIG_HOME: join(dir, "home/.config"),
    XDG_DATA_HOME: join(dir, "home/.local/share"),
    QUIRE_WORKSPACE: join(dir, "workspace.quire"),
  };
  for (const name of ["QUIRE_MODEL", "QUIRE_BASE_URL", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "QUIRE_LOG"]) delete env[name];
  return { dir, env, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/// Runs the CLI on that workspace and returns its JSON output.
export function cli(home, ...args) {
  return JSON.parse(execFileSync(QUIRE, ["--json", ...args], { env: home.env, encoding: "utf8" }));
}

/// Starts `quire serve` on a free port; resolves with the address it printed (which opens a session).
export async function startQuire(home, extraEnv = {}) {
  const child = spawn(QUIRE, ["serve", "--addr", "127.0.0.1:0"], {
    env: { ...home.env, ...extraEnv },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  const url = await new Promise((resolveUrl, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`quire serve printed no address: ${stderr}`)), 30_000);
    child.stdout.on("data", (d) => {
      out += d;
      const found = /http:\/\/\S+\?token=\S+/.exec(out);
      if (found) {
        clearTimeout(timer);
        resolveUrl(found[0]);
      }
    });
    child.on("exit", (code) => reject(new Error(`quire serve exited with ${code}: ${stderr}`)));
  });
  const base = url.slice(0, url.indexOf("/?"));
  return {
    url,
    base,
    stderr: () => stderr,
    stop: () =>
      new Promise((r) => {
        if (child.exitCode !== null) return r();
        child.on("exit", r);
        child.kill("SIGINT");
      }),
  };
}

export async function launch() {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

/// A page with a session: it opened the address `quire serve` printed. Page errors and failed requests are kept.
export async function openApp(browser, server) {
  const context = await browser.newContext({ viewport: { width: 1500, height: 900 } });
  const page = await context.newPage();
  const problems = [];
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("console", (m) => {
    if (m.type() === "error") problems.push(`console: ${m.text()}`);
  });
  await page.goto(server.url);
  await page.waitForSelector("#tree .tree-item");
  return { context, page, problems };
}

/// A fresh workspace (seeded by `seed` through the CLI) served with the mock model, and a page with a session. Page
/// errors, CSP violations and failed requests fail the test, but for the responses a test provokes on purpose
/// (`expect(pattern)`: a 409 for a stale save).
export async function openSession(browser, mock, t, seed = () => ({}), extraEnv = {}) {
  mock.script.length = 0;
  mock.requests.length = 0;
  const home = tempHome();
  const seeded = seed(home);
  const server = await startQuire(home, { QUIRE_MODEL: "openai-compatible:mock", QUIRE_BASE_URL: mock.base, ...extraEnv });
  const app = await openApp(browser, server);
  const expected = [];
  t.after(async () => {
    await app.context.close();
    await server.stop();
    home.remove();
    const problems = app.problems.filter((p) => !expected.some((e) => e.test(p)));
    assert.deepEqual(problems, [], "no page errors, no CSP violations, no failed requests");
  });
  return { ...app, server, home, seeded, expect: (pattern) => expected.push(pattern) };
}

/// What a test file stands on: one Chromium and one mock model, both closed after the file's tests, and `session(t,
/// seed, extraEnv)`, a fresh workspace and page for one test (`openSession` with them).
export async function browserSuite() {
  const browser = await launch();
  const mock = await startMockModel();
  mkdirSync(SHOTS, { recursive: true });
  after(async () => {
    await browser.close();
    await mock.close();
  });
  return { browser, mock, session: (t, seed, extraEnv) => openSession(browser, mock, t, seed, extraEnv) };
}

/// Waits for what an action leads to: calls `read()` (the page's state, or what a page action changes a moment later
/// on the server or on disk) and then `check(value)` (which asserts with node:assert), every `interval` ms until the
/// check passes, and resolves with the value that passed. A single read straight after the action can come before the
/// page got there (in CI the "by meaning" label's title was read before the page had set it). A read that throws (its
/// element is not there yet) counts as a failed check. After `timeout` ms it fails with the last error, which then
/// also says the last value read. No test reads the page once and asserts on it: it waits, with this or the `expect…`
/// helpers below (or `locator.waitFor`, `page.waitForFunction`).
export async function eventually(read, check, { timeout = 15_000, interval = 50, message } = {}) {
  const deadline = Date.now() + timeout;
  let last = "(nothing was read)";
  for (;;) {
    let error;
    try {
      const value = await read();
      last = inspect(value, { depth: 4, maxStringLength: 2_000, breakLength: 120 });
      await check(value);
      return value;
    } catch (e) {
      error = e;
    }
    if (Date.now() >= deadline) throw explained(error, message ? `${message}: ` : "", `\nlast value read: ${last}`);
    await new Promise((r) => setTimeout(r, interval));
  }
}

/// The error `eventually` gave up on, its message (and so its stack's first line) with `before` and `after` added.
function explained(error, before, after) {
  if (!(error instanceof Error)) return new Error(`${before}${String(error)}${after}`);
  const was = error.message;
  error.message = `${before}${was}${after}`;
  if (was && typeof error.stack === "string") error.stack = error.stack.replace(was, () => error.message);
  return error;
}

/// How long one read in the `expect…` helpers below waits for its element before it counts as a failed check. Each of
/// them takes, after what it checks, the assertion's message and `eventually`'s options (a short `timeout` where a long
/// wait would let a message that goes away by itself pass the check).
const READ = { timeout: 2_000 };

/// `actual` is `expected`: equal to a string or a number, matching a RegExp.
function same(actual, expected, message) {
  if (expected instanceof RegExp) assert.match(actual, expected, message);
  else assert.equal(actual, expected, message);
}

/// Waits until the locator's text (`innerText`) is `expected`: a string exactly, or a RegExp it matches.
export const expectText = (locator, expected, message, options) =>
  eventually(() => locator.innerText(READ), (text) => same(text, expected, message), options);

/// Waits until the locator's attribute `name` is `expected` (a string, a RegExp, or null for no such attribute).
export const expectAttribute = (locator, name, expected, message, options) =>
  eventually(() => locator.getAttribute(name, READ), (value) => same(value, expected, message), options);

/// Waits until an input, a textarea or a select holds `expected` (a string, or a RegExp).
export const expectValue = (locator, expected, message, options) =>
  eventually(() => locator.inputValue(READ), (value) => same(value, expected, message), options);

/// Waits until the locator matches `n` elements.
export const expectCount = (locator, n, message, options) =>
  eventually(() => locator.count(), (count) => assert.equal(count, n, message), options);

/// Waits until the element shows. (`isVisible` does not wait; the wait is `eventually`'s.)
export const expectVisible = (locator, message, options) =>
  eventually(() => locator.isVisible(), (visible) => assert.equal(visible, true, message ?? `${locator} shows`), options);

/// Waits until the element is hidden or gone. A check that something stays hidden: put it after a wait for what
/// shows the page has settled, or it passes before the page had a chance to show it.
export const expectHidden = (locator, message, options) =>
  eventually(() => locator.isVisible(), (visible) => assert.equal(visible, false, message ?? `${locator} is hidden`), options);

/// Waits until the editor's text is `expected` (a string exactly, or a RegExp it matches).
export const expectEditorText = (page, expected, message, options) =>
  eventually(() => editorText(page), (text) => same(text, expected, message), options);

/// Sends a message to the assistant.
export async function ask(page, message) {
  await page.fill("#message", message);
  await page.click("#send");
}

/// Waits for the assistant's turn to end (Cancel hidden, Send usable again).
export const turnDone = (page) => page.waitForFunction(() => document.querySelector("#cancel").hidden && !document.querySelector("#send").disabled);

/// The note as the server holds it, fetched with the page's session (its cookie and its secret).
export const serverNote = (page, id) =>
  page.evaluate(async (id) => (await fetch(`/api/notes/${id}`, { headers: { "x-quire-session": localStorage.getItem("quire-session") } })).json(), id);

/// Adds a note through the CLI; its `--json` output.
export const addNote = (home, title, body, ...more) => cli(home, "note", "add", "--title", title, "--body", body, ...more);

/// The editor's text as the page holds it.
export const editorText = (page) => page.evaluate(() => document.querySelector("#editor .cm-content").cmTile.root.view.state.doc.toString());

/// Opens a note from the list and waits for the editor to hold it.
export async function openNote(page, title) {
  await page.locator("#notes .note-item", { hasText: title }).first().click();
  await page.waitForFunction((title) => document.querySelector("#title")?.value === title, title);
}

/// Runs axe-core on the page and fails on a serious or critical problem.
export async function axeClean(page, screen) {
  if (!(await page.evaluate(() => !!window.axe))) {
    await page.evaluate(readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8"));
  }
  const result = await page.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ["violations"] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(" ")) }));
  });
  const serious = result.filter((v) => v.impact === "serious" || v.impact === "critical");
  assert.deepEqual(serious, [], `${screen}: ${JSON.stringify(serious)}`);
}
