"""Approvals asked on the kernel's stdin while a cell blocks (``--approve ask``).

The host parks an *ask* until some client calls ``session/approve`` (DESIGN §2). While a ``%dsh``
cell waits, the browser's widget cannot answer (comm messages wait for the cell), so the wait
itself asks: it sees the ``tool-runtime`` frame ``phase: "approval", status: "waiting"``, calls
``input()`` **on the main thread** — the kernel turns that into an ``input_request`` on the stdin
channel (JupyterLab, classic notebook; a plain prompt in terminal IPython) — and answers with
``session/approve``. A front end without stdin (nbclient, papermill) gets a *deny* and a note.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from ..wire.events import AnyEvent, ApprovalDecided, ToolCall, ToolResult
from .render import format_arguments

Asker = Callable[[str], str]
NO_STDIN = "no stdin to ask on; denied (use --approve auto, or --bg and the widget)"


class StdinApprovals:
    """The approvals of one run: noted on the delivery thread, asked on the main thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._calls: dict[str, tuple[str, str]] = {}  # callId -> (name, raw arguments)
        self._waiting: dict[str, str] = {}  # callId -> name: asked by the host, not yet decided
        self._asked: set[str] = set()

    @property
    def waiting(self) -> dict[str, str]:
        with self._lock:
            return dict(self._waiting)

    def note(self, item: dict[str, Any], events: list[AnyEvent]) -> None:
        """Fold one follow item of the session. Every approval the session waits for counts —
        not only this run's: while the cell blocks, nothing else could answer it."""
        with self._lock:
            for event in events:
                if isinstance(event, ToolCall):
                    self._calls[event.call_id] = (event.name, event.arguments)
                elif isinstance(event, ApprovalDecided):
                    self._waiting.pop(event.call_id, None)
                elif isinstance(event, ToolResult):
                    self._waiting.pop(event.message.tool_call_id, None)
            if item.get("type") == "tool-runtime":
                frame = item.get("frame") or {}
                if frame.get("phase") == "approval" and frame.get("status") == "waiting":
                    self._waiting[str(frame.get("callId"))] = str(frame.get("name"))
            elif item.get("type") == "snapshot":
                for pending in (item.get("live") or {}).get("approvals") or ():
                    self._calls[pending["callId"]] = (pending["name"], pending.get("arguments", ""))
                    self._waiting[pending["callId"]] = pending["name"]

    def _todo(self) -> list[tuple[str, str, str]]:
        with self._lock:
            todo = [(cid, name, self._calls.get(cid, (name, ""))[1])
                    for cid, name in self._waiting.items() if cid not in self._asked]
            self._asked.update(cid for cid, _, _ in todo)
        return todo

    def ask(self, ask: Asker, answer: Callable[[str, str], None], *,
            before: Callable[[], None] = lambda: None, no_stdin: Callable[[str], None] = lambda _t: None) -> int:
        """Ask every new approval with ``ask(prompt)``; ``answer(call_id, decision)`` each.

        ``KeyboardInterrupt`` propagates (the wait then cancels the turn); any other failure of
        ``ask`` (no stdin in this front end) denies. Returns how many were asked.
        """
        todo = self._todo()
        for call_id, name, arguments in todo:
            before()
            try:
                reply = ask(f"dsh: allow {name} {format_arguments(arguments, width=200)}? [y/N] ")
            except KeyboardInterrupt:
                raise
            except Exception:
                reply = "n"
                no_stdin(f"{name}: {NO_STDIN}")
            answer(call_id, "allow" if reply.strip().lower() in ("y", "yes") else "deny")
        return len(todo)
