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
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repo, run as a script

from dsh_notebook.session import PairingRepairer, Session, SessionLog
from dsh_notebook.wire.events import (  # noqa: E402
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
from dsh_notebook.wire.messages import (
    AssistantMessage,
    TextBlock,
    ToolCallBlock,
    tool_text,
    user_text,
)
from tests.benchmarks._common import REPO, cpu_and_wall  # noqa: E402


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


def cost_per_event(history: int, window: int, repeats: int, tmp: Path) -> tuple[float, float]:
    """Best (CPU µs, wall µs) per event over ``repeats`` windows of ``window`` appended events."""
    session = Session("s_bench", cwd="/ws")
    log = SessionLog(session, tmp / f"h{history}.jsonl")
    repairer = PairingRepairer()
    events = workload(session)
    while len(session) < history:
        session.append(next(events))
    repairer.repair(session.derive_messages())
    log.flush()
    best_cpu = best_wall = float("inf")
    for _ in range(repeats):
        c0, t0 = cpu_and_wall()
        for _ in range(window):
            session.append(next(events))
            repairer.repair(session.derive_messages())
        c1, t1 = cpu_and_wall()
        best_cpu = min(best_cpu, (c1 - c0) / window)
        best_wall = min(best_wall, (t1 - t0) / window)
        log.flush()
    log.close()
    return best_cpu * 1e6, best_wall * 1e6


def make_log(home: Path, n: int) -> None:
    session = Session("s_big", cwd="/ws")
    log = SessionLog(session, home / "sessions" / "s_big.jsonl")
    events = workload(session)
    while len(session) < n:
        session.append(next(events))
    session.append(TurnStart(turn=10**6))  # leave the last turn open: crash repair runs too
    log.close()


RESUME = """
import sys
sys.path.insert(0, {repo!r})
from dsh_notebook.session import SessionStore
from tests.benchmarks._common import cpu_and_wall, peak_rss_mb, vm_hwm_mb
n, wall, cpu = 0, 0.0, 0.0
if {do!r}:
    c0, t0 = cpu_and_wall()
    s = SessionStore({home!r}).resume("s_big")
    c1, t1 = cpu_and_wall()
    wall, cpu, n = t1 - t0, c1 - c0, len(s)
print(wall, cpu, n, peak_rss_mb(), vm_hwm_mb())
"""


def resume_run(home: Path, do: bool) -> tuple[float, float, int, float, float]:
    code = RESUME.format(repo=str(REPO), home=str(home), do=do)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    wall, cpu, n, maxrss, hwm = out.stdout.split()
    return float(wall), float(cpu), int(n), float(maxrss), float(hwm)


def bench_resume(tmp: Path, runs: int) -> tuple[float, float, float]:
    home = tmp / "home"
    subprocess.run(
        [sys.executable, __file__, "--make-log", str(home), "100000"], check=True
    )  # in a child, so this process stays small for the fresh processes it starts
    size = (home / "sessions" / "s_big.jsonl").stat().st_size
    base = [resume_run(home, False) for _ in range(2)]
    base_rss, base_hwm = min(b[3] for b in base), min(b[4] for b in base)
    res = [resume_run(home, True) for _ in range(runs)]
    wall, cpu = min(r[0] for r in res), min(r[1] for r in res)
    rss = max(r[3] for r in res) - base_rss
    hwm = max(r[4] for r in res) - base_hwm
    print(
        f"resume of {res[0][2]:,} events ({size / 1e6:.1f} MB log), best of {runs}: "
        f"wall {wall:.3f} s (all: {', '.join(f'{r[0]:.3f}' for r in res)}), CPU {cpu:.3f} s"
    )
    print(
        f"resume peak RSS: +{rss:.0f} MB by ru_maxrss over a {base_rss:.0f} MB baseline; "
        f"+{hwm:.0f} MB by VmHWM over {base_hwm:.0f} MB  (targets < 1 s, < 300 MB)"
    )
    return wall, cpu, max(rss, hwm)


def main() -> int:
    if sys.argv[1:2] == ["--make-log"]:
        make_log(Path(sys.argv[2]), int(sys.argv[3]))
        return 0
    quick = "--quick" in sys.argv
    print(f"load average at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        wall, cpu, mb = bench_resume(tmp, 1 if quick else 3)
        sizes = [10, 1_000, 10_000, 100_000]
        window, repeats = (500, 3) if quick else (2_000, 5)
        costs = {n: cost_per_event(n, window, repeats, tmp) for n in sizes}
    for n, (c, w) in costs.items():
        print(f"append+derive+repair at {n:>7,} events of history: {c:6.2f} µs/event CPU ({w:6.2f} wall)")
    ratio = costs[100_000][0] / costs[10][0]
    ratio_wall = costs[100_000][1] / costs[10][1]
    print(f"ratio 100k/10: {ratio:.2f} CPU, {ratio_wall:.2f} wall  (target <= 1.5)")
    print(f"load average at end: {os.getloadavg()[0]:.2f}")
    ok = ratio <= 1.5 and min(wall, cpu) < 1.0 and mb < 300
    summary = {"costs_us_cpu": {n: c[0] for n, c in costs.items()}, "ratio": ratio,
               "resume_wall_s": wall, "resume_cpu_s": cpu, "resume_mb": mb, "ok": ok}  # fmt: skip
    print(json.dumps(summary))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
