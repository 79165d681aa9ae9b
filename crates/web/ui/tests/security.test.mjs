// What keeps the page safe, in a real browser: Markdown and replies that carry scripts, a note's HTML that names the
// app's own elements, and the session the API asks for (cookie, secret, origin).
import assert from "node:assert/strict";
import { request } from "node:http";
import { test } from "node:test";
import { addNote, ask, browserSuite, eventually, expectCount, expectText, openNote, turnDone } from "./support.mjs";

const { mock, session } = await browserSuite();

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
  await eventually(() => page.evaluate(() => window.__xss), (ran) => assert.equal(ran, undefined));
  await expectCount(page.locator("#preview script, #preview iframe, #messages script, #messages iframe"), 0);
  await page.locator("#preview").getByText("Target").first().click();
  await page.waitForFunction(() => document.querySelector("#title").value === "Target");
  await openNote(page, "Payload");
  await page.click("#tab-preview");
  await page.locator("#preview").getByText("by id").click();
  await page.waitForFunction(() => document.querySelector("#title").value === "Target");
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
  await eventually(
    () => page.evaluate(() => ["messages", "history", "backlinks", "title"].map((id) => document.getElementById(id)?.closest("#preview") === null)),
    (owners) => assert.deepEqual(owners, [true, true, true, true], "no element of the preview answers to the app's ids"),
  );
  mock.script.push({ text: "A reply for the sidebar." });
  await ask(page, "Where does this go?");
  await turnDone(page);
  await expectText(page.locator("#sidebar #messages"), /Where does this go\?[\s\S]*A reply for the sidebar/);
  await eventually(() => page.locator("#preview").innerText(), (text) => assert.doesNotMatch(text, /Where does this go|A reply for the sidebar/));
  // Another note opens: the old preview is gone, and that note's backlinks render in the real box.
  await openNote(page, "Other");
  await eventually(() => page.locator("#preview").innerHTML(), (html) => assert.doesNotMatch(html, /API key/, "the previous note's preview is gone"));
  await page.locator("#note-pane #backlinks li", { hasText: "Linker" }).waitFor();
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
  const secret = await eventually(() => page.evaluate(() => localStorage.getItem("quire-session")), (secret) => assert.match(secret, /^[0-9a-f]{64}$/));
  await eventually(() => page.url(), (url) => assert.doesNotMatch(url, /session=/));
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
