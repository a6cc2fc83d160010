"""The browser part of tests/benchmarks/bench_scale.py: a saved session opened in real JupyterLab
+ Chromium, every panel of the inspector clicked open, the loop widget's stages, with what the
page measures itself (not a helper; pytest does not collect it).

Per round, in one page whose ``PerformanceObserver`` records every long task (> 50 ms) from the
page's start:

- the inspector: cell start → first row on screen; then (once the count says every event is
  listed) each panel's open time — click → its content on screen and two frames painted —
  for Stats, Timeline, Waterfall, a request's Request diff, a search, the turn filter, a scroll
  to the list's middle and its end; and the close of Stats; the longest task in each step;
- the loop widget: cell start → its first message rows (the history view) and → its current
  stage on screen, from one start; then the scrubber's middle and last call (each: the call's
  stage and rows drawn); the rows in its DOM (history messages, payload cards, list rows);
- the page's JS heap (CDP ``Performance.getMetrics``: JSHeapUsedSize, the largest seen) and its
  DOM element count after each step; the kernel's peak RSS.

The widgets' class names are those of main before issue 38 and after it (both measured alike).
"""

from __future__ import annotations

import statistics
from typing import Any

from tests.browser.conftest import Lab, open_notebook, wait_until

LONGTASKS_INIT = """
window.__lt = [];
try {
  new PerformanceObserver((list) => { for (const e of list.getEntries()) window.__lt.push([e.startTime, e.duration]); })
    .observe({ type: 'longtask', buffered: true });
} catch (e) { window.__ltError = String(e); }
"""

WAIT_JS = """async ([sel, since, timeoutMs, text]) => {
  // resolves with the time `sel` matched (checked on each DOM change; with `text`, when its text
  // starts so), then waits two frames painted; null after timeoutMs
  const found = () => { const el = document.querySelector(sel); return el && (!text || (el.textContent || '').startsWith(text)); };
  let at = found() ? performance.now() : 0;
  if (!at) {
    at = await new Promise((resolve) => {
      const obs = new MutationObserver(() => { if (found()) { obs.disconnect(); resolve(performance.now()); } });
      obs.observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
      setTimeout(() => { obs.disconnect(); resolve(0); }, timeoutMs);
    });
  }
  if (!at) return null;
  await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  return { at: at - since, painted: performance.now() - since };
}"""

WAIT_MANY_JS = """async ([sels, since, timeoutMs]) => {
  // the time each selector of `sels` (name -> selector) first matched, checked on each DOM change,
  // then two frames painted; null after timeoutMs
  const at = {};
  const check = () => { const now = performance.now(); for (const [k, s] of Object.entries(sels)) if (!(k in at) && document.querySelector(s)) at[k] = now - since; return Object.keys(at).length === Object.keys(sels).length; };
  if (!check()) {
    const ok = await new Promise((resolve) => {
      const obs = new MutationObserver(() => { if (check()) { obs.disconnect(); resolve(true); } });
      obs.observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
      setTimeout(() => { obs.disconnect(); resolve(false); }, timeoutMs);
    });
    if (!ok) return null;
  }
  await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  return { at, painted: performance.now() - since };
}"""

LOOP_ROWS_JS = """() => { const l = document.querySelector('.dsh-loop'); return l ? l.querySelectorAll('.dsh-msg, .dsh-card, .dsh-row, [role=option]').length : 0; }"""

RSS_CELL = """
import resource
print("DSHRSS", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""


class Probe:
    """One page's measurements: long tasks since a mark, the JS heap, the DOM size."""

    def __init__(self, page: Any) -> None:
        self.page = page
        page.set_default_timeout(900_000)  # a click waits for its handler: a frozen page holds it for minutes
        self.cdp = page.context.new_cdp_session(page)
        self.cdp.send("Performance.enable")
        self.heap_peak = 0.0

    def now(self) -> float:
        return float(self.page.evaluate("() => performance.now()"))

    def longest(self, since: float) -> float:
        tasks = self.page.evaluate("(t) => window.__lt.filter(([s, d]) => s + d >= t).map(([s, d]) => d)", since)
        return max(tasks, default=0.0)

    def heap_mb(self) -> float:
        metrics = {m["name"]: m["value"] for m in self.cdp.send("Performance.getMetrics")["metrics"]}
        mb = metrics.get("JSHeapUsedSize", 0.0) / 1e6
        self.heap_peak = max(self.heap_peak, mb)
        return float(mb)

    def nodes(self) -> int:
        return int(self.page.evaluate("() => document.getElementsByTagName('*').length"))

    def settle(self, quiet_ms: int = 400, timeout: float = 60) -> None:
        """Wait until no long task has started for ``quiet_ms`` (the page at rest)."""
        wait_until(lambda: self.page.evaluate(
            "(q) => { const l = window.__lt; const end = l.length ? l[l.length - 1][0] + l[l.length - 1][1] : 0;"
            " return performance.now() - end > q; }", quiet_ms), timeout=timeout, every=0.1, what="page at rest")

    def step(self, action: Any, sel: str, timeout_ms: int = 900_000, text: str = "") -> dict[str, float]:
        """Run ``action()`` (a click, a key), then time until ``sel`` is on screen (its text
        starting with ``text``) and painted."""
        t0 = self.now()
        action()
        r = self.page.evaluate(WAIT_JS, [sel, t0, timeout_ms, text])
        if r is None:
            raise AssertionError(f"{sel} not on screen within {timeout_ms} ms")
        self.settle()
        return self.record(sel, {"ms": float(r["painted"]), "longest": self.longest(t0), "heap": self.heap_mb(), "nodes": float(self.nodes())})

    @staticmethod
    def record(what: str, r: dict[str, float]) -> dict[str, float]:
        print(f"      {what[:60]:<60} {r['ms']:8.0f} ms  longest task {r['longest']:6.0f} ms  heap {r['heap']:6.1f} MB  {r['nodes']:7.0f} nodes", flush=True)
        return r


def _run_cell(page: Any) -> None:
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-cell-and-select-next'); }")


def _first_cell(page: Any, lab: Lab, name: str, code: str) -> Any:
    lab.write_notebook(name, "from dsh_notebook.notebook.widgets import LoopWidget, SessionInspector", code, RSS_CELL)
    open_notebook(page, lab, name)
    cells = page.locator(".jp-NotebookPanel .jp-Notebook .jp-Cell")
    _run_cell(page)
    wait_until(lambda: (cells.nth(0).locator(".jp-InputPrompt").text_content() or "").strip().startswith("[1]"), timeout=120)
    return cells


def _rss(page: Any, cells: Any) -> float:
    page.evaluate("() => { const nb = window.jupyterapp.shell.currentWidget.content; nb.activeCellIndex = 2; nb.mode = 'command'; }")
    _run_cell(page)
    out = cells.nth(2).locator(".jp-OutputArea")
    text = wait_until(lambda: (lambda t: t if "DSHRSS" in t else None)(out.inner_text()), timeout=120)
    return float(text.split("DSHRSS", 1)[1].split()[0])


def _turn_filter(page: Any, insp: Any, turn: int) -> None:
    el = insp.locator(".dsh-f-turn")
    if el.evaluate("(e) => e.tagName") == "SELECT":
        el.focus()  # a long list is filled on first use
        el.select_option(str(turn))
    else:  # the searchable combobox: type the number, Enter picks the first match
        el.fill(str(turn))
        el.press("Enter")


def inspector_round(page: Any, lab: Lab, log: str, n: int, name: str) -> dict[str, dict[str, float]]:
    probe = Probe(page)
    cells = _first_cell(page, lab, name, f"SessionInspector({log!r})")
    out: dict[str, dict[str, float]] = {}
    out["rows"] = probe.step(lambda: _run_cell(page), ".dsh-inspector .dsh-row")
    insp = page.locator(".dsh-inspector").first
    count = insp.locator(".dsh-f-count")
    want = f"{n:,} of {n:,} events"
    t0 = probe.now()
    wait_until(lambda: (count.text_content() or "") == want, timeout=900, what="every event listed")
    probe.settle()
    out["all listed"] = probe.record("all listed", {"ms": probe.now() - t0 + out["rows"]["ms"], "longest": probe.longest(t0), "heap": probe.heap_mb(), "nodes": float(probe.nodes())})
    out["stats"] = probe.step(lambda: insp.locator(".dsh-f-stats").click(), ".dsh-inspector .dsh-stats table tbody tr[data-seq]")
    t0 = probe.now()
    insp.locator(".dsh-f-stats").click()
    wait_until(lambda: insp.locator(".dsh-stats").is_hidden(), timeout=600, what="stats closed")
    probe.settle()
    out["stats close"] = probe.record("stats closed", {"ms": probe.now() - t0, "longest": probe.longest(t0), "heap": probe.heap_mb(), "nodes": float(probe.nodes())})
    out["timeline"] = probe.step(lambda: insp.locator(".dsh-f-timeline").click(), ".dsh-inspector .dsh-timeline .dsh-tl-barrow")
    insp.locator(".dsh-f-timeline").click()
    out["waterfall"] = probe.step(lambda: insp.locator(".dsh-f-waterfall").click(), ".dsh-inspector .dsh-wf-seg")
    insp.locator(".dsh-f-waterfall").click()
    # a request in the middle of the session: jump to it, then its Request diff tab
    mid = n // 2
    seq_in = insp.locator(".dsh-f-seq")
    target = _request_near(page, insp, mid)
    out["jump"] = probe.step(lambda: (seq_in.fill(str(target)), seq_in.press("Enter")),
                             f'.dsh-inspector .dsh-row-sel[data-seq="{target}"]')
    out["request diff"] = probe.step(lambda: insp.locator('.dsh-tab[data-detail="diff"]').click(), ".dsh-inspector .dsh-diff")
    # a search whose one hit is the read call of the middle turn (its arguments name the file)
    turn = n // 24
    out["search"] = probe.step(lambda: insp.locator(".dsh-f-text").fill(f'type:tool/call "file_{turn}.txt"'),
                               ".dsh-inspector .dsh-f-count", text="1 of")
    out["search cleared"] = probe.step(lambda: insp.locator(".dsh-f-text").fill(""), ".dsh-inspector .dsh-f-count", text=want)
    out["turn filter"] = probe.step(lambda: _turn_filter(page, insp, turn), ".dsh-inspector .dsh-f-count", text="12 of")
    out["rows in DOM"] = {"ms": 0.0, "longest": 0.0, "heap": probe.heap_mb(), "nodes": float(insp.locator(".dsh-row").count())}
    out["kernel rss"] = {"ms": 0.0, "longest": 0.0, "heap": _rss(page, cells), "nodes": 0.0}
    out["heap peak"] = {"ms": 0.0, "longest": 0.0, "heap": probe.heap_peak, "nodes": 0.0}
    lab.shutdown_sessions()
    return out


def _request_near(page: Any, insp: Any, seq: int) -> int:
    """The seq of a request/frozen at or after ``seq`` (the bench log's layout repeats every turn)."""
    # write_log: turn/start, step/start, user, request/frozen ... (12 events a turn from seq 0)
    base = seq - seq % 12
    return base + 3


def loop_round(page: Any, lab: Lab, log: str, n: int, name: str) -> dict[str, dict[str, float]]:
    probe = Probe(page)
    cells = _first_cell(page, lab, name, f"LoopWidget(path={log!r})")
    out: dict[str, dict[str, float]] = {}
    t0 = probe.now()
    _run_cell(page)
    sels = {"rows": ".dsh-loop .dsh-history:not([aria-busy]) .dsh-msg", "stages": ".dsh-loop .dsh-stage[data-state=current]"}
    r = page.evaluate(WAIT_MANY_JS, [sels, t0, 900_000])
    if r is None:
        raise AssertionError("the loop widget's rows or stages not on screen within 900 s")
    probe.settle()
    longest, heap, nodes = probe.longest(t0), probe.heap_mb(), float(probe.nodes())
    for k in sels:
        out[k] = probe.record(k, {"ms": float(r["at"][k]), "longest": longest, "heap": heap, "nodes": nodes})
    loop = page.locator(".dsh-loop").first
    # the widget knows the whole session: its header counts every event and its scrubber every call
    # (write_log: a call a turn of 12 events) — before issue 38 once the browser had folded every
    # event, after it once the kernel has listed them
    calls = n // 12
    wait_until(lambda: f"{n:,} events" in (loop.locator(".dsh-sub").text_content() or "")
               and f"/{calls}:" in (loop.locator(".dsh-scrub-label").text_content() or ""), timeout=900, what="the whole log")
    probe.settle()
    scrub = loop.locator("input[type=range]").first

    def to_call(key: str) -> None:
        before = loop.locator(".dsh-scrub-label").text_content()
        t0 = probe.now()
        scrub.focus()
        page.keyboard.press(key)
        wait_until(lambda: loop.locator(".dsh-scrub-label").text_content() != before
                   and "reading" not in (loop.locator(".dsh-scrub-label").text_content() or "")
                   and loop.locator(".dsh-stage[data-state=current]").count() == 1
                   and loop.locator(".dsh-history:not([aria-busy]) .dsh-msg").count() > 0, timeout=300, what=f"the call after {key}", every=0.02)
        shown = probe.now()  # the call's stage and rows on screen (polled every 20 ms)
        probe.settle()
        what = "last call" if key == "End" else "middle call"
        out[what] = probe.record(what, {"ms": shown - t0, "longest": probe.longest(t0), "heap": probe.heap_mb(), "nodes": float(probe.nodes())})

    to_call("PageUp")  # a tenth of the calls on (a range input's PageUp raises it)
    to_call("End")
    out["rows in DOM"] = {"ms": 0.0, "longest": 0.0, "heap": probe.heap_mb(), "nodes": float(page.evaluate(LOOP_ROWS_JS))}
    probe.cdp.send("HeapProfiler.collectGarbage")  # what the page holds, not what it has yet to collect
    out["heap held"] = {"ms": 0.0, "longest": 0.0, "heap": probe.heap_mb(), "nodes": float(probe.nodes())}
    out["kernel rss"] = {"ms": 0.0, "longest": 0.0, "heap": _rss(page, cells), "nodes": 0.0}
    out["heap peak"] = {"ms": 0.0, "longest": 0.0, "heap": probe.heap_peak, "nodes": 0.0}
    lab.shutdown_sessions()
    return out


def median_rounds(rounds: list[dict[str, dict[str, float]]]) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for key in rounds[0]:
        out[key] = {f: (max if f in ("longest", "nodes") or key == "heap peak" else statistics.median)(r[key][f] for r in rounds)
                    for f in rounds[0][key]}
    return out


def print_table(title: str, res: dict[str, dict[str, float]]) -> None:
    print(f"   {title}")
    print(f"   {'step':<14} {'time ms':>9} {'longest task ms':>16} {'JS heap MB':>11} {'DOM nodes':>10}")
    for k, v in res.items():
        if k in ("kernel rss", "heap peak", "rows in DOM", "heap held"):
            continue
        print(f"   {k:<14} {v['ms']:9.0f} {v['longest']:16.0f} {v['heap']:11.1f} {v['nodes']:10.0f}")
    if "rows in DOM" in res:
        print(f"   list rows in the DOM: {res['rows in DOM']['nodes']:.0f}")
    held = f"   held after a GC {res['heap held']['heap']:.1f} MB" if "heap held" in res else ""
    print(f"   page JS heap peak {res['heap peak']['heap']:.1f} MB{held}   kernel peak RSS {res['kernel rss']['heap']:.0f} MB")
