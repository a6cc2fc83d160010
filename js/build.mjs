// Bundle js/src/index.ts -> dsh_notebook/static/widget.js (+ widget.css), an ES module for anywidget,
// and js/src/standalone.ts -> dsh_notebook/static/standalone.js, a classic script for exported pages.
import * as esbuild from "esbuild";
import { copyFileSync, mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const outdir = resolve(here, "../dsh_notebook/static");
mkdirSync(outdir, { recursive: true });
const options = {
  entryPoints: [resolve(here, "src/index.ts")],
  bundle: true,
  format: "esm",
  target: "es2020",
  minify: !process.argv.includes("--dev"),
  sourcemap: false,
  outfile: resolve(outdir, "widget.js"),
  logLevel: "info",
};
const standalone = { ...options, entryPoints: [resolve(here, "src/standalone.ts")], format: "iife", outfile: resolve(outdir, "standalone.js") };
const copyCss = () => copyFileSync(resolve(here, "src/widget.css"), resolve(outdir, "widget.css"));
if (process.argv.includes("--watch")) {
  const ctx = await esbuild.context({ ...options, plugins: [{ name: "css", setup(b) { b.onEnd(copyCss); } }] });
  await ctx.watch();
  await (await esbuild.context(standalone)).watch();
} else {
  await esbuild.build(options);
  await esbuild.build(standalone);
  copyCss();
}
