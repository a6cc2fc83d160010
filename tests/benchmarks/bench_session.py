"""Benchmark of the Core Session: append+derive(+repair) cost per event vs history length, and
resume of a 100k-event log (time and peak RSS in a fresh process).

    python tests/benchmarks/bench_session.py [--quick]

Per event, the timed loop does what the agent does around each fact: ``session.append`` (with a
``SessionLog`` observing, i.e. the line queued for the next flush), ``derive_messages()`` and
``PairingRepairer.repair()`` of the derived history. Histories are built from realistic steps
(user prompt, assistant text + tool call, tool/call, tool/result, request/frozen, step and turn
bookkeeping). The cost is the best of several windows of appended events (less noise from the
machine), in µs per event. Targets: cost at 100k / cost at 10 ≤ 1.5; resume of 100k < 1 s and
< 300 MB above the interpreter's own baseline.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from dsh_notebook.session import (  # noqa: E402
    AssistantMessage,
    PairingRepairer,
    Session,
    SessionLog,
    TextBlock,
    ToolCallBlock,
    tool_text,
    user_text,
)
from dsh_notebook.session.events import (  # noqa: E402
    AnyEvent,
    AssistantMessageEvent,
    RequestFrozen,
    StepEnd,
    StepStart,
    ToolCall,
    ToolResult,
    TurnEnd,
    TurnEndReason,
    TurnStart,
    Usage,
    UserMessageEvent,
)


def workload(session: Session) -> Iterator[AnyEvent]:
    """An endless, realistic stream of events (4 steps per turn, one tool call per step)."""
    turn = 0
    while True:
        turn += 1
        yield TurnStart(turn=turn)
        yield UserMessageEvent(turn=turn, message=user_text(f"Please fix the failing test {turn}."))
        for step in range(1, 5):
            yield StepStart(turn=turn, step=step)
            seqs = session.derive_messages().seqs_between(-40, 10**9)  # a bounded context
            yield RequestFrozen(
                turn=turn, step=step, attempt=1, provider="deepseek", model="deepseek-chat",
                message_seqs=tuple(seqs),
            )  # fmt: skip
            cid = f"call_{turn}_{step}"
            msg = AssistantMessage(
                content=(
                    TextBlock(text="Let me read the file first."),
                    ToolCallBlock(id=cid, name="read", arguments='{"file_path":"src/math.ts"}'),
                ),
                provider="deepseek", model="deepseek-chat",
            )  # fmt: skip
            usage = Usage(input_tokens=1200 + step, output_tokens=40)
            yield AssistantMessageEvent(turn=turn, step=step, message=msg, usage=usage)
            call_seq = session.last_seq + 1
            yield ToolCall(turn=turn, step=step, call_id=cid, name="read", arguments="{}")
            text = "export function add(a: number, b: number) {\n  return a - b;\n}\n"
            yield ToolResult(
                turn=turn, step=step, message=tool_text(cid, text), source_event_seqs=(call_seq,)
            )
            yield StepEnd(turn=turn, step=step)
        yield TurnEnd(turn=turn, reason=TurnEndReason(kind="completed"))


def cost_per_event(history: int, window: int, repeats: int, tmp: Path) -> float:
    session = Session("s_bench", cwd="/ws")
    log = SessionLog(session, tmp / f"h{history}.jsonl")
    repairer = PairingRepairer()
    events = workload(session)
    while len(session) < history:
        session.append(next(events))
    repairer.repair(session.derive_messages())
    log.flush()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(window):
            session.append(next(events))
            repairer.repair(session.derive_messages())
        best = min(best, (time.perf_counter() - t0) / window)
        log.flush()
    log.close()
    return best * 1e6


RESUME = """
import resource, sys, time
sys.path.insert(0, {repo!r})
from dsh_notebook.session import SessionStore
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
if {do!r}:
    t0 = time.perf_counter()
    s = SessionStore({home!r}).resume("s_big")
    dt = time.perf_counter() - t0
    n = len(s)
else:
    dt, n = 0.0, 0
print(dt, n, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, base)
"""


def resume_run(home: Path, do: bool) -> tuple[float, int, float]:
    code = RESUME.format(repo=str(REPO), home=str(home), do=do)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    dt, n, rss, _ = out.stdout.split()
    return float(dt), int(n), int(rss) / 1024  # ru_maxrss is KiB on Linux


def main() -> int:
    quick = "--quick" in sys.argv
    sizes = [10, 1_000, 10_000, 100_000]
    window, repeats = (500, 3) if quick else (2_000, 5)
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        costs = {n: cost_per_event(n, window, repeats, tmp) for n in sizes}
        for n, c in costs.items():
            print(f"append+derive+repair at {n:>7,} events of history: {c:7.2f} µs/event")
        ratio = costs[100_000] / costs[10]
        print(f"ratio 100k/10: {ratio:.2f}  (target <= 1.5)")

        home = tmp / "home"
        session = Session("s_big", cwd="/ws")
        log = SessionLog(session, home / "sessions" / "s_big.jsonl")
        events = workload(session)
        while len(session) < 100_000:
            session.append(next(events))
        session.append(TurnStart(turn=10**6))  # leave the last turn open: crash repair runs
        log.close()
        size = (home / "sessions" / "s_big.jsonl").stat().st_size
        baseline = min(resume_run(home, False)[2] for _ in range(2))
        runs = [resume_run(home, True) for _ in range(3 if not quick else 1)]
        best_t = min(r[0] for r in runs)
        peak = max(r[2] for r in runs) - baseline
        print(
            f"resume of {len(session):,} events ({size / 1e6:.1f} MB log): {best_t:.3f} s best of "
            f"{len(runs)} (all: {', '.join(f'{r[0]:.3f}' for r in runs)}), peak RSS +{peak:.0f} MB "
            f"over a {baseline:.0f} MB baseline  (targets < 1 s, < 300 MB)"
        )
        ok = ratio <= 1.5 and best_t < 1.0 and peak < 300
        print(json.dumps({"costs_us": costs, "ratio": ratio, "resume_s": best_t, "resume_mb": peak, "ok": ok}))
    return 0 if ok else 1


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    raise SystemExit(main())
