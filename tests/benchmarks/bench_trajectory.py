"""Benchmark of the trajectory figures and the search index on large sessions.

    python tests/benchmarks/bench_trajectory.py [--quick]

Builds a session of realistic steps (user prompt, request/frozen, assistant text + tool call with
usage and a stream record, tool/call, tool/result, step and turn bookkeeping) at 1k and 100k
events and times: ``session_stats`` (the one fold behind ``show --stats``, ``TurnResult`` and the
OTel export) — as µs per event and the ratio 100k / 1k (target ≤ 2.5: linear, allowing for cache effects) — and the first
build of the FTS5 search index of the saved 100k-event log plus one search (target < 10 s).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repo, run as a script

from dsh_notebook.analysis.stats import session_stats  # noqa: E402
from dsh_notebook.observe.search_view import search_sessions  # noqa: E402
from dsh_notebook.session import Session  # noqa: E402
from dsh_notebook.session.store import SessionStore  # noqa: E402
from dsh_notebook.wire.events import (  # noqa: E402
    AssistantMessageEvent,
    RequestFrozen,
    StepEnd,
    StepStart,
    StreamRun,
    ToolCall,
    ToolResult,
    TurnEnd,
    TurnEndReason,
    TurnStart,
    Usage,
    UserMessageEvent,
)
from dsh_notebook.wire.messages import (  # noqa: E402
    AssistantMessage,
    TextBlock,
    ToolCallBlock,
    tool_text,
    user_text,
)


def build(session: Session, n_events: int) -> None:
    clock = [1_700_000_000_000]

    def at() -> int:
        clock[0] += 7
        return clock[0]

    turn = 0
    while len(session.events) < n_events:
        turn += 1
        session.append(TurnStart(turn=turn), time=at())
        session.append(UserMessageEvent(turn=turn, message=user_text(f"prompt {turn} about topic{turn % 97}")), time=at())
        for step in (1, 2):
            session.append(StepStart(turn=turn, step=step), time=at())
            session.append(RequestFrozen(turn=turn, step=step, attempt=1, provider="deepseek", model="deepseek-chat",
                                         message_seqs=()), time=at())
            usage = Usage(input_tokens=900, output_tokens=40, cache_read_tokens=800)
            run = StreamRun(kind="text", index=0, time0=at(), dt=(1, 1), parts=("a", "b", "c"))
            if step == 1:
                call = ToolCallBlock(id=f"c{turn}", name="read", arguments='{"file_path": "a.txt"}')
                msg = AssistantMessage(content=(TextBlock(text="reading"), call))
                session.append(AssistantMessageEvent(turn=turn, step=step, message=msg, usage=usage, stream=(run,)), time=at())
                seq = session.append(ToolCall(turn=turn, step=step, call_id=call.id, name="read",
                                              arguments=call.arguments), time=at()).seq
                session.append(ToolResult(turn=turn, step=step, message=tool_text(call.id, f"result word{turn}"),
                                          source_event_seqs=(seq,)), time=at())
            else:
                msg = AssistantMessage(content=(TextBlock(text=f"answer {turn}"),))
                session.append(AssistantMessageEvent(turn=turn, step=step, message=msg, usage=usage, stream=(run,)), time=at())
            session.append(StepEnd(turn=turn, step=step), time=at())
        session.append(TurnEnd(turn=turn, reason=TurnEndReason(kind="completed")), time=at())


def time_stats(session: Session, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        stats = session_stats(session.events)
        best = min(best, time.perf_counter() - t0)
    assert stats.totals.requests == sum(1 for e in session.events if isinstance(e, RequestFrozen))
    return best


def main() -> int:
    quick = "--quick" in sys.argv
    big = 20_000 if quick else 100_000
    small_s = Session("s_small")
    build(small_s, 1_000)
    small = time_stats(small_s, 20) / len(small_s.events) * 1e6
    with tempfile.TemporaryDirectory() as home:
        store = SessionStore(home)
        session = store.create("/ws")
        build(session, big)
        store.close_all()
        large = time_stats(session, 3) / len(session.events) * 1e6
        ratio = large / small
        print(f"session_stats: {small:.2f} µs/event at {len(small_s.events)} events, {large:.2f} µs/event at "
              f"{len(session.events)} events (ratio {ratio:.2f}, target ≤ 2.5); "
              f"{large * len(session.events) / 1000:.0f} ms for the whole session")
        t0 = time.perf_counter()
        found = search_sessions(home, "word7")
        build_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        search_sessions(home, "topic5")
        again_s = time.perf_counter() - t0
        print(f"search index: first build + search of {len(session.events)} events {build_s:.2f} s (target < 10 s); "
              f"a search when current {again_s * 1000:.0f} ms; {len(found[0]['matches'])} match(es)")
    return 0 if ratio <= 2.5 and build_s < 10 else 1


if __name__ == "__main__":
    raise SystemExit(main())
