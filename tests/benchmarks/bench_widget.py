"""Widget benchmarks in real JupyterLab + headless Chromium (Debian's /usr/bin/chromium).

1. First render of a saved session: a 10,000-event log (real Session + SessionLog) opened with
   ``SessionInspector(path)`` and ``LoopWidget(path=...)``: time from the widget's root element
   appearing to its data on screen (timeline rows / the diagram's current stage). Baseline: the
   same for a 100-event log, measured in this run.
2. Chunk-to-DOM latency of a 200 chunks/s stream: a steady adapter (injected into a Host through
   its ``adapter_factory``) streams text chunks that carry their kernel-side send time; the page
   records when each becomes visible in the history view (kernel and browser share one clock).
3. Kernel messages per second during that stream: the widget's batched custom messages, against
   the uncoalesced baseline (one message per envelope) of the same stream.

    python tests/benchmarks/bench_widget.py [--events 10000] [--rate 200] [--chunks 1200] [--rounds 3]

Targets: first render < 1 s; latency p50 < 100 ms; < 500 kernel msgs/s.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.benchmarks._common import percentile  # noqa: E402
from tests.benchmarks._widget_logs import write_log, write_wide_log  # noqa: E402
from tests.browser.conftest import (  # noqa: E402
    CHROME_ARGS,
    CHROMIUM,
    Lab,
    launch_lab,
    open_notebook,
    skip_reason,
    wait_until,
)

WATERFALL_JS = """async () => {
  const insp = document.querySelector('.dsh-inspector');
  const t0 = performance.now();
  insp.querySelector('.dsh-f-waterfall').click();
  // the turn's page may come from the kernel (a window of a long session): until its bars are drawn
  while (!insp.querySelector('.dsh-wf-seg')) await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
  const open = performance.now() - t0;
  const bars = Number(insp.querySelector('.dsh-wf-turn').dataset.lanes);
  const drawn = insp.querySelectorAll('.dsh-wf-seg').length;
  const zooms = [];
  for (const cls of ['.dsh-wf-in', '.dsh-wf-in', '.dsh-wf-out', '.dsh-wf-fit']) {
    const z0 = performance.now();
    insp.querySelector(cls).click();
    await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
    zooms.push(performance.now() - z0);
  }
  const c0 = performance.now();
  insp.querySelectorAll('.dsh-wf-seg')[Math.floor(drawn / 2)].click();
  await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
  const select = performance.now() - c0;
  const body = insp.querySelector('.dsh-wf-body');
  const s0 = performance.now();
  body.scrollTop = body.scrollHeight / 2;
  await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(r, 0))));
  const scroll = performance.now() - s0;
  return { open, bars, drawn, zooms, select, scroll };
}"""


RENDER_JS = """(sel) => {
  window.__r = {};
  const obs = new MutationObserver(() => {
    const now = performance.now();
    if (!window.__r.root && document.querySelector(sel.root)) window.__r.root = now;
    if (!window.__r.data && document.querySelector(sel.data)) { window.__r.data = now; obs.disconnect(); }
  });
  obs.observe(document.body, { subtree: true, childList: true, attributes: true });
}"""


def first_render(page: Any, lab: Lab, name: str, code: str, root: str, data: str) -> float:
    lab.write_notebook(name, code)
    open_notebook(page, lab, name)
    page.evaluate(RENDER_JS, {"root": root, "data": data})
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    page.wait_for_selector(data, timeout=60_000)
    r = page.evaluate("() => window.__r")
    lab.shutdown_sessions()
    return float(r["data"] - r["root"])


STREAM_CELL = """
import asyncio, time
from dsh_notebook.config import settings_from_env
from dsh_notebook.host.host import Host
from dsh_notebook.launcher import new_host
from dsh_notebook.models.base import BlockEnd, BlockStart, Finish, TextDelta, UsageChunk
from dsh_notebook.client.dsh_client import DshClient
from dsh_notebook.notebook.widgets import LoopWidget
from dsh_notebook.testing import FunctionModel
from dsh_notebook.wire.events import Usage
from dsh_notebook.wire.messages import TextBlock

async def steady(n, rate):
    # n text deltas at a steady rate, each stamped with the time it is sent
    yield BlockStart(index=0, block_type="text")
    parts, t0 = [], time.monotonic()
    for i in range(n):
        delay = t0 + i / rate - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        piece = f"<{time.time() * 1000:.1f}> "
        parts.append(piece)
        yield TextDelta(index=0, text=piece)
    yield BlockEnd(index=0, block=TextBlock(text="".join(parts)))
    yield UsageChunk(usage=Usage(input_tokens=1, output_tokens=n))
    yield Finish(reason="stop")

host = new_host(settings_from_env(), adapter_factory=lambda settings, model, base_url: FunctionModel(lambda _r: steady(CHUNKS, RATE), provider="bench"), name="bench-host")
link = DshClient(host)
created = link.create_session(model="bench:steady", cwd=".")
w = LoopWidget(created.session_id, host=host)
w
"""

STATS_CELL = """
import json
log = list(w.bridge.batcher.sent_log)
print("DSHSTATS" + json.dumps({"sends": log}))
"""

LATENCY_JS = """() => {
  window.__lat = []; window.__seen = new Set();
  const scan = () => {
    const now = Date.now();
    const el = document.querySelector('.dsh-loop .dsh-streaming');
    if (!el) return;
    for (const m of el.textContent.matchAll(/<(\\d+\\.\\d)>/g)) {
      if (window.__seen.has(m[1])) continue;
      window.__seen.add(m[1]);
      window.__lat.push([Number(m[1]), now - Number(m[1])]);
    }
  };
  new MutationObserver(scan).observe(document.body, { subtree: true, childList: true, characterData: true });
}"""


def stream_round(page: Any, lab: Lab, chunks: int, rate: int, n: int) -> dict[str, Any]:
    name = f"stream_{n}.ipynb"
    lab.write_notebook(name, f"CHUNKS, RATE = {chunks}, {rate}\n" + STREAM_CELL, STATS_CELL)
    open_notebook(page, lab, name)
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-cell-and-select-next'); }")
    page.wait_for_selector(".dsh-loop .dsh-prompt-input", timeout=60_000)
    wait_until(lambda: "events" in (page.locator(".dsh-loop .dsh-sub").first.text_content() or ""), timeout=30)
    page.evaluate(LATENCY_JS)
    page.fill(".dsh-loop .dsh-prompt-input", "stream")
    page.click(".dsh-loop .dsh-send")
    wait_until(lambda: "turn 1 completed" in (page.locator(".dsh-loop .dsh-prompt-answer").first.text_content() or ""),
               timeout=chunks / rate + 60, what="stream finished")
    lat = page.evaluate("() => window.__lat")
    stats_cell = page.locator(".jp-NotebookPanel .jp-Notebook .jp-Cell").nth(1)
    stats_cell.locator(".jp-InputPrompt").click()
    page.keyboard.press("Escape")
    page.keyboard.press("Control+Enter")
    out = stats_cell.locator(".jp-OutputArea")
    text = wait_until(lambda: (lambda t: t if "DSHSTATS" in t else None)(out.inner_text()), timeout=30)
    sends = json.loads(text.split("DSHSTATS", 1)[1].strip())["sends"]
    lab.shutdown_sessions()
    t_first, t_last = lat[0][0] / 1000, lat[-1][0] / 1000
    window = [(t, k) for t, k in sends if t_first <= t <= t_last + 0.06]
    dur = max(1e-3, t_last - t_first)
    return {
        "chunks_seen": len(lat),
        "latencies": [x[1] for x in lat],
        "msgs_per_s": len(window) / dur,
        "envelopes_per_s": sum(k for _, k in window) / dur,
        "duration_s": dur,
    }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=10_000)
    ap.add_argument("--rate", type=int, default=200)
    ap.add_argument("--chunks", type=int, default=1200)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--scale-events", type=int, default=100_000, help="the scale case (chained requests), against 100 events")
    ap.add_argument("--wide-requests", type=int, default=1000, help="requests in the one turn of the waterfall case")
    ap.add_argument("--no-stream", action="store_true", help="only the first-render sections (skip 2. and 3.)")
    ap.add_argument("--no-waterfall", action="store_true", help="skip 1c. (a front end without the waterfall)")
    a = ap.parse_args()
    reason = skip_reason()
    if reason:
        print(f"bench_widget: skipped ({reason})")
        return 0
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="dsh-bench-widget-") as tmp, launch_lab(Path(tmp)) as lab:
        big = write_log(lab.root / "big.jsonl", a.events)
        small = write_log(lab.root / "small.jsonl", 100)
        print(f"logs: {a.events} events ({big.stat().st_size / 1e6:.1f} MB), 100 events ({small.stat().st_size / 1e3:.0f} kB)")
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROME_ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 1000})
            imp = "from dsh_notebook.notebook.widgets import LoopWidget, SessionInspector\n"
            res: dict[str, list[float]] = {k: [] for k in ("insp100", "insp10k", "loop100", "loop10k")}
            for i in range(a.rounds):
                res["insp100"].append(first_render(page, lab, f"i100_{i}.ipynb", imp + "SessionInspector('small.jsonl')", ".dsh-inspector", ".dsh-inspector .dsh-row"))
                res["insp10k"].append(first_render(page, lab, f"i10k_{i}.ipynb", imp + "SessionInspector('big.jsonl')", ".dsh-inspector", ".dsh-inspector .dsh-row"))
                res["loop100"].append(first_render(page, lab, f"l100_{i}.ipynb", imp + "LoopWidget(path='small.jsonl')", ".dsh-loop", ".dsh-loop .dsh-stage[data-state=current]"))
                res["loop10k"].append(first_render(page, lab, f"l10k_{i}.ipynb", imp + "LoopWidget(path='big.jsonl')", ".dsh-loop", ".dsh-loop .dsh-stage[data-state=current]"))
            med = {k: statistics.median(v) for k, v in res.items()}
            print("\n1. first render of a saved session (widget root on screen → data on screen), median of", a.rounds)
            print(f"   SessionInspector  100 events: {med['insp100']:7.0f} ms   {a.events} events: {med['insp10k']:7.0f} ms   ratio {med['insp10k'] / med['insp100']:.1f}x")
            print(f"   LoopWidget        100 events: {med['loop100']:7.0f} ms   {a.events} events: {med['loop10k']:7.0f} ms   ratio {med['loop10k'] / med['loop100']:.1f}x")
            worst = max(med["insp10k"], med["loop10k"])
            print(f"   target < 1000 ms: {'PASS' if worst < 1000 else 'FAIL'} ({worst:.0f} ms)")

            # the scale case: a 100k-event session whose requests chain as the agent freezes them
            huge = write_log(lab.root / "huge.jsonl", a.scale_events, chained=True)
            write_log(lab.root / "tiny.jsonl", 100, chained=True)
            scale: dict[str, list[float]] = {k: [] for k in ("insp100", "inspN", "loop100", "loopN")}
            for i in range(a.rounds):
                scale["insp100"].append(first_render(page, lab, f"si100_{i}.ipynb", imp + "SessionInspector('tiny.jsonl')", ".dsh-inspector", ".dsh-inspector .dsh-row"))
                scale["inspN"].append(first_render(page, lab, f"siN_{i}.ipynb", imp + "SessionInspector('huge.jsonl')", ".dsh-inspector", ".dsh-inspector .dsh-row"))
                scale["loop100"].append(first_render(page, lab, f"sl100_{i}.ipynb", imp + "LoopWidget(path='tiny.jsonl')", ".dsh-loop", ".dsh-loop .dsh-stage[data-state=current]"))
                scale["loopN"].append(first_render(page, lab, f"slN_{i}.ipynb", imp + "LoopWidget(path='huge.jsonl')", ".dsh-loop", ".dsh-loop .dsh-stage[data-state=current]"))
            sm = {k: statistics.median(v) for k, v in scale.items()}
            print(f"\n1b. first render at scale: {a.scale_events} events ({huge.stat().st_size / 1e6:.1f} MB, requests chained) vs 100, median of {a.rounds}")
            print(f"   SessionInspector  100 events: {sm['insp100']:7.0f} ms   {a.scale_events} events: {sm['inspN']:7.0f} ms   ratio {sm['inspN'] / sm['insp100']:.1f}x")
            print(f"   LoopWidget        100 events: {sm['loop100']:7.0f} ms   {a.scale_events} events: {sm['loopN']:7.0f} ms   ratio {sm['loopN'] / sm['loop100']:.1f}x")
            worst = max(sm["inspN"], sm["loopN"])
            print(f"   target < 1000 ms: {'PASS' if worst < 1000 else 'FAIL'} ({worst:.0f} ms)")

            # the waterfall of one turn of 1,000 requests: opening it, zooming, selecting a bar
            if not a.no_waterfall:
                wide = write_wide_log(lab.root / "wide.jsonl", a.wide_requests)
                lab.write_notebook("wide.ipynb", imp + "SessionInspector('wide.jsonl')")
                open_notebook(page, lab, "wide.ipynb")
                page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
                page.wait_for_selector(".dsh-inspector .dsh-row", timeout=60_000)
                wf = page.evaluate(WATERFALL_JS)
                lab.shutdown_sessions()
                print(f"\n1c. waterfall of one turn of {a.wide_requests} requests ({wf['bars']} lanes, {wf['drawn']} bars drawn, {wide.stat().st_size / 1e6:.1f} MB log)")
                print(f"   open {wf['open']:.0f} ms   zoom steps {' / '.join(f'{z:.0f}' for z in wf['zooms'])} ms   bar → event {wf['select']:.0f} ms   scroll {wf['scroll']:.0f} ms")
                slowest = max([wf["open"], wf["select"], wf["scroll"], *wf["zooms"]])
                print(f"   target interactive (< 200 ms a step): {'PASS' if slowest < 200 else 'FAIL'} ({slowest:.0f} ms)")
            if a.no_stream:
                browser.close()
                return 0

            rounds = [stream_round(page, lab, a.chunks, a.rate, i) for i in range(max(1, a.rounds - 1))]
            lats = [x for r in rounds for x in r["latencies"]]
            msgs = statistics.median(r["msgs_per_s"] for r in rounds)
            envs = statistics.median(r["envelopes_per_s"] for r in rounds)
            seen = sum(r["chunks_seen"] for r in rounds)
            print(f"\n2. chunk-to-DOM latency at {a.rate} chunks/s ({a.chunks} chunks × {len(rounds)} rounds, {seen} seen on screen)")
            print(f"   p50 {percentile(lats, 50):.0f} ms   p95 {percentile(lats, 95):.0f} ms   max {max(lats):.0f} ms   target p50 < 100 ms: {'PASS' if percentile(lats, 50) < 100 else 'FAIL'}")
            print(f"\n3. kernel → browser messages during the stream: {msgs:.1f} msgs/s (coalesced, 50 ms)")
            print(f"   baseline uncoalesced (one message per envelope): {envs:.1f} msgs/s; ratio {envs / max(msgs, 1e-9):.1f}x fewer")
            print(f"   target < 500 msgs/s: {'PASS' if msgs < 500 else 'FAIL'}")
            browser.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
