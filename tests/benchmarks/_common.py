"""Helpers shared by the benchmark scripts (not a benchmark; pytest does not collect it).

The scripts run as ``python tests/benchmarks/bench_x.py``: each puts the repository root on
``sys.path`` first, then imports ``from tests.benchmarks._common import ...``. Child processes
started by a benchmark (``python -c``) import it the same way.
"""

from __future__ import annotations

import resource
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def cpu_and_wall() -> tuple[float, float]:
    """The process CPU time and the wall clock (``perf_counter``), read together, in seconds."""
    return time.process_time(), time.perf_counter()


def peak_rss_mb() -> float:
    """This process's peak resident set size so far (``ru_maxrss``), in MB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def vm_hwm_mb() -> float:
    """This process's resident high-water mark from ``/proc/self/status`` (``VmHWM``), in MB;
    0.0 where there is no ``/proc``."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def percentile(xs: list[float], p: float) -> float:
    """The ``p``-th percentile (0–100) of ``xs`` by nearest rank on the sorted values."""
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]
