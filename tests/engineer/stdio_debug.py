"""``session/debug`` over ``serve --stdio`` as a check from outside drives it: a followed session,
and a debug request the host refuses (its error code)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tests.host.test_debug_stdio import Stdio


def followed_session(srv: Stdio) -> str:
    """A new session, followed on stream ``f1``; its id."""
    sid: str = srv.call("session/create")["sessionId"]
    srv.send({"type": "open", "streamId": "f1", "endpoint": "session/follow", "payload": {"args": {"sessionId": sid}}})
    return sid


def debug_refused(srv: Stdio, **args: Any) -> str:
    """Send ``session/debug`` with ``args``; the host must refuse it: the error's code."""
    srv.n += 1
    rpc = f"refused_{srv.n}"
    srv.send({"type": "client-request", "rpcId": rpc, "method": "session/debug", "payload": {"args": args}})
    result = srv.until(lambda m: m.get("rpcId") == rpc)["result"]
    assert result["ok"] is False, result
    code: str = result["error"]["code"]
    return code
