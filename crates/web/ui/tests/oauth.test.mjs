// Hosted assistants over OAuth (issue 35), end to end: `quire mcp --http --public-url`, the official Python MCP SDK's
// OAuth client provider (tests/review/oauth_client.py) discovering, registering and asking for consent, and a
// headless Chromium giving it on quire's consent page (signed in with quire's key, one notebook, review on). The
// client then works within that grant; `quire mcp token list` shows the grant, a second run needs no sign-in, and
// after `quire mcp token revoke` the client is refused.
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { createServer } from "node:net";
import { join } from "node:path";
import { after, test } from "node:test";
import { QUIRE, SHOTS, addNote, cli, eventually, launch, tempHome } from "./support.mjs";

const runtimes = process.env.QUIRE_PLUGIN_RUNTIMES;
const python = runtimes ? join(runtimes, "bin/python") : null;
const script = join(import.meta.dirname, "../../../../tests/review/oauth_client.py");

const freePort = () =>
  new Promise((resolve) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });

/// Runs the OAuth client; `signIn(url)` answers its authorization request with the URL the browser came back to.
async function runClient(home, url, store, steps, signIn, env = {}) {
  const child = spawn(python, [script, "--url", url, "--store", store, "--steps", JSON.stringify(steps)], {
    env: { ...home.env, ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  const answers = [];
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  let buffered = "";
  child.stdout.on("data", async (d) => {
    buffered += d;
    let newline;
    while ((newline = buffered.indexOf("\n")) >= 0) {
      const line = JSON.parse(buffered.slice(0, newline));
      buffered = buffered.slice(newline + 1);
      if (line.authorize) child.stdin.write(`${await signIn(line.authorize)}\n`);
      else answers.push(line);
    }
  });
  const code = await new Promise((resolve) => child.on("exit", resolve));
  return { code, answers, stderr };
}

test("an assistant signs in with OAuth, consent given in the browser, works within its grant, and is revoked", { skip: !python && "QUIRE_PLUGIN_RUNTIMES is not set" }, async (t) => {
  const home = tempHome();
  t.after(() => home.remove());
  cli(home, "notebook", "add", "Work");
  const homeNotebook = cli(home, "notebook", "add", "Home");
  const plan = addNote(home, "Plan", "draft\n", "--notebook", "Work").note_id;
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const server = spawn(QUIRE, ["mcp", "--http", `127.0.0.1:${port}`, "--public-url", base], { env: home.env, stdio: ["ignore", "ignore", "pipe"] });
  t.after(() => server.kill());
  await new Promise((resolve, reject) => {
    let err = "";
    server.stderr.on("data", (d) => {
      err += d;
      if (err.includes("Hosted assistants:")) resolve();
    });
    server.on("exit", (code) => reject(new Error(`quire mcp exited with ${code}: ${err}`)));
  });
  const key = execFileSync(QUIRE, ["mcp", "token"], { env: home.env, encoding: "utf8" }).trim();

  const browser = await launch();
  after(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 900, height: 900 } });
  const signIn = async (authorize) => {
    let back = null;
    await page.route("http://127.0.0.1:53682/**", (route) => {
      back = route.request().url();
      return route.fulfill({ body: "Signed in: you can close this window." });
    });
    await page.goto(authorize);
    // Nothing of the workspace before signing in with quire's key.
    await page.getByRole("heading", { name: "Sign in to quire" }).waitFor();
    await eventually(() => page.content(), (html) => assert.ok(!html.includes("Work"), "no notebook's name before signing in"));
    await page.getByLabel("quire's key").fill(key);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Allow Python test assistant to use your notes?" }).waitFor();
    await page.screenshot({ path: join(SHOTS, "oauth-consent.png"), fullPage: true });
    await page.getByLabel("Only the notebooks ticked below").check();
    await page.getByLabel("Work").check();
    await eventually(() => page.getByLabel("Its changes wait for my review in quire").isChecked(), (checked) => assert.ok(checked, "review is the default"));
    await page.getByRole("button", { name: "Allow" }).click();
    await page.waitForFunction(() => document.body.textContent.includes("Signed in"));
    return back;
  };
  const store = join(home.dir, "oauth-store.json");
  const url = `${base}/mcp`;
  const first = await runClient(home, url, store, [
    { list: true },
    { call: "update_note", args: { note_id: plan, body: "final\n" } },
    { call: "create_note", args: { title: "Elsewhere", notebook_id: homeNotebook.notebook_id ?? homeNotebook.id } },
    { call: "list_notebooks", args: {} },
  ], signIn);
  assert.equal(first.code, 0, first.stderr);
  const [tools, update, create, notebooks] = first.answers;
  assert.ok(tools.tools.includes("update_note"), JSON.stringify(tools));
  assert.ok(update.texts.some((text) => text.includes("waits in review")), JSON.stringify(update));
  assert.equal(cli(home, "note", "show", plan).body, "draft\n", "staged, not written");
  assert.ok(create.is_error, `outside its notebooks: ${JSON.stringify(create)}`);
  assert.deepEqual(notebooks.structured.notebooks.map((n) => n.title).filter((title) => title !== "Notebooks"), ["Work"]);

  // The grant, by name, with what was chosen.
  const listed = execFileSync(QUIRE, ["mcp", "token", "list"], { env: home.env, encoding: "utf8" });
  assert.match(listed, /oauth-python-test-assistant {2}OAuth grant to Python test assistant, reaches Work, writes staged for review/);
  // Signed in already: no consent asked.
  const again = await runClient(home, url, store, [{ list: true }], () => assert.fail("asked to sign in again"), { QUIRE_TEST_NO_SIGN_IN: "1" });
  assert.equal(again.code, 0, again.stderr);
  // Revoked: refused (its refresh token too), and it would have to ask the person again.
  execFileSync(QUIRE, ["mcp", "token", "revoke", "oauth-python-test-assistant"], { env: home.env });
  // The server reads the token file again within half a second: the client is refused from then on.
  await eventually(
    () => runClient(home, url, store, [{ list: true }], () => assert.fail("no browser here"), { QUIRE_TEST_NO_SIGN_IN: "1" }),
    (revoked) => {
      assert.notEqual(revoked.code, 0);
      assert.match(revoked.stderr, /sign-in asked again/);
    },
    { timeout: 30_000, interval: 200 },
  );
});

test("quire serve --public-url serves the MCP endpoint beside the web app, and a read-only grant reads only", { skip: !python && "QUIRE_PLUGIN_RUNTIMES is not set" }, async (t) => {
  const home = tempHome();
  t.after(() => home.remove());
  const plan = addNote(home, "Plan", "draft\n").note_id;
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const server = spawn(QUIRE, ["serve", "--addr", `127.0.0.1:${port}`, "--public-url", base], { env: home.env, stdio: ["ignore", "pipe", "pipe"] });
  t.after(() => server.kill("SIGINT"));
  let webAddress = "";
  server.stdout.on("data", (d) => (webAddress += d));
  await new Promise((resolve, reject) => {
    let err = "";
    server.stderr.on("data", (d) => {
      err += d;
      if (err.includes("Hosted assistants:")) resolve();
    });
    server.on("exit", (code) => reject(new Error(`quire serve exited with ${code}: ${err}`)));
  });
  const key = execFileSync(QUIRE, ["mcp", "token"], { env: home.env, encoding: "utf8" }).trim();
  const browser = await launch();
  t.after(() => browser.close());
  const page = await browser.newPage();
  const signIn = async (authorize) => {
    let back = null;
    await page.route("http://127.0.0.1:53682/**", (route) => {
      back = route.request().url();
      return route.fulfill({ body: "Signed in" });
    });
    await page.goto(authorize);
    await page.getByLabel("quire's key").fill(key);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByLabel("Read only: search and read, never change").check();
    await page.getByLabel("Its changes wait for my review in quire").uncheck();
    await page.getByRole("button", { name: "Allow" }).click();
    await page.waitForFunction(() => document.body.textContent.includes("Signed in"));
    return back;
  };
  const run = await runClient(home, `${base}/mcp`, join(home.dir, "store.json"), [{ list: true }, { call: "read_note", args: { note_id: plan } }], signIn);
  assert.equal(run.code, 0, run.stderr);
  const [{ tools }, read] = run.answers;
  assert.ok(tools.includes("read_note") && !tools.includes("update_note"), JSON.stringify(tools));
  assert.equal(read.structured.body, "draft\n");
  const listed = execFileSync(QUIRE, ["mcp", "token", "list"], { env: home.env, encoding: "utf8" });
  assert.match(listed, /OAuth grant to Python test assistant, reaches the whole workspace, read-only/);
  // The web app is still there, for this machine only.
  const address = /http:\/\/\S+/.exec(webAddress)[0];
  await page.goto(address);
  await page.waitForSelector("#tree .tree-item");
});

const suiteNode = process.env.QUIRE_CONFORMANCE_NODE;
const suite = process.env.QUIRE_CONFORMANCE_SUITE;

test("the MCP conformance suite's authorization server scenarios pass, consent given in the browser", { skip: !suite && "QUIRE_CONFORMANCE_SUITE is not set (`cargo xtask browser` sets it)" }, async (t) => {
  const home = tempHome();
  t.after(() => home.remove());
  const port = await freePort();
  const callbackPort = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const server = spawn(QUIRE, ["mcp", "--http", `127.0.0.1:${port}`, "--public-url", base], { env: home.env, stdio: ["ignore", "ignore", "pipe"] });
  t.after(() => server.kill());
  await new Promise((resolve, reject) => {
    let err = "";
    server.stderr.on("data", (d) => {
      err += d;
      if (err.includes("Hosted assistants:")) resolve();
    });
    server.on("exit", (code) => reject(new Error(`quire mcp exited with ${code}: ${err}`)));
  });
  const registered = await (
    await fetch(`${base}/oauth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ client_name: "conformance suite", redirect_uris: [`http://127.0.0.1:${callbackPort}/callback`] }),
    })
  ).json();
  const run = spawn(
    suiteNode,
    [suite, "authorization", "--url", base, "--client-id", registered.client_id, "--resource", `${base}/mcp`, "-p", String(callbackPort)],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  run.stderr.on("data", (d) => (output += d));
  const key = execFileSync(QUIRE, ["mcp", "token"], { env: home.env, encoding: "utf8" }).trim();
  const browser = await launch();
  t.after(() => browser.close());
  const page = await browser.newPage();
  const authorize = await new Promise((resolve, reject) => {
    run.stdout.on("data", (d) => {
      output += d;
      // The whole address, up to the end of its line: a chunk of output may end in the middle of it.
      const found = /(http:\/\/127\.0\.0\.1:\d+\/oauth\/authorize\S+)\s/.exec(output);
      if (found) resolve(found[1]);
    });
    run.on("exit", () => reject(new Error(`the suite ended without asking for consent: ${output}`)));
  });
  const ended = new Promise((resolve) => run.on("exit", resolve));
  await page.goto(authorize);
  await page.getByLabel("quire's key").fill(key);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("button", { name: "Allow" }).click();
  const code = await ended;
  assert.match(output, /authorization-code-grant: 1 passed, 0 failed/, output);
  assert.match(output, /Total: \d+ passed, 0 failed/, output);
  assert.equal(code, 0, output);
});
