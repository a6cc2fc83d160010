// A dependency-free test runner for src/math.ts (plain Node.js 18+, no TypeScript compiler).
// It strips the simple type annotations in place (line numbers are preserved), loads the
// result as a module, and checks each helper. A failure prints
// "src/math.ts:<line> expected <value> received <value>" and the process exits with code 1.
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const file = "src/math.ts";
const source = readFileSync(join(root, file), "utf8");

function stripTypes(ts) {
  return ts
    .replace(/\)\s*:\s*[A-Za-z_][\w<>\[\]| ]*\s*\{/g, ") {") // return types
    .replace(/(\w+)\s*:\s*[A-Za-z_][\w<>\[\]|]*(?=\s*[,)=])/g, "$1"); // parameter types
}

// the line of the first `return` inside `function name`, to point at the code under test
function lineOf(name) {
  const lines = source.split("\n");
  const start = lines.findIndex((l) => l.includes(`function ${name}(`));
  if (start < 0) return 0;
  for (let i = start; i < lines.length; i++) {
    if (/^\s*return\b/.test(lines[i])) return i + 1;
  }
  return start + 1;
}

const dir = mkdtempSync(join(tmpdir(), "demo-math-"));
const compiled = join(dir, "math.mjs");
writeFileSync(compiled, stripTypes(source));
let math;
try {
  math = await import(pathToFileURL(compiled).href);
} catch (err) {
  console.log(`${file}: cannot load: ${err.message}`);
  process.exit(1);
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const cases = [
  ["add", [2, 3], 5],
  ["add", [-1, 1], 0],
  ["subtract", [7, 4], 3],
  ["subtract", [0, 5], -5],
  ["multiply", [3, 4], 12],
  ["divide", [9, 3], 3],
];

let failed = 0;
for (const [name, args, expected] of cases) {
  let received;
  try {
    received = math[name](...args);
  } catch (err) {
    received = `error: ${err.message}`;
  }
  if (received !== expected) {
    failed++;
    console.log(`FAIL ${name}(${args.join(", ")})`);
    console.log(`${file}:${lineOf(name)} expected ${expected} received ${received}`);
  } else {
    console.log(`ok   ${name}(${args.join(", ")}) = ${received}`);
  }
}
if (failed) {
  console.log(`${failed} of ${cases.length} tests failed`);
  process.exit(1);
}
console.log(`all ${cases.length} tests passed`);
