"""Scale benchmark (issue 24 item 5): a saved 10,000- and 100,000-event session's first render.

For each size (logs written by the real Session + SessionLog, requests chained as the agent
freezes them — tests/benchmarks/_widget_logs.py):

1. Python: ``read_saved`` (read + check the log), the follow snapshot item the widget sends
   (its JSON bytes), their time and the kernel's peak traced memory (tracemalloc).
2. jsdom: the real inspector and loop widget bundles rendering those snapshot parts (node +
   jsdom, js/scripts/bench-scale.mjs; the first part at once, each later one in its own task):
   time to rows in the DOM and to the loop's current stage.
3. Browser: real JupyterLab + Debian chromium (headless): time from the cell's start (the run
   command; a first cell imported the widgets and started the kernel) to inspector rows visible
   and to the loop widget's stages visible (and to the widget's root, for the split), and the
   kernel's resident high-water mark.

The ratios 100k/10k and against the figure measured last round on the 10k session (3.06 s to
inspector rows, 1.20 s to the loop's stages) are printed. Targets (< 1 s for 100k) are reported,
not asserted: the script exits non-zero only on errors.

    python tests/benchmarks/bench_scale.py [--sizes 10000,100000] [--rounds 3] [--no-browser]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.benchmarks._widget_logs import write_log  # noqa: E402

OLD_10K = {"insp": 3060.0, "loop": 1200.0}
"""Last round's figures for the 10,000-event session, from the cell's start (issue 24)."""


def python_path(path: Path) -> dict[str, float]:
    """What the widget's constructor reads (``read_saved_fast``), the first snapshot part it
    sends (its JSON bytes; all parts' bytes), and the old path: ``read_saved`` (every event
    validated before anything is sent)."""
    from dsh_notebook.host.follow import SessionHub
    from dsh_notebook.host.saved import FIRST_PART
    from dsh_notebook.session.saved import read_saved, read_saved_fast
    from dsh_notebook.wire.follow import Snapshot, snapshot_item

    t0 = time.perf_counter()
    read_saved(path)
    old = time.perf_counter() - t0

    def once() -> tuple[float, float, int]:
        t0 = time.perf_counter()
        saved = read_saved_fast(path)
        t1 = time.perf_counter()
        first = len(saved.lines) if saved.checked else min(len(saved.lines), FIRST_PART)
        saved.verify(0, first)
        snap = Snapshot.model_construct(session_id=saved.session_id, header=saved.header, cursor=first - 1,
                                        live=SessionHub(saved.session_id).run_state.view(False, []))
        text = snapshot_item(snap, saved.lines[:first]).json
        return t1 - t0, time.perf_counter() - t1, len(text.encode())

    runs = [once() for _ in range(3)]
    tracemalloc.start()
    once()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return {"read": statistics.median(r[0] for r in runs) * 1000, "snapshot": statistics.median(r[1] for r in runs) * 1000,
            "bytes": float(runs[0][2]), "all_bytes": float(path.stat().st_size), "peak_mb": peak / 1e6, "old": old * 1000}


def snapshot_parts(path: Path) -> tuple[str, list[str]]:
    """The session id and the follow items (JSON texts) a widget's replay of ``path`` receives:
    the snapshot parts of the read-only controller (host/saved.py), or one snapshot."""
    from dsh_notebook.host.follow import SessionHub
    from dsh_notebook.host.saved import FIRST_PART, PART
    from dsh_notebook.session.saved import read_saved_fast
    from dsh_notebook.wire.follow import Snapshot, snapshot_item

    saved = read_saved_fast(path)
    hub = SessionHub(saved.session_id)
    n = len(saved.lines)
    cuts = [0, *range(FIRST_PART, n, PART), n] if not saved.checked and n > FIRST_PART else [0, n]
    items = []
    for a, b in zip(cuts, cuts[1:], strict=False):
        snap = Snapshot.model_construct(session_id=saved.session_id, header=saved.header, cursor=b - 1, live=hub.run_state.view(False, []))
        items.append(snapshot_item(snap, saved.lines[a:b]).json)
    return saved.session_id, items


def jsdom_path(path: Path) -> dict[str, float] | None:
    node = shutil.which("node")
    script = ROOT / "js" / "scripts" / "bench-scale.mjs"
    if not node or not script.exists() or not (ROOT / "js" / "node_modules" / "jsdom").exists():
        return None
    sid, items = snapshot_parts(path)
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
        fh.write("[" + ",".join(items) + "]")
    try:
        out = subprocess.run([node, str(script), fh.name, sid], capture_output=True, text=True, cwd=ROOT / "js",
                             timeout=600, check=True).stdout
    finally:
        Path(fh.name).unlink()
    result: dict[str, float] = json.loads(out.strip().splitlines()[-1])
    return result


CELL_JS = """(sel) => {
  window.__r = {};
  const obs = new MutationObserver(() => {
    const now = performance.now();
    if (!window.__r.root && document.querySelector('.dsh-root')) window.__r.root = now;
    if (!window.__r.data && document.querySelector(sel)) { window.__r.data = now; obs.disconnect(); }
  });
  obs.observe(document.body, { subtree: true, childList: true, attributes: true });
  const nb = document.querySelector('.jp-NotebookPanel .jp-Notebook');
  window.__r.start = performance.now();
  window.jupyterapp.commands.execute('notebook:run-cell-and-select-next');
}"""

RSS_CELL = """
import resource
print("DSHRSS", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""


def browser_round(page: Any, lab: Any, name: str, code: str, sel: str) -> tuple[float, float, float]:
    """Time from the measured cell's run command to ``sel`` on screen (the kernel already started
    and the widget module imported by a first cell), and the kernel's peak RSS (MB) after it."""
    from tests.browser.conftest import open_notebook, wait_until

    lab.write_notebook(name, "from dsh_notebook.notebook.widgets import LoopWidget, SessionInspector", code, RSS_CELL)
    open_notebook(page, lab, name)
    cells = page.locator(".jp-NotebookPanel .jp-Notebook .jp-Cell")
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-cell-and-select-next'); }")
    wait_until(lambda: (cells.nth(0).locator(".jp-InputPrompt").text_content() or "").strip().startswith("[1]"), timeout=60)
    page.evaluate(CELL_JS, sel)
    page.wait_for_selector(sel, timeout=120_000)
    r = page.evaluate("() => window.__r")
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-cell-and-select-next'); }")
    out = cells.nth(2).locator(".jp-OutputArea")
    text = wait_until(lambda: (lambda t: t if "DSHRSS" in t else None)(out.inner_text()), timeout=120)
    lab.shutdown_sessions()
    return float(r["data"] - r["start"]), float(r.get("root", r["data"]) - r["start"]), float(text.split("DSHRSS", 1)[1].split()[0])


def browser_path(logs: dict[int, Path], rounds: int) -> dict[int, dict[str, float]] | None:
    from tests.browser.conftest import CHROME_ARGS, CHROMIUM, launch_lab, skip_reason

    reason = skip_reason()
    if reason:
        print(f"   browser: skipped ({reason})")
        return None
    from playwright.sync_api import sync_playwright

    out: dict[int, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="dsh-bench-scale-") as tmp, launch_lab(Path(tmp)) as lab, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROME_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 1000})
        for n, path in logs.items():
            shutil.copy(path, lab.root / path.name)
            res: dict[str, list[float]] = {"insp": [], "loop": [], "insp_root": [], "loop_root": [], "rss": []}
            for i in range(rounds):
                t, root, rss = browser_round(page, lab, f"i{n}_{i}.ipynb", f"SessionInspector({path.name!r})", ".dsh-inspector .dsh-row")
                res["insp"].append(t)
                res["insp_root"].append(root)
                res["rss"].append(rss)
                t, root, rss = browser_round(page, lab, f"l{n}_{i}.ipynb", f"LoopWidget(path={path.name!r})",
                                             ".dsh-loop .dsh-stage[data-state=current]")
                res["loop"].append(t)
                res["loop_root"].append(root)
                res["rss"].append(rss)
            out[n] = {k: statistics.median(v) for k, v in res.items()}
            out[n]["rss"] = max(res["rss"])
        browser.close()
    return out


def panels_path(logs: dict[int, Path], rounds: int, widgets: tuple[str, ...] = ("inspector", "loop"),
                ) -> dict[int, tuple[dict[str, dict[str, float]], dict[str, dict[str, float]]]] | None:
    """Section 4: the inspector's panels and the loop widget on each log, in one page per round
    whose long tasks are observed from its start (tests/benchmarks/_panels.py); the sizes of a
    round one after the other in one JupyterLab, so their ratio compares like with like."""
    from tests.benchmarks._panels import LONGTASKS_INIT, inspector_round, loop_round, median_rounds
    from tests.browser.conftest import CHROME_ARGS, CHROMIUM, launch_lab, skip_reason

    reason = skip_reason()
    if reason:
        print(f"   browser: skipped ({reason})")
        return None
    from playwright.sync_api import sync_playwright

    runs: dict[int, tuple[list[dict[str, dict[str, float]]], list[dict[str, dict[str, float]]]]] = {n: ([], []) for n in logs}
    with tempfile.TemporaryDirectory(prefix="dsh-bench-panels-") as tmp, launch_lab(Path(tmp)) as lab, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROME_ARGS)
        for path in logs.values():
            shutil.copy(path, lab.root / path.name)
        for i in range(rounds):
            for n, path in logs.items():
                print(f"   round {i + 1}, {n} events ({load_text()})", flush=True)
                for which, got in (("inspector", runs[n][0]), ("loop", runs[n][1])):
                    if which not in widgets:
                        continue
                    page = browser.new_page(viewport={"width": 1280, "height": 1000})
                    page.add_init_script(LONGTASKS_INIT)
                    try:
                        if which == "inspector":
                            got.append(inspector_round(page, lab, path.name, n, f"pi{n}_{i}.ipynb"))
                        else:
                            got.append(loop_round(page, lab, path.name, n, f"pl{n}_{i}.ipynb"))
                    finally:
                        page.close()
        browser.close()
    return {n: (median_rounds(a) if a else {}, median_rounds(b) if b else {}) for n, (a, b) in runs.items()}


def load_text() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.1f} / {five:.1f} / {fifteen:.1f} on {os.cpu_count()} cores"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10000,100000", help="event counts, comma-separated")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--no-browser", action="store_true", help="only the Python and jsdom sections")
    ap.add_argument("--panels-only", action="store_true", help="only section 4 (the panels and the loop in the browser)")
    ap.add_argument("--loop-only", action="store_true", help="only the loop widget's part of section 4")
    a = ap.parse_args()
    sizes = [int(x) for x in a.sizes.split(",") if x]
    with tempfile.TemporaryDirectory(prefix="dsh-bench-scale-logs-") as tmp:
        logs = {n: write_log(Path(tmp) / f"scale{n}.jsonl", n, chained=True) for n in sizes}
        if a.panels_only or a.loop_only:
            return panels_section(logs, sizes, a.rounds, ("loop",) if a.loop_only else ("inspector", "loop"))
        print("1. Python: the widget's read of the saved log + its first snapshot part (median of 3; old: read_saved, all validated)")
        py = {n: python_path(p) for n, p in logs.items()}
        for n, r in py.items():
            print(f"   {n:>7} events ({r['all_bytes'] / 1e6:5.1f} MB log): read {r['read']:6.0f} ms   first part {r['snapshot']:5.0f} ms"
                  f" ({r['bytes'] / 1e6:5.2f} MB JSON)   peak traced {r['peak_mb']:6.1f} MB   old read {r['old']:6.0f} ms")
        print("\n2. jsdom: the widget bundle folding the snapshot and rendering (time to rows / current stage)")
        js = {n: jsdom_path(p) for n, p in logs.items()}
        for n, got in js.items():
            if got is None:
                print("   skipped (no node/jsdom or js/scripts/bench-scale.mjs)")
                break
            print(f"   {n:>7} events: inspector rows {got['insp']:6.0f} ms   loop stage {got['loop']:6.0f} ms   heap {got['heapMb']:5.0f} MB")
        if a.no_browser:
            return 0
        print(f"\n3. real JupyterLab + chromium: from the cell's start to rows / stages on screen (median of {a.rounds})")
        br = browser_path(logs, a.rounds)
        if br:
            for n, r in br.items():
                print(f"   {n:>7} events: inspector rows {r['insp']:6.0f} ms (root {r['insp_root']:5.0f})   loop stages {r['loop']:6.0f} ms"
                      f" (root {r['loop_root']:5.0f})   kernel peak RSS {r['rss']:5.0f} MB")
            if len(sizes) >= 2:
                lo, hi = br[sizes[0]], br[sizes[-1]]
                print(f"   ratio {sizes[-1]}/{sizes[0]}: inspector {hi['insp'] / lo['insp']:.1f}x   loop {hi['loop'] / lo['loop']:.1f}x")
            big = br[sizes[-1]]
            print(f"   vs last round's 10k figure ({OLD_10K['insp']:.0f} / {OLD_10K['loop']:.0f} ms): inspector {big['insp'] / OLD_10K['insp']:.2f}x"
                  f"   loop {big['loop'] / OLD_10K['loop']:.2f}x")
            worst = max(big["insp"], big["loop"])
            print(f"   target {sizes[-1]} events < 1000 ms: {'PASS' if worst < 1000 else 'FAIL'} ({worst:.0f} ms)")
        return panels_section(logs, sizes, a.rounds)


def panels_section(logs: dict[int, Path], sizes: list[int], rounds: int,
                   widgets: tuple[str, ...] = ("inspector", "loop")) -> int:
    from tests.benchmarks._panels import print_table

    print(f"\n4. the panels at {', '.join(str(n) for n in sizes)} events in real JupyterLab + chromium"
          f" (median of {rounds}; longest task and DOM: the max)")
    print(f"   {load_text()} (start)")
    got = panels_path(logs, rounds, widgets)
    if got is None:
        return 0
    for n, (insp, loop) in got.items():
        print(f"\n   {n} events")
        if insp:
            print_table("SessionInspector", insp)
        print_table("LoopWidget", loop)
    print(f"   {load_text()} (end)")
    big, small = sizes[-1], sizes[0]
    insp, loop = got[big]
    if not insp:  # the loop widget alone (--loop-only)
        opened = {k: loop[k]["ms"] for k in ("rows", "stages", "middle call", "last call")}
        slow = {k: round(v) for k, v in opened.items() if v >= 1000}
        longest = max(v["longest"] for v in loop.values())
        heap = loop["heap peak"]["heap"]
        print(f"   targets at {big}: rows, stages, a call < 1000 ms {'PASS' if not slow else f'FAIL {slow}'};"
              f" no task > 200 ms {'PASS' if longest <= 200 else f'FAIL ({longest:.0f} ms)'};"
              f" page memory < 150 MB {'PASS' if heap < 150 else f'FAIL ({heap:.0f} MB)'};"
              f" rows in the DOM {loop['rows in DOM']['nodes']:.0f}")
        return 0
    if big != small:
        si, sl = got[small]
        ratios = {k: insp[k]["ms"] / max(1.0, si[k]["ms"]) for k in ("rows", "stats", "timeline", "waterfall", "request diff", "search", "turn filter")}
        ratios["stages"] = loop["stages"]["ms"] / max(1.0, sl["stages"]["ms"])
        print(f"   ratio {big}/{small} (one run): " + "   ".join(f"{k} {v:.1f}x" for k, v in ratios.items()))
    opened = {k: v["ms"] for k, v in insp.items() if k in ("rows", "stats", "timeline", "waterfall", "request diff", "search", "jump", "turn filter")}
    opened["stages"] = loop["stages"]["ms"]
    slow = {k: round(v) for k, v in opened.items() if v >= 1000}
    longest = max(max(v["longest"] for v in insp.values()), max(v["longest"] for v in loop.values()))
    heap = max(insp["heap peak"]["heap"], loop["heap peak"]["heap"])
    print(f"   targets at {big}: every panel < 1000 ms {'PASS' if not slow else f'FAIL {slow}'};"
          f" no task > 200 ms {'PASS' if longest <= 200 else f'FAIL ({longest:.0f} ms)'};"
          f" page memory < 150 MB {'PASS' if heap < 150 else f'FAIL ({heap:.0f} MB)'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
