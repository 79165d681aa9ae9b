// Bundles src/main.ts into ../assets/app.js (committed, embedded in the binary). `node build.mjs --check` builds into
// memory and fails when the committed bundle differs, which `cargo xtask ci` runs.
import { build } from "esbuild";
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

const out = fileURLToPath(new URL("../assets/app.js", import.meta.url));
const result = await build({
  entryPoints: [fileURLToPath(new URL("src/main.ts", import.meta.url))],
  bundle: true,
  minify: true,
  format: "iife",
  target: "es2022",
  legalComments: "eof",
  charset: "utf8",
  write: false,
  logLevel: "warning",
});
const code = result.outputFiles[0].contents;
const gzipped = gzipSync(code).length;
// The budget for the initial JavaScript.
const budget = 300 * 1024;
if (gzipped > budget) {
  console.error(`app.js is ${gzipped} bytes gzipped, over the ${budget}-byte budget`);
  process.exit(1);
}
if (process.argv.includes("--check")) {
  let committed = "";
  try {
    committed = readFileSync(out);
  } catch {}
  if (Buffer.compare(Buffer.from(code), Buffer.from(committed)) !== 0) {
    console.error("crates/web/assets/app.js is stale: run `cargo xtask web` and commit the result");
    process.exit(1);
  }
  console.log(`app.js is fresh (${code.length} bytes, ${gzipped} gzipped)`);
} else {
  writeFileSync(out, code);
  console.log(`wrote app.js (${code.length} bytes, ${gzipped} gzipped)`);
}
