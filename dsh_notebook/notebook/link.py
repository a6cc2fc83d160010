"""The magic's way to the Host: the same Gateway path as any remote client (DESIGN §2).

:class:`HostLink` is a :class:`~dsh_notebook.client.remote.Remote` over an in-process
:class:`~dsh_notebook.client.connection.Connection` to the process's
:class:`~dsh_notebook.host.host.Host` (its own thread and loop). Calls block the main thread only
for the RPC round trip; follow items arrive on the connection's delivery thread.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Protocol

from ..errors import HostError
from ..wire.events import AnyEvent
from .result import parse_event


class TurnClient(Protocol):
    """What a run needs from the client (``DshClient`` provides it)."""

    def follow(self, session_id: str, on_item: Callable[[Any], None], *, cursor: int | None = None,
               on_end: Callable[[Exception | None], None] | None = None) -> Any: ...
    def prompt(self, session_id: str, text: str, *, mode: str = "queue", request_id: str | None = None) -> Any: ...
    def cancel(self, session_id: str) -> Any: ...
    def approve(self, session_id: str, call_id: str, decision: str) -> Any: ...
    def last_seq(self, session_id: str) -> int | None: ...



class HostLink:
    """Blocking helpers over ``Remote`` for the magics (one per extension load); a TurnClient."""

    def __init__(self, host: Any, *, caller: str = "notebook") -> None:
        from ..client.connection import Connection
        from ..client.remote import Remote
        from ..client.transport import InProcessTransport

        self.host = host
        self.connection = Connection(InProcessTransport(host, caller=caller))
        self.remote = Remote(self.connection)

    # --- unary --------------------------------------------------------------------------------

    def create_session(self, *, cwd: str | None = None, model: str | None = None,
                       approve: str | None = None, base_url: str | None = None) -> Any:
        return self.remote.session.create(cwd=cwd, model=model, approve=approve, base_url=base_url)

    def prompt(self, session_id: str, text: str, *, mode: str = "queue", request_id: str | None = None) -> Any:
        command = {"session_id": session_id, "request_id": request_id, "mode": mode, "content": text}
        return self.remote.session.prompt(request=command)

    def cancel(self, session_id: str) -> Any:
        return self.remote.session.cancel(session_id=session_id)

    def approve(self, session_id: str, call_id: str, decision: str) -> Any:
        return self.remote.session.approve(session_id=session_id, call_id=call_id, decision=decision)

    def list_sessions(self) -> Any:
        return self.remote.session.list().sessions

    def resume(self, session_id: str) -> Any:
        return self.remote.session.resume(session_id=session_id)

    def info(self, session_id: str) -> Any:
        """``session/info`` of a live or saved session (``UNKNOWN_SESSION`` otherwise)."""
        return self.remote.session.info(session_id=session_id)

    def last_seq(self, session_id: str) -> int | None:
        """Where a follow should start so that it sees only what comes next (None: from 0)."""
        try:
            return int(self.info(session_id).last_seq)
        except HostError as exc:
            if exc.code == "UNKNOWN_SESSION":
                return None  # the prompt itself will say so
            raise

    # --- streams ------------------------------------------------------------------------------

    def follow(self, session_id: str, on_item: Callable[[Any], None], *, cursor: int | None = None,
               on_end: Callable[[Exception | None], None] | None = None) -> Any:
        return self.remote.session.follow.open(
            on_item,
            on_error=(lambda err: on_end(err)) if on_end else None,
            on_end=(lambda: on_end(None)) if on_end else None,
            session_id=session_id,
            cursor=cursor,
        )

    def snapshot(self, session_id: str, timeout: float = 30.0) -> tuple[dict[str, Any], list[AnyEvent]]:
        """The session's header and every event (a live or a saved session), then close."""
        got = threading.Event()
        box: dict[str, Any] = {}

        def on_item(item: Any) -> None:
            if isinstance(item, dict) and item.get("type") == "snapshot" and not got.is_set():
                box["snapshot"] = item
                got.set()

        def on_end(error: Exception | None) -> None:
            box.setdefault("error", error)
            got.set()

        sub = self.follow(session_id, on_item, on_end=on_end)
        try:
            if not got.wait(timeout):
                raise HostError(f"no snapshot of {session_id} within {timeout}s", code="TIMEOUT")
        finally:
            sub.close()
        if "snapshot" not in box:
            error = box.get("error")
            raise error if isinstance(error, Exception) else HostError(f"no session {session_id!r}", code="UNKNOWN_SESSION")
        snap = box["snapshot"]
        return snap.get("header") or {}, [parse_event(e) for e in snap.get("events") or ()]

    def close(self) -> None:
        self.connection.close()
