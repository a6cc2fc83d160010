"""The saved sessions the widget benchmark opens (tests/benchmarks/bench_widget.py), appended
through the real Session (every rule checked) and written by SessionLog."""

from __future__ import annotations

from pathlib import Path

from dsh_notebook.session.session import Session
from dsh_notebook.session.writer import SessionLog
from dsh_notebook.testing.logs import LogBuilder
from dsh_notebook.wire.events import (
    ApprovalAsked,
    ApprovalDecided,
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
from dsh_notebook.wire.messages import (
    AssistantMessage,
    TextBlock,
    ToolCallBlock,
    tool_text,
    user_text,
)


def write_log(path: Path, n_events: int, chained: bool = False) -> Path:
    """A realistic log: turns of prompt → request → assistant tool call → call → result → request
    → answer, appended through the real Session (all rules checked) and written by SessionLog.
    ``chained``: every request extends the previous one (``baseRequestSeq``, as the agent's
    RequestBuilder freezes them) instead of the first step of each turn listing the whole history
    (which makes the log grow with the square of its length: 100k events would be 800 MB)."""
    with LogBuilder(path.stem, cwd="/workspace/demo", path=path) as b:
        while len(b.session) < n_events - 12:
            b.file_turn(lines=20, model="bench", chained=chained, step2_chained=True, end_step2=False)
        while len(b.session) < n_events:
            b.append(StepStart(turn=b.turn, step=len(b.session)))
    return path


def write_wide_log(path: Path, n_requests: int) -> Path:
    """One turn of ``n_requests`` request attempts, each streaming (first byte, first token,
    stream) into a tool call (half of them waiting for an approval): the waterfall's worst case."""
    s = Session(path.stem, cwd="/workspace/demo")
    log = SessionLog(s, path)
    t = 1_800_000_000_000
    s.append(TurnStart(turn=1), time=t)
    u = s.append(UserMessageEvent(turn=1, message=user_text("many steps")), time=t)
    prev: tuple[int, list[int]] | None = None
    for step in range(1, n_requests + 1):
        s.append(StepStart(turn=1, step=step), time=t)
        seqs = [u.seq] if prev is None else prev[1]
        req = s.append(RequestFrozen(turn=1, step=step, attempt=1, provider="script", model="bench", message_seqs=tuple(seqs),
                                     base_request_seq=prev[0] if prev else None), time=t)
        cid = f"c{step}"
        a = s.append(AssistantMessageEvent(
            turn=1, step=step, first_byte_time=t + 80, usage=Usage(input_tokens=100 + step, output_tokens=20),
            stream=(StreamRun(kind="text", index=0, time0=t + 150), StreamRun(kind="tool-call", index=1, time0=t + 200, id=cid, name="read")),
            message=AssistantMessage(content=(TextBlock(text="next"), ToolCallBlock(id=cid, name="read", arguments="{}")))), time=t + 400)
        c = s.append(ToolCall(turn=1, step=step, call_id=cid, name="read", arguments="{}"), time=t + 410)
        t += 410
        if step % 2:
            s.append(ApprovalAsked(call_id=cid, name="read"), time=t + 5)
            s.append(ApprovalDecided(call_id=cid, name="read", decision="allow", by="user"), time=t + 600)
            t += 600
        r = s.append(ToolResult(turn=1, step=step, message=tool_text(cid, "ok"), source_event_seqs=(c.seq,)), time=t + 100)
        t += 110
        s.append(StepEnd(turn=1, step=step), time=t)
        prev = (req.seq, [a.seq, r.seq])
    s.append(TurnEnd(turn=1, reason=TurnEndReason(kind="completed")), time=t + 1)
    log.flush()
    log.close()
    return path
