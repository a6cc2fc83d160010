"""Session logs for tests and benchmarks, built through the real :class:`~dsh_notebook.session.
session.Session` (every rule of the log is checked as the events are appended) and, given a path,
written by the real :class:`~dsh_notebook.session.writer.SessionLog`::

    with LogBuilder("s_demo", path=tmp_path / "s_demo.jsonl") as b:
        for _ in range(3):
            b.file_turn()            # prompt → request → read call → result → request → answer
    events = load_log(b.path).events

:meth:`LogBuilder.tool_turn` is the short form (prompt, one step whose tool calls are answered, the
turn's end) for tests about pairing and repair.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType

from ..session.session import Session, now_ms
from ..session.writer import SessionLog
from ..wire import events as ev
from ..wire.messages import AssistantMessage, TextBlock, ToolCallBlock, tool_text, user_text


def ticking_clock(start: int = 1_700_000_000_000) -> Callable[[], int]:
    """A clock for a Session that advances one millisecond a read (deterministic times)."""
    counter = itertools.count(start)
    return lambda: next(counter)


class LogBuilder:
    """Appends whole turns to a new session (or to ``session``); ``path``: its log is written there
    (``close()``). Turns are numbered from 1 unless a call names its ``turn``."""

    def __init__(self, session_id: str = "s_test", *, cwd: str = "/ws", path: str | Path | None = None,
                 clock: Callable[[], int] | None = None, created_at: int | None = None,
                 session: Session | None = None) -> None:
        if session is None:
            session = Session(session_id, cwd=cwd, created_at=created_at, clock=clock or now_ms)
        self.session = session
        self.path = Path(path) if path is not None else None
        self.log = SessionLog(self.session, self.path) if self.path is not None else None
        self.turn = 0
        self._prev: tuple[int, int] | None = None  # (last request seq, last answer seq)

    def append(self, event: ev.AnyEvent) -> ev.AnyEvent:
        return self.session.append(event)

    def file_turn(self, *, lines: int = 5, provider: str = "script", model: str = "x", chained: bool = False,
                  step2_chained: bool | None = None, result: str | None = None, end_step2: bool = True,
                  turn: int | None = None) -> None:
        """One turn of prompt → request → assistant text + ``read`` call → call → result → request →
        answer ("File N has L lines."). ``chained``: the first request extends the previous turn's
        (``baseRequestSeq``) instead of listing the whole history; ``step2_chained`` (default: the
        same): the second request extends the first. ``result``: the tool's text (else L lines)."""
        s = self.session
        turn = self.turn = self.turn + 1 if turn is None else turn
        s.append(ev.TurnStart(turn=turn))
        s.append(ev.StepStart(turn=turn, step=1))
        u = s.append(ev.UserMessageEvent(turn=turn, message=user_text(f"turn {turn}: read file_{turn}.txt")))
        prev = self._prev if chained else None
        first = s.append(ev.RequestFrozen(
            turn=turn, step=1, attempt=1, provider=provider, model=model,
            message_seqs=(prev[1], u.seq) if prev else tuple(s.derive_messages().seqs),
            base_request_seq=prev[0] if prev else None))  # fmt: skip
        cid, args = f"c{turn}", json.dumps({"file_path": f"file_{turn}.txt"})
        a = s.append(ev.AssistantMessageEvent(turn=turn, step=1, message=AssistantMessage(
            content=(TextBlock(text="Reading it."), ToolCallBlock(id=cid, name="read", arguments=args)))))
        c = s.append(ev.ToolCall(turn=turn, step=1, call_id=cid, name="read", arguments=args))
        text = result if result is not None else f"line {turn}\n" * lines
        r = s.append(ev.ToolResult(turn=turn, step=1, message=tool_text(cid, text), source_event_seqs=(c.seq,)))
        s.append(ev.StepEnd(turn=turn, step=1))
        s.append(ev.StepStart(turn=turn, step=2))
        extend = chained if step2_chained is None else step2_chained
        second = s.append(ev.RequestFrozen(
            turn=turn, step=2, attempt=1, provider=provider, model=model,
            message_seqs=(a.seq, r.seq) if extend else tuple(s.derive_messages().seqs),
            base_request_seq=first.seq if extend else None))  # fmt: skip
        answer = s.append(ev.AssistantMessageEvent(turn=turn, step=2, message=AssistantMessage(
            content=(TextBlock(text=f"File {turn} has {lines} lines."),))))
        if end_step2:
            s.append(ev.StepEnd(turn=turn, step=2))
        s.append(ev.TurnEnd(turn=turn, reason=ev.TurnEndReason(kind="completed")))
        self._prev = (second.seq, answer.seq)

    def tool_turn(self, call_ids: Sequence[str] = ("c1",), *, prompt: str = "do it", name: str = "read",
                  answer: bool = True, end: bool = True, turn: int | None = None) -> None:
        """A turn: prompt, one step whose assistant message calls ``call_ids`` (logged and, with
        ``answer``, answered ``result of <id>``); with ``end``, the step's and the turn's end."""
        s = self.session
        turn = self.turn = self.turn + 1 if turn is None else turn
        s.append(ev.TurnStart(turn=turn))
        s.append(ev.UserMessageEvent(turn=turn, message=user_text(prompt)))
        s.append(ev.StepStart(turn=turn, step=1))
        blocks = tuple(ToolCallBlock(id=c, name=name, arguments='{"file_path":"a.txt"}') for c in call_ids)
        s.append(ev.AssistantMessageEvent(turn=turn, step=1, message=AssistantMessage(content=blocks)))
        if answer:
            for cid in call_ids:
                call = s.append(ev.ToolCall(turn=turn, step=1, call_id=cid, name=name, arguments="{}"))
                s.append(ev.ToolResult(turn=turn, step=1, message=tool_text(cid, f"result of {cid}"),
                                    source_event_seqs=(call.seq,)))
        if end:
            s.append(ev.StepEnd(turn=turn, step=1))
            s.append(ev.TurnEnd(turn=turn, reason=ev.TurnEndReason(kind="completed")))

    def close(self) -> Path | None:
        """Write what is queued and close the log (a no-op without ``path``)."""
        if self.log is not None:
            self.log.flush()
            self.log.close()
        return self.path

    def __enter__(self) -> LogBuilder:
        return self

    def __exit__(self, et: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()


__all__ = ["LogBuilder", "ticking_clock"]
