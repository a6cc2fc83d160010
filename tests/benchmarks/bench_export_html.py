"""export-html benchmark: write the page of a saved session and open it from a file in headless
Chromium (no network) — the time to write, the page's size, and the time from navigation to the
six stages and the inspector's rows on screen. Logs of 100 and N events (real Session +
SessionLog, the widget benchmark's realistic turns).

    python tests/benchmarks/bench_export_html.py [--events 10000]

Targets: write < 1 s and first render < 2 s for 10,000 events.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from dsh_notebook.observe.export_html import write_page  # noqa: E402
from tests.benchmarks.bench_widget import write_log  # noqa: E402
from tests.browser.conftest import CHROME_ARGS, CHROMIUM  # noqa: E402


def measure(browser: Any, log: Path, out: Path) -> dict[str, Any]:
    t0 = time.perf_counter()
    write_page(str(log), out)
    write_s = time.perf_counter() - t0
    context = browser.new_context(viewport={"width": 1280, "height": 1400})
    context.route("**/*", lambda r: r.continue_() if r.request.url.startswith("file://") else r.abort())
    page = context.new_page()
    t1 = time.perf_counter()
    page.goto(out.as_uri())
    page.wait_for_selector(".dsh-loop .dsh-stage[data-state=current]", timeout=60_000)
    stages_s = time.perf_counter() - t1
    page.wait_for_selector(".dsh-inspector .dsh-row", timeout=60_000)
    rows_s = time.perf_counter() - t1
    context.close()
    return {"events": sum(1 for _ in log.open()) - 1, "writeMs": round(write_s * 1000), "pageKB": out.stat().st_size // 1024,
            "stagesMs": round(stages_s * 1000), "rowsMs": round(rows_s * 1000)}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=10_000)
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    tmp = Path(tempfile.mkdtemp(prefix="dsh-bench-export-"))
    results = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROME_ARGS)
        for n in (100, args.events):
            log = write_log(tmp / f"s_bench{n:06d}.jsonl", n)
            results.append(measure(browser, log, tmp / f"bench{n}.html"))
        browser.close()
    print(json.dumps({"exportHtml": results}, indent=2))
    big = results[-1]
    ok = big["writeMs"] < 1000 and big["rowsMs"] < 2000
    print("targets (write < 1 s, first render < 2 s at the larger log):", "met" if ok else "MISSED")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
