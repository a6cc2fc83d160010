#!/usr/bin/env node
// Generate the front end's TypeScript from the Python that declares it, one way (Python never
// names a file of js/): src/wire.gen.ts from the wire's JSON Schema (`python -m dsh_notebook
// schema`), src/glossary.gen.ts from the glossary (`python -m dsh_notebook.glossary --typescript`),
// and ../labextension/src/pages.gen.ts — the JupyterLab pages' socket (PAGE_ROOTS and what they
// reference), for the JupyterLab extension, which compiles on its own.
//
//   node scripts/gen-types.mjs            write both
//   node scripts/gen-types.mjs --check    exit 1 when a committed file differs from a fresh one
//   node scripts/gen-types.mjs --schema FILE   read the schema from FILE instead of running Python
//   node scripts/gen-types.mjs --out DIR       write (or --check against) DIR/wire.gen.ts and
//                                              DIR/glossary.gen.ts instead of src/'s
//
// The Python interpreter is $DSH_PYTHON, else ../.venv/bin/python, else python3. Output is
// deterministic: one exported type per `$defs` entry, sorted by name; unions stay unions,
// closed objects (`additionalProperties: false`) get no index signature. The schema's `x-endpoints`
// become `UnaryEndpoints` / `StreamEndpoints` (each endpoint's args and result or items: the
// Connection and the Remote are typed by them), its `x-stages` the `STAGE_TABLE`.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const PAGE_ROOTS = ["PageFromServer", "PageToServer", "PageNotebook", "PageSaved", "CellProvenance"];
function outDir(argv) {
  const i = argv.indexOf("--out");
  return i >= 0 ? resolve(argv[i + 1]) : null;
}

function python() {
  if (process.env.DSH_PYTHON) return process.env.DSH_PYTHON;
  const venv = resolve(here, "../../.venv/bin/python");
  return existsSync(venv) ? venv : "python3";
}

function runPython(args) {
  return execFileSync(python(), args, { cwd: resolve(here, "../.."), encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
}

function loadSchema(argv) {
  const i = argv.indexOf("--schema");
  if (i >= 0) return JSON.parse(readFileSync(argv[i + 1], "utf8"));
  return JSON.parse(runPython(["-m", "dsh_notebook", "schema"]));
}

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const typeName = (name) => name.replace(/[^A-Za-z0-9_$]/g, "_").replace(/^([0-9])/, "_$1");
const key = (k) => (IDENT.test(k) ? k : JSON.stringify(k));
const literal = (v) => JSON.stringify(v);

function refKey(ref) {
  const m = /^#\/(?:\$defs|definitions)\/(.+)$/.exec(ref);
  if (!m) throw new Error(`unsupported $ref ${ref}`);
  return decodeURIComponent(m[1]).replace(/~1/g, "/").replace(/~0/g, "~");
}

function refName(ref) {
  return typeName(refKey(ref));
}

/** The `$defs` keys `roots` reach through their `$ref`s (the roots included). */
function reachable(defs, roots) {
  const seen = new Set();
  const todo = [...roots];
  while (todo.length) {
    const name = todo.pop();
    if (seen.has(name)) continue;
    if (!(name in defs)) throw new Error(`no $defs entry ${name}`);
    seen.add(name);
    JSON.stringify(defs[name], (k, v) => {
      if (k === "$ref" && typeof v === "string") todo.push(refKey(v));
      return v;
    });
  }
  return seen;
}

function union(parts) {
  const uniq = [...new Set(parts)];
  if (uniq.length === 0) return "never";
  return uniq.length === 1 ? uniq[0] : uniq.map((p) => (p.includes(" | ") || p.includes(" & ") ? `(${p})` : p)).join(" | ");
}

function comment(text, indent) {
  if (!text) return "";
  const lines = String(text).trim().split("\n");
  if (lines.length === 1) return `${indent}/** ${lines[0].replace(/\*\//g, "*\\/")} */\n`;
  return `${indent}/**\n${lines.map((l) => `${indent} * ${l.replace(/\*\//g, "*\\/")}`.trimEnd()).join("\n")}\n${indent} */\n`;
}

function ts(schema, indent = "") {
  if (schema === true || schema === undefined) return "JsonValue";
  if (schema === false) return "never";
  if (schema.$ref) return refName(schema.$ref);
  if ("const" in schema) return literal(schema.const);
  if (Array.isArray(schema.enum)) return union(schema.enum.map(literal));
  if (schema.anyOf) return union(schema.anyOf.map((s) => ts(s, indent)));
  if (schema.oneOf) return union(schema.oneOf.map((s) => ts(s, indent)));
  if (schema.allOf) return schema.allOf.length === 1 ? ts(schema.allOf[0], indent) : schema.allOf.map((s) => ts(s, indent)).join(" & ");
  const type = schema.type;
  if (Array.isArray(type)) return union(type.map((t) => ts({ ...schema, type: t }, indent)));
  switch (type) {
    case "string": return "string";
    case "integer": case "number": return "number";
    case "boolean": return "boolean";
    case "null": return "null";
    case "array": {
      if (Array.isArray(schema.prefixItems)) {
        const items = schema.prefixItems.map((s) => ts(s, indent));
        if (schema.items === false || schema.maxItems === items.length) return `[${items.join(", ")}]`;
        return `[${items.join(", ")}, ...${arrayOf(ts(schema.items, indent))}]`;
      }
      return arrayOf(ts(schema.items, indent));
    }
    case "object": return object(schema, indent);
    case undefined:
      if (schema.properties || schema.additionalProperties !== undefined) return object(schema, indent);
      return "JsonValue";
    default:
      throw new Error(`unsupported schema type ${JSON.stringify(type)}`);
  }
}

function arrayOf(t) {
  return /^[A-Za-z0-9_$"]+$/.test(t) ? `${t}[]` : `(${t})[]`;
}

function object(schema, indent) {
  const inner = `${indent}  `;
  const required = new Set(schema.required ?? []);
  const lines = [];
  for (const [k, s] of Object.entries(schema.properties ?? {})) {
    // a `const` field (a discriminator such as `type`) is always serialized, default or not
    const always = required.has(k) || (s && typeof s === "object" && "const" in s);
    lines.push(`${comment(s.description, inner)}${inner}${key(k)}${always ? "" : "?"}: ${ts(s, inner)};`);
  }
  const extra = schema.additionalProperties;
  if (extra !== false && !(extra === undefined && schema.properties && schema.unevaluatedProperties === false)) {
    const value = extra === undefined || extra === true ? "JsonValue" : ts(extra, inner);
    if (lines.length === 0) return `{ [k: string]: ${value} }`;
    lines.push(`${inner}[k: string]: ${value === "JsonValue" ? "unknown" : value};`);
  }
  if (lines.length === 0) return "Record<string, never>";
  return `{\n${lines.join("\n")}\n${indent}}`;
}

/** The TypeScript of `doc`'s `$defs` (only those `roots` reach, when given). */
export function generate(doc, roots = null) {
  const defs = doc.$defs ?? doc.definitions ?? {};
  const only = roots ? reachable(defs, roots) : null;
  const out = [
    "// Generated by js/scripts/gen-types.mjs from `python -m dsh_notebook schema`. Do not edit:",
    "// change the pydantic models of the wire, then `npm run gen:types` (or `make types`).",
    ...(roots ? [`// The types ${roots.join(", ")} reach.`] : []),
    "/* eslint-disable */",
    "",
    "export type JsonValue = null | boolean | number | string | JsonValue[] | { [k: string]: JsonValue };",
  ];
  for (const name of Object.keys(defs).sort()) {
    if (name === "JsonValue") continue; // pydantic's JsonValue (`{}`): the alias above
    if (only && !only.has(name)) continue;
    const schema = defs[name];
    const body = ts(schema, "");
    const doc = comment(schema.description, "");
    out.push("");
    if (body.startsWith("{\n") && !schema.anyOf && !schema.oneOf) out.push(`${doc}export interface ${typeName(name)} ${body}`);
    else out.push(`${doc}export type ${typeName(name)} = ${body};`);
  }
  const endpoints = roots ? [] : Object.entries(doc["x-endpoints"] ?? {});
  const table = (kind, what, doc_) => {
    const rows = endpoints.filter(([, e]) => e.kind === kind);
    if (rows.length === 0) return;
    out.push("", doc_);
    out.push(`export interface ${what} {\n${rows.map(([name, e]) =>
      `  ${literal(name)}: { args: ${ts(e.args)}; ${kind === "stream" ? "items" : "result"}: ${ts(e[kind === "stream" ? "items" : "result"])} };`).join("\n")}\n}`);
  };
  table("unary", "UnaryEndpoints", "/** Every unary endpoint: its args and its result (the schema's `x-endpoints`, declared in Python,\n *  dsh_notebook.wire.endpoints.ENDPOINTS). The Connection's `call` and the Remote are typed by it. */");
  table("stream", "StreamEndpoints", "/** Every stream endpoint: its args and the items it sends (the schema's `x-endpoints`). */");
  if (doc["x-stages"] && !roots) {
    out.push("", "/** The six stages of seed 000, one row a stage: the schema's `x-stages` (declared in Python,");
    out.push(" *  dsh_notebook.wire.stages). The diagram, the narration, the roles and the debugger read it. */");
    out.push(`export const STAGE_TABLE = [\n${doc["x-stages"].map((row) => `  ${JSON.stringify(row)},`).join("\n")}\n] as const;`);
  }
  return `${out.join("\n")}\n`;
}

function main(argv) {
  const dir = outDir(argv);
  const schema = loadSchema(argv);
  const files = [
    [resolve(dir ?? resolve(here, "../src"), "wire.gen.ts"), generate(schema), "the Python wire models"],
    [resolve(dir ?? resolve(here, "../src"), "glossary.gen.ts"), runPython(["-m", "dsh_notebook.glossary", "--typescript"]), "dsh_notebook/glossary.py"],
    [resolve(dir ?? resolve(here, "../../labextension/src"), "pages.gen.ts"), generate(schema, PAGE_ROOTS), "the Python wire models"],
  ];
  if (argv.includes("--check")) {
    let stale = false;
    for (const [file, text, source] of files) {
      const committed = existsSync(file) ? readFileSync(file, "utf8") : "";
      if (committed === text) continue;
      console.error(`${relative(resolve(here, "../.."), file)} is out of date with ${source}: run \`make types\` (or \`cd js && npm run gen:types\`) and commit it`);
      stale = true;
    }
    if (stale) process.exit(1);
    return;
  }
  for (const [file, text] of files) writeFileSync(file, text);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main(process.argv.slice(2));
