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


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10000,100000", help="event counts, comma-separated")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--no-browser", action="store_true", help="only the Python and jsdom sections")
    a = ap.parse_args()
    sizes = [int(x) for x in a.sizes.split(",") if x]
    with tempfile.TemporaryDirectory(prefix="dsh-bench-scale-logs-") as tmp:
        logs = {n: write_log(Path(tmp) / f"scale{n}.jsonl", n, chained=True) for n in sizes}
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
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
