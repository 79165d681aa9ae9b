// The browser's merge rule (src/merge.ts, what the open editor does with a version written elsewhere) over the cases
// quire's three text merges share (tests/fixtures/merge-rules.json; crates/sync/tests/it/merge_rules.rs runs the
// other rules over them): it gives what the record says, a merged text or a refusal (null). No browser is needed: the
// module is bundled for Node by the UI's own esbuild.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { test } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build } from "esbuild";

const ui = resolve(fileURLToPath(new URL("..", import.meta.url)));
const root = resolve(ui, "../../..");

async function load() {
  const out = await build({
    stdin: {
      contents: 'export { wordMerge } from "./src/merge"; export { Text } from "@codemirror/state";',
      resolveDir: ui,
      loader: "ts",
    },
    bundle: true,
    format: "esm",
    platform: "node",
    write: false,
  });
  const dir = mkdtempSync(join(tmpdir(), "quire-merge-"));
  const file = join(dir, "merge.mjs");
  writeFileSync(file, out.outputFiles[0].text);
  try {
    return await import(pathToFileURL(file).href);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test("the editor's word merge gives what the record of merges says", async () => {
  const { wordMerge, Text } = await load();
  const { cases } = JSON.parse(readFileSync(join(root, "tests/fixtures/merge-rules.json"), "utf8"));
  assert.ok(cases.length >= 4, "the record lost its cases");
  for (const c of cases) {
    const changes = wordMerge(c.base, c.theirs, c.mine);
    const got = changes ? changes.apply(Text.of(c.mine.split("\n"))).toString() : null;
    assert.equal(got, c.words, `${c.name}: the word rule`);
  }
});
