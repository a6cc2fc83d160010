#!/usr/bin/env python3
"""Agent-loop harness overhead per step: dsh_notebook vs pydantic-ai and openai-agents, same run.

Method (the same as ``/work/shared/bench/peers_bench.py``, whose peers run in this run as
subprocesses): a *step* = one model call returning one tool call + running that tool + feeding
the result into the next call. The model is a zero-latency fake (here a scripted adapter that
yields the normalized chunks a real adapter yields; ``pace=0``), the tool a no-op
(``noop {"i":1}`` → ``"ok"``). A run is N model calls: N-1 tool calls, then ``"done"``. History
is pre-seeded with H messages cycling user text → assistant tool call → tool result → assistant
text (for dsh_notebook that is ≈1.25·H events: each call also has its ``tool/call`` event).

dsh_notebook runs the full real loop: Inbox, Turn/Step, PromptAssembly from the Scope, both
projections, ``build_request`` (header, derive, pairing repair, ``request/frozen``), the stream
assembler, the real ToolRuntime + scheduler, and **persistence with a flush (write + fsync)
before every model request** to a JSONL log on /dev/shm.

    python tests/benchmarks/bench_loop.py [--steps 50] [--history 8,10000] [--reps 5]

History sizes are message counts and multiples of 4, so the history never ends inside a tool-call
cycle (pydantic-ai refuses such a history): 8 messages = 10 events, 10,000 messages = 12,500 events.

Needs ``pydantic-ai-slim`` and ``openai-agents`` in the environment for the peers (benchmark
only; not package dependencies). Prints one JSON line per measurement, then a table with the
ratios: ours / faster peer (target ≤ 0.10, issue 25 item 7) and ours at the largest / smallest
history (≤ 1.5). Our JSON row's ``breakdown_us_per_step`` says where a step's time goes
(assembly, freeze, persist, fold, stream, tools, other), from one extra instrumented run.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from time import perf_counter

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
PEERS_SCRIPT = Path(os.environ.get("DSH_PEERS_BENCH", "/work/shared/bench/peers_bench.py"))
TOOL_ARGS = '{"i":1}'
TARGET = 0.10  # ours / the faster peer, per step (issue 25 item 7)


class Probe:
    def __init__(self, steps: int) -> None:
        self.steps, self.gid = steps, 0
        self.reset()

    def reset(self) -> None:
        self.calls = self.tool_calls = 0
        self.call_ts: list[float] = []
        self.model_self = 0.0
        self.last_input_len = 0


def seed_events(history: int) -> list:
    from dsh_notebook.wire.events import (
        AssistantMessageEvent,
        ToolCall,
        ToolResult,
        UserMessageEvent,
    )
    from dsh_notebook.wire.messages import (
        AssistantMessage,
        TextBlock,
        ToolCallBlock,
        tool_text,
        user_text,
    )

    events: list = []
    n = 0
    for k in range(history // 4 + 1):
        cid = f"hist_{k}"
        for kind in ("user", "call", "result", "text"):
            if n >= history:
                break
            n += 1
            if kind == "user":
                events.append(UserMessageEvent(turn=k, message=user_text(f"user message number {k}, please call the tool")))
            elif kind == "call":
                block = ToolCallBlock(id=cid, name="noop", arguments=TOOL_ARGS)
                events.append(AssistantMessageEvent(turn=k, step=1, message=AssistantMessage(content=(block,))))
                events.append(ToolCall(turn=k, step=1, call_id=cid, name="noop", arguments=TOOL_ARGS))
            elif kind == "result":
                events.append(ToolResult(turn=k, step=1, message=tool_text(cid, "ok"), source_event_seqs=(len(events) - 1,)))
            else:
                text = TextBlock(text=f"assistant reply number {k}: the tool said ok")
                events.append(AssistantMessageEvent(turn=k, step=2, message=AssistantMessage(content=(text,))))
    return [e.model_copy(update={"seq": i, "time": 1_700_000_000_000 + i}) for i, e in enumerate(events)]


def measure_ours(steps: int, history: int, reps: int, warmup: int) -> dict:
    from pydantic import BaseModel

    from dsh_notebook.agent.agent import Agent
    from dsh_notebook.agent.config import AgentConfig
    from dsh_notebook.models.base import (
        BlockEnd,
        BlockStart,
        Finish,
        ModelRequest,
        TextDelta,
        ToolCallDelta,
    )
    from dsh_notebook.session.session import Session
    from dsh_notebook.session.writer import SessionLog
    from dsh_notebook.tools.base import Tool, ToolContext, ToolOutput
    from dsh_notebook.tools.registry import ToolRegistry
    from dsh_notebook.wire.messages import TextBlock, ToolCallBlock

    probe = Probe(steps)

    class BenchModel:
        """Zero-latency scripted adapter: N-1 tool calls, then "done" (pace=0)."""

        provider = "script"
        base_url = None

        async def stream(self, request: ModelRequest):  # type: ignore[no-untyped-def]
            t0 = perf_counter()
            probe.call_ts.append(t0)
            probe.calls += 1
            probe.last_input_len = len(request.messages)
            probe.gid += 1
            if probe.calls < steps:
                cid = f"call_{probe.gid}"
                chunks = [BlockStart(0, "tool-call", id=cid, name="noop"), ToolCallDelta(0, cid, TOOL_ARGS, name="noop"),
                          BlockEnd(0, ToolCallBlock(id=cid, name="noop", arguments=TOOL_ARGS)), Finish("tool-calls")]
            else:
                chunks = [BlockStart(0, "text"), TextDelta(0, "done"), BlockEnd(0, TextBlock(text="done")), Finish("stop")]
            probe.model_self += perf_counter() - t0
            for c in chunks:
                yield c

    class NoopArgs(BaseModel):
        i: int

    async def noop(args: NoopArgs, ctx: ToolContext) -> ToolOutput:
        probe.tool_calls += 1
        return ToolOutput("ok")

    registry = ToolRegistry([Tool("noop", "No-op tool.", NoopArgs, noop, concurrency_safe=True, timeout_s=None)])
    model = BenchModel()
    seed = seed_events(history)
    shm = Path("/dev/shm") if Path("/dev/shm").is_dir() else Path(tempfile.gettempdir())
    tmp = Path(tempfile.mkdtemp(prefix="dsh-bench-", dir=shm))
    workspace = tmp / "ws"
    workspace.mkdir()
    run_no = 0

    def fresh_agent() -> tuple[Agent, SessionLog]:
        nonlocal run_no
        run_no += 1
        session = Session.restore(f"s_bench{run_no}", seed, cwd=str(workspace), mark_seed=bool(seed))
        log = SessionLog(session, tmp / f"s_bench{run_no}.jsonl")
        log.flush()
        agent = Agent(session, AgentConfig(model="script:bench"), adapter_for=lambda _m: model, tools=registry,
                      flush=log.flush, policy_mode="auto")
        return agent, log

    async def run_once(agent: Agent) -> None:
        agent.followup("go")
        await agent.wait_idle()
        end = agent.session.events[-1]
        assert end.type == "turn/end" and end.reason.kind == "completed", end  # type: ignore[union-attr]

    async def timed_run() -> float:
        """One turn on a fresh agent and log, its wall time in seconds."""
        agent, log = fresh_agent()
        probe.reset()
        gc.collect()
        t0 = perf_counter()
        await run_once(agent)
        dt = perf_counter() - t0
        log.close()
        return dt

    async def main() -> tuple[list[float], list[float], list[float], list[float], list[float]]:
        warm, per_step, gaps, fixed, self_t = [], [], [], [], []
        for rep in range(warmup + reps):
            dt = await timed_run()
            if rep < warmup:
                warm.append(dt / steps * 1e6)
                continue
            assert probe.calls == steps and probe.tool_calls == steps - 1, (probe.calls, probe.tool_calls)
            g = [b - a for a, b in zip(probe.call_ts, probe.call_ts[1:], strict=False)]
            gaps.extend(g)
            per_step.append(dt / steps * 1e6)
            fixed.append((dt - sum(g)) * 1e6)
            self_t.append(probe.model_self / steps * 1e6)
        return warm, per_step, gaps, fixed, self_t

    async def instrumented() -> dict[str, float]:
        """More runs with the stages timed (exclusive µs per step, the median of ``reps`` runs;
        not part of the figures above: the wrappers cost time too)."""
        rows: list[dict[str, float]] = []
        for _ in range(reps):
            timers = Breakdown()
            undo = timers.install()
            try:
                total = await timed_run()
            finally:
                undo()
            rows.append(timers.per_step(total, steps, probe.model_self))
        return {k: round(statistics.median(r[k] for r in rows), 1) for k in rows[0]}

    try:
        warm, per_step, gaps, fixed, self_t = asyncio.run(main())
        breakdown = asyncio.run(instrumented())
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    gaps_us = sorted(x * 1e6 for x in gaps)
    return {
        "harness": "dsh_notebook", "mode": "stream+persist", "peer": "dsh_notebook", "version": "0.1.0",
        "steps": steps, "history": history, "history_events": len(seed), "reps": reps,
        "per_step_us": round(statistics.median(per_step), 1),
        "per_step_us_reps": [round(x, 1) for x in per_step],
        "step_us_median": round(statistics.median(gaps_us), 1),
        "step_us_p90": round(gaps_us[int(0.9 * (len(gaps_us) - 1))], 1),
        "run_fixed_us": round(statistics.median(fixed), 1),
        "model_self_us": round(statistics.median(self_t), 2),
        "warmup_per_step_us": round(warm[0], 1) if warm else None,
        "last_input_len": probe.last_input_len, "tool_calls": probe.tool_calls,
        "persistence": f"JSONL + fsync before every request, on {shm}",
        "breakdown_us_per_step": breakdown,
    }


class Breakdown:
    """Exclusive time per stage of a step, from wrappers installed for one instrumented run:
    ``assembly`` (claim input, scope hooks, prompt assembly, runtime-context projection),
    ``freeze`` (derive the history, repair, the window fit, ``request/frozen``), ``persist`` (the
    loop's wait for the flush: write + fsync on a worker thread, and the hand-off), ``fold`` (``Session.append``: validate, commit,
    fold the surface), ``stream`` (chunks → blocks, less the fake model's own time), ``tools``
    (the batch: runtime, policy, scheduler), ``other`` (the driver, hooks, asyncio)."""

    def __init__(self) -> None:
        import threading

        self.spent: dict[str, float] = {}
        self.local = threading.local()

    def wrap(self, name: str, fn):  # type: ignore[no-untyped-def]
        import functools
        import inspect

        def enter() -> float:
            stack = self.local.__dict__.setdefault("stack", [])
            stack.append(0.0)
            return perf_counter()

        def leave(t0: float) -> None:
            dt = perf_counter() - t0
            stack = self.local.stack
            inner = stack.pop()
            self.spent[name] = self.spent.get(name, 0.0) + dt - inner
            if stack:
                stack[-1] += dt

        if inspect.iscoroutinefunction(fn):
            @functools.wraps(fn)
            async def awrapped(*a, **k):  # type: ignore[no-untyped-def]
                t0 = enter()  # an await inside may interleave other work: fine for a sequential loop
                try:
                    return await fn(*a, **k)
                finally:
                    leave(t0)
            return awrapped

        @functools.wraps(fn)
        def wrapped(*a, **k):  # type: ignore[no-untyped-def]
            t0 = enter()
            try:
                return fn(*a, **k)
            finally:
                leave(t0)
        return wrapped

    def install(self):  # type: ignore[no-untyped-def]
        from dsh_notebook.agent import driver, model_step, request, turn
        from dsh_notebook.session import session

        targets = [(driver.AgentDriver, "durable", "persist"), (turn, "pre_step", "assembly"), (request.RequestBuilder, "derive", "freeze"),
                   (request.RequestBuilder, "freeze", "freeze"), (model_step, "fit_request", "freeze"),
                   (session.Session, "append", "fold"), (model_step, "run_attempt", "stream"),
                   (turn, "execute_tool_calls", "tools")]
        saved = [(obj, attr, getattr(obj, attr)) for obj, attr, _ in targets]
        for obj, attr, name in targets:
            setattr(obj, attr, self.wrap(name, getattr(obj, attr)))

        def undo() -> None:
            for obj, attr, fn in saved:
                setattr(obj, attr, fn)
        return undo

    def per_step(self, total: float, steps: int, model_self: float) -> dict[str, float]:
        spent = dict(self.spent)
        spent["stream"] = spent.get("stream", 0.0) - model_self  # the fake model's own time is not ours
        spent["other"] = total - sum(spent.values()) - model_self
        order = ("assembly", "freeze", "persist", "fold", "stream", "tools", "other")
        return {k: round(spent.get(k, 0.0) / steps * 1e6, 1) for k in order}


def run_sub(cmd: list[str]) -> list[dict]:
    cp = subprocess.run(cmd, capture_output=True, text=True)
    if cp.returncode != 0:
        print(json.dumps({"cmd": cmd[2:], "error": cp.stderr.strip().splitlines()[-3:]}), flush=True)
        return []
    return [json.loads(line) for line in cp.stdout.splitlines() if line.startswith("{")]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--history", default="8,10000")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--peers", default="pydantic-ai,openai-agents")
    ap.add_argument("--inproc", action="store_true", help="measure dsh_notebook only, in this process")
    a = ap.parse_args()
    histories = [int(h) for h in a.history.split(",") if h.strip()]
    if a.inproc:
        for h in histories:
            print(json.dumps(measure_ours(a.steps, h, a.reps, a.warmup)), flush=True)
        return
    common = ["--steps", str(a.steps), "--reps", str(a.reps), "--warmup", str(a.warmup)]
    results: list[dict] = []
    for h in histories:
        rows = run_sub([sys.executable, __file__, "--inproc", "--history", str(h), *common])
        if PEERS_SCRIPT.exists():
            for p in [p for p in a.peers.split(",") if p]:
                rows += run_sub([sys.executable, str(PEERS_SCRIPT), "--inproc", "--peers", p, "--history", str(h), *common])
        for r in rows:
            print(json.dumps(r), flush=True)
        results += rows
    report(results, histories)


def report(results: list[dict], histories: list[int]) -> None:
    print(f"\n{'harness':<28}{'history':>8}{'events':>8}{'µs/step':>10}{'step med':>10}{'growth':>8}")
    by: dict[str, dict[int, dict]] = {}
    for r in results:
        by.setdefault(f"{r['peer']} {r.get('version', '')}", {})[r["history"]] = r
    for name, rows in by.items():
        base = rows[min(rows)]["per_step_us"]
        for h in sorted(rows):
            r = rows[h]
            print(f"{name:<28}{h:>8}{r.get('history_events', '-')!s:>8}{r['per_step_us']:>10.1f}"
                  f"{r['step_us_median']:>10.1f}{r['per_step_us'] / base:>7.2f}x")
    ours = next((rows for name, rows in by.items() if name.startswith("dsh_notebook")), {})
    peers = {n: rows for n, rows in by.items() if not n.startswith("dsh_notebook")}
    print()
    for h in histories:
        if h not in ours:
            continue
        faster = min((rows[h]["per_step_us"], n) for n, rows in peers.items() if h in rows) if peers else None
        if faster:
            ratio = ours[h]["per_step_us"] / faster[0]
            verdict = "OK" if ratio <= TARGET else "over target"
            print(f"history {h}: dsh_notebook {ours[h]['per_step_us']:.1f} µs/step = {ratio:.3f} × the faster "
                  f"peer ({faster[1]}, {faster[0]:.1f} µs)  [target ≤ {TARGET}: {verdict}]")
            if ours[h].get("breakdown_us_per_step"):
                print(f"  where a step goes (µs): {ours[h]['breakdown_us_per_step']}")
            med = min((rows[h]["step_us_median"], n) for n, rows in peers.items() if h in rows)
            print(f"  median gap between model calls: {ours[h]['step_us_median']:.1f} µs vs {med[0]:.1f} µs "
                  f"({med[1]}) = {ours[h]['step_us_median'] / med[0]:.3f}×")
    if len(ours) >= 2:
        lo, hi = min(ours), max(ours)
        g = ours[hi]["per_step_us"] / ours[lo]["per_step_us"]
        print(f"dsh_notebook growth {hi}/{lo} history: {g:.2f}×  [target ≤ 1.5: {'OK' if g <= 1.5 else 'over target'}]")
    if ours:
        print(f"persistence: {next(iter(ours.values()))['persistence']}")


if __name__ == "__main__":
    main()
