"""Benchmark of ``compare A B``: time and peak RSS of comparing two identical sessions of 1k, 10k
and 100k events (the worst case: every step is compared, none diverges), in a fresh process each.

    python tests/benchmarks/bench_compare.py [--quick]

The logs are the widget benchmark's (``_widget_logs.write_log``, chained requests as the agent
freezes them). Target: linear — time per event at 100k / time per event at 1k ≤ 3 (before the
fingerprints of ``session/request_index.py`` it was quadratic: 100k did not finish in 300 s).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repo, run as a script

from tests.benchmarks._common import REPO  # noqa: E402
from tests.benchmarks._widget_logs import write_log  # noqa: E402

CHILD = """
import json, sys, time
sys.path.insert(0, {repo!r})
from tests.benchmarks._common import vm_hwm_mb
from dsh_notebook.analysis.compare import compare_events
from dsh_notebook.session.persistence import load_log
a, b = load_log(sys.argv[1]).events, load_log(sys.argv[2]).events
t = time.perf_counter()
pairs, divergence = compare_events(a, b)
print(json.dumps({{"s": time.perf_counter() - t, "steps": len(pairs), "diverges": divergence is not None,
                  "rss_mb": vm_hwm_mb()}}))
"""


def measure(directory: Path, n: int) -> dict[str, float]:
    a = write_log(directory / f"s_a{n}.jsonl", n, chained=True)
    b = write_log(directory / f"s_b{n}.jsonl", n, chained=True)
    out = subprocess.run([sys.executable, "-c", CHILD.format(repo=str(REPO)), str(a), str(b)],
                         capture_output=True, text=True, check=True, timeout=600)
    got: dict[str, float] = json.loads(out.stdout)
    return got


def main() -> int:
    sizes = [1_000, 10_000] if "--quick" in sys.argv else [1_000, 10_000, 100_000]
    with tempfile.TemporaryDirectory() as tmp:
        rows = {n: measure(Path(tmp), n) for n in sizes}
    for n, r in rows.items():
        print(f"compare {n:>7} events: {r['s'] * 1000:8.1f} ms  {r['steps']:>6} steps  "
              f"peak RSS {r['rss_mb']:.0f} MB  diverges={r['diverges']}")
    small, large = sizes[0], sizes[-1]
    ratio = (rows[large]["s"] / large) / max(rows[small]["s"] / small, 1e-9)
    print(f"time per event, {large} vs {small}: {ratio:.2f}x (target <= 3: linear)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
