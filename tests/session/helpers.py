"""Builders for session tests: real Sessions, and raw log lines that bypass the Session's rules
(to stand for logs written by a buggy or dead process)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dsh_notebook.session import Session
from dsh_notebook.testing.logs import LogBuilder, ticking_clock
from dsh_notebook.wire.messages import (
    AssistantMessage,
    TextBlock,
    ToolCallBlock,
)

REPO = Path(__file__).resolve().parents[2]


def new_session(session_id: str = "s_test") -> Session:
    return Session(session_id, cwd="/ws", created_at=1_700_000_000_000, clock=ticking_clock())


def assistant(*call_ids: str, text: str = "", name: str = "read") -> AssistantMessage:
    blocks: list[Any] = [TextBlock(text=text)] if text else []
    blocks += [ToolCallBlock(id=c, name=name, arguments='{"file_path":"a.txt"}') for c in call_ids]
    return AssistantMessage(content=tuple(blocks))


def tool_turn(
    session: Session,
    turn: int,
    call_ids: Sequence[str] = ("c1",),
    *,
    prompt: str = "do it",
    answer: bool = True,
    end: bool = True,
) -> None:
    """A turn: prompt, one step whose assistant message calls tools (logged and answered)."""
    LogBuilder(session=session).tool_turn(call_ids, prompt=prompt, answer=answer, end=end, turn=turn)


class RawLog:
    """Writes event dicts as JSON lines with dense seqs, checking nothing (a broken writer)."""

    def __init__(self, session_id: str = "s_raw") -> None:
        self.header = {"type": "session", "version": 1, "id": session_id, "cwd": "/ws", "createdAt": 1}
        self.events: list[dict[str, Any]] = []

    def add(self, type_: str, **payload: Any) -> int:
        seq = len(self.events)
        self.events.append({"seq": seq, "time": 1_700_000_000_000 + seq, "type": type_, **payload})
        return seq

    def user(self, text: str, turn: int | None = 1) -> int:
        msg = {"role": "user", "content": [{"type": "text", "text": text}], "source": {"kind": "user"}}
        return self.add("user/message", turn=turn, message=msg)

    def assistant(self, *call_ids: str, text: str = "", turn: int = 1, step: int = 1) -> int:
        content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        content += [
            {"type": "tool-call", "id": c, "name": "read", "arguments": "{}"} for c in call_ids
        ]
        msg = {"role": "assistant", "content": content}
        return self.add("assistant/message", turn=turn, step=step, message=msg)

    def call(self, call_id: str, turn: int = 1, step: int = 1) -> int:
        return self.add("tool/call", turn=turn, step=step, callId=call_id, name="read", arguments="{}")

    def result(self, call_id: str, cite: int | None = None, turn: int = 1, step: int = 1) -> int:
        msg = {"role": "tool", "toolCallId": call_id, "content": [{"type": "text", "text": "ok"}]}
        extra = {"sourceEventSeqs": [cite]} if cite is not None else {}
        return self.add("tool/result", turn=turn, step=step, message=msg, **extra)

    def text(self, torn_tail: bytes = b"") -> bytes:
        lines = [json.dumps(self.header)] + [json.dumps(e) for e in self.events]
        return ("\n".join(lines) + "\n").encode() + torn_tail

    def write(self, path: Path, torn_tail: bytes = b"") -> Path:
        path.write_bytes(self.text(torn_tail))
        return path


def subprocess_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env.update(extra)
    return env


PYTHON = sys.executable


def die(store: Any, sid: str) -> None:
    """What a dying process does to its log: the descriptor (and its writer lock) goes; what
    was not flushed is lost."""
    log = store.log(sid)
    log._unsubscribe()
    os.close(log._fd)
    log._fd = -1
