"""The saved sessions the widget benchmark opens (tests/benchmarks/bench_widget.py), appended
through the real Session (every rule checked) and written by SessionLog."""

from __future__ import annotations

import json
from pathlib import Path

from dsh_notebook.session.writer import SessionLog
from dsh_notebook.session.session import Session
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
    s = Session(path.stem, cwd="/workspace/demo")
    log = SessionLog(s, path)
    turn = 0
    prev: tuple[int, int] | None = None  # (last request seq, last answer seq)
    while len(s) < n_events - 12:
        turn += 1
        s.append(TurnStart(turn=turn))
        s.append(StepStart(turn=turn, step=1))
        u = s.append(UserMessageEvent(turn=turn, message=user_text(f"turn {turn}: read file_{turn}.txt")))
        if chained and prev is not None:
            first = s.append(RequestFrozen(turn=turn, step=1, attempt=1, provider="script", model="bench",
                                           message_seqs=(prev[1], u.seq), base_request_seq=prev[0]))
        else:
            first = s.append(RequestFrozen(turn=turn, step=1, attempt=1, provider="script", model="bench",
                                           message_seqs=tuple(s.derive_messages().seqs)))
        cid = f"c{turn}"
        a = s.append(AssistantMessageEvent(turn=turn, step=1, message=AssistantMessage(content=(
            TextBlock(text="Reading it."), ToolCallBlock(id=cid, name="read", arguments=json.dumps({"file_path": f"file_{turn}.txt"}))))))
        c = s.append(ToolCall(turn=turn, step=1, call_id=cid, name="read", arguments=json.dumps({"file_path": f"file_{turn}.txt"})))
        r = s.append(ToolResult(turn=turn, step=1, message=tool_text(cid, f"line {turn}\n" * 20), source_event_seqs=(c.seq,)))
        s.append(StepEnd(turn=turn, step=1))
        s.append(StepStart(turn=turn, step=2))
        second = s.append(RequestFrozen(turn=turn, step=2, attempt=1, provider="script", model="bench",
                               message_seqs=(a.seq, r.seq), base_request_seq=first.seq)
                 if "base_request_seq" in RequestFrozen.model_fields else
                 RequestFrozen(turn=turn, step=2, attempt=1, provider="script", model="bench",
                               message_seqs=tuple(s.derive_messages().seqs)))
        answer = s.append(AssistantMessageEvent(turn=turn, step=2, message=AssistantMessage(content=(TextBlock(text=f"File {turn} has 20 lines."),))))
        s.append(TurnEnd(turn=turn, reason=TurnEndReason(kind="completed")))
        prev = (second.seq, answer.seq)
    while len(s) < n_events:
        s.append(StepStart(turn=turn, step=len(s)))
    log.flush()
    log.close()
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
