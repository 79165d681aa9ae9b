// Bundles src/main.ts into ../assets/app.js and src/math-entry.ts (Temml, loaded the first time a text holds a
// formula) into ../assets/math.js, both committed and embedded in the binary. `node build.mjs --check` builds into
// memory and fails when a committed bundle differs, which `cargo xtask ci` runs.
import { build } from "esbuild";
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { brotliCompressSync, brotliDecompressSync, constants, gzipSync } from "node:zlib";

const check = process.argv.includes("--check");
let failed = false;

/// The bundle brotli-compressed at its best (what a browser that accepts `br` gets: about 14% less than gzip), kept
/// beside it as `NAME.br`. `--check` decompresses the committed one and compares it with the bundle (compressors
/// of other versions may write other bytes for the same text).
function brotli(code, out) {
  const packed = `${out}.br`;
  if (check) {
    let committed = null;
    try {
      committed = brotliDecompressSync(readFileSync(packed));
    } catch {}
    if (!committed || Buffer.compare(committed, Buffer.from(code)) !== 0) {
      console.error(`${packed} is stale: run \`cargo xtask web\` and commit the result`);
      failed = true;
    }
    return;
  }
  const params = { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: code.length };
  writeFileSync(packed, brotliCompressSync(code, { params }));
}

/// One bundle; `budget`: the most bytes it may have gzipped.
async function bundle(entry, name, budget) {
  const out = fileURLToPath(new URL(`../assets/${name}`, import.meta.url));
  const result = await build({
    entryPoints: [fileURLToPath(new URL(`src/${entry}`, import.meta.url))],
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
  if (gzipped > budget) {
    console.error(`${name} is ${gzipped} bytes gzipped, over the ${budget}-byte budget`);
    failed = true;
    return;
  }
  brotli(code, out);
  if (check) {
    let committed = "";
    try {
      committed = readFileSync(out);
    } catch {}
    if (Buffer.compare(Buffer.from(code), Buffer.from(committed)) !== 0) {
      console.error(`crates/web/assets/${name} is stale: run \`cargo xtask web\` and commit the result`);
      failed = true;
      return;
    }
    console.log(`${name} is fresh (${code.length} bytes, ${gzipped} gzipped)`);
  } else {
    writeFileSync(out, code);
    console.log(`wrote ${name} (${code.length} bytes, ${gzipped} gzipped)`);
  }
}

// The initial script's budget: what a phone on a slow network waits for before the first screen (issue 48).
await bundle("main.ts", "app.js", 200 * 1024);
await bundle("math-entry.ts", "math.js", 100 * 1024);
if (failed) process.exit(1);
