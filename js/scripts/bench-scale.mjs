// jsdom part of tests/benchmarks/bench_scale.py: the real widget bundle (js/src/index.ts, built
// here with esbuild) renders a saved session's follow snapshot, as the kernel sends it, in jsdom.
//   node scripts/bench-scale.mjs ITEMS.json SESSION_ID   (a JSON array of the follow items)
// prints one JSON line: {"insp": ms to the first inspector row, "loop": ms to the loop's current
// stage, "heapMb": the heap used after both}. The time starts when the widget renders; the first
// item arrives one microtask after it asks to follow, each later one in its own task (its own
// comm message, as the kernel sends the snapshot parts). A follow that asks for a window gets the
// last events of the log, and `session/page` is answered by the browser's twin of the kernel's
// pages (src/data/local.ts) over the whole log, as the kernel would.
import * as esbuild from "esbuild";
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { tmpdir } from "node:os";
import { JSDOM } from "jsdom";

const here = dirname(fileURLToPath(import.meta.url));
const [snapshotPath, sessionId] = process.argv.slice(2);
const items = JSON.parse(readFileSync(snapshotPath, "utf8")).map((v) => JSON.stringify(v));
const out = resolve(tmpdir(), `dsh-bench-scale-${process.pid}.mjs`);
await esbuild.build({ entryPoints: [resolve(here, "../src/index.ts")], bundle: true, format: "esm", target: "es2020", outfile: out, logLevel: "silent" });
const kernelOut = resolve(tmpdir(), `dsh-bench-scale-kernel-${process.pid}.mjs`);
await esbuild.build({ stdin: { contents: `export { LocalPages } from "./src/data/local"; export { ClientSessionModel } from "./src/fold"; export { Pricing } from "./src/model/pricing";`,
  resolveDir: resolve(here, ".."), loader: "ts" }, bundle: true, format: "esm", target: "es2020", outfile: kernelOut, logLevel: "silent" });

const dom = new JSDOM("<!doctype html><html><body></body></html>", { pretendToBeVisual: true });
for (const k of ["window", "document", "HTMLElement", "Node", "MutationObserver", "KeyboardEvent", "MouseEvent", "Event",
  "HTMLSelectElement", "HTMLInputElement", "getComputedStyle", "requestAnimationFrame", "cancelAnimationFrame", "DOMParser"]) {
  if (!(k in globalThis) || k === "window" || k === "document") globalThis[k] = k === "window" ? dom.window : dom.window[k];
}
const widget = (await import(pathToFileURL(out).href)).default;
const kernel = await import(pathToFileURL(kernelOut).href);
let pages = null; // the "kernel's" pages of the whole log (built when first asked)
const pagesOf = () => {
  if (!pages) {
    const whole = new kernel.ClientSessionModel();
    for (const t of items) whole.apply(JSON.parse(t));
    pages = new kernel.LocalPages(whole, new kernel.Pricing());
  }
  return pages;
};

class Model {
  constructor(state) { this.state = state; this.handlers = new Map(); }
  get(name) { return this.state[name]; }
  on(ev, cb) { if (!this.handlers.has(ev)) this.handlers.set(ev, new Set()); this.handlers.get(ev).add(cb); }
  off(ev, cb) { if (ev && cb) this.handlers.get(ev)?.delete(cb); }
  emit(content) { for (const h of this.handlers.get("msg:custom") ?? []) h(content); }
  set() {}
  save_changes() {}
  send(c) {
    const env = c.envelope;
    if (!env) return;
    const args = env.payload?.args ?? {};
    if (env.type === "open") {
      const wrap = (text) => `{"type":"item","streamId":${JSON.stringify(env.streamId)},"value":${text}}`;
      if (args.window) { // the last `window` events, as host/follow.py sends them
        const all = items.flatMap((t) => JSON.parse(t).events);
        const snap = JSON.parse(items[items.length - 1]);
        const events = all.slice(-args.window);
        queueMicrotask(() => this.emit({ kind: "batch", cid: c.cid, items: [wrap(JSON.stringify({ ...snap, events, start: events[0].seq - 1 }))] }));
        return;
      }
      queueMicrotask(() => this.emit({ kind: "batch", cid: c.cid, items: [wrap(items[0])] }));
      items.slice(1).forEach((t, i) => setTimeout(() => this.emit({ kind: "batch", cid: c.cid, items: [wrap(t)] }), 5 * (i + 1)));
    } else if (env.type === "client-request") {
      const value = env.method === "session/page" ? { page: pagesOf().get(args.query) } : {};
      queueMicrotask(() => this.emit({ kind: "batch", cid: c.cid, items: [{ type: "server-response", rpcId: env.rpcId, result: { ok: true, value } }] }));
    }
  }
}

async function timeTo(kind, selector) {
  const el = document.createElement("div");
  document.body.append(el);
  const model = new Model({ kind, session_id: sessionId, readonly: true, error: "", create_args: {}, present: false, pricing: {} });
  let seen = 0;
  // a MutationObserver (a microtask after the DOM change), not polling: later parts' timers
  // would run before a poll and hide when the rows appeared
  const obs = new MutationObserver(() => { if (!seen && el.querySelector(selector)) seen = performance.now(); });
  obs.observe(el, { subtree: true, childList: true, attributes: true });
  const t0 = performance.now();
  const dispose = widget.render({ model, el });
  if (!seen && el.querySelector(selector)) seen = performance.now();
  while (!seen) {
    await new Promise((r) => setTimeout(r, 1));
    if (performance.now() - t0 > 300_000) throw new Error(`${kind}: ${selector} never appeared`);
  }
  obs.disconnect();
  await new Promise((r) => setTimeout(r, 5 * (items.length + 1))); // let the later parts land before disposing
  dispose();
  el.remove();
  return seen - t0;
}

const insp = await timeTo("inspector", ".dsh-inspector .dsh-row");
const loop = await timeTo("loop", ".dsh-loop .dsh-stage[data-state=current]");
console.log(JSON.stringify({ insp, loop, heapMb: process.memoryUsage().heapUsed / 1e6 }));
