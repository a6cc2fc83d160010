"""What a widget's constructor checks before any front end connects, so a wrong argument is a
coded line at once — in the widget's red error box (the ``error`` trait the front end shows) and
in its text form (``repr``: nbconvert, a console, a front end without widgets) — instead of a blank
widget, or an error only after the learner typed a first prompt into it.

- ``LoopWidget(model=…, approve=…, cwd=…, base_url=…)``: the model id is resolved the way the
  host will (:func:`~dsh_notebook.models.routing.resolve_adapter`: provider, key, replay log; no
  network), ``approve`` is one of auto/ask/deny, ``cwd`` is a directory.
- ``LoopWidget(ID)`` / ``SessionInspector(ID)``: the session is live in this kernel's host or
  saved in its sessions directory.
- ``SessionInspector(123)``: not a session id or a path — a one-line ``BAD_ARGUMENT`` error.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ...errors import DshError, UserError
from ..cell.errors import DshMagicError

__all__ = ["check_create_args", "check_session", "coded", "target_text"]

APPROVE_MODES = ("auto", "ask", "deny")


def coded(error: DshError) -> str:
    """The widget's error line: ``CODE: message``."""
    return f"{error.code}: {error.message}"


def target_text(value: Any, what: str) -> str:
    """``value`` as a session id or a path, else a one-line (no traceback) ``BAD_ARGUMENT``."""
    if isinstance(value, str):
        return value
    if isinstance(value, os.PathLike):
        return os.fspath(value)  # type: ignore[return-value]
    raise DshMagicError(UserError(f"{what}(…) takes a session id (s_…) or the path of a .jsonl log, "
                                  f"not {type(value).__name__} {value!r}", code="BAD_ARGUMENT"))


def check_create_args(model: str | None, approve: str | None, cwd: str | None,
                      base_url: str | None, mode: str | None = None) -> str:
    """The first problem of a prompt box's ``session/create`` arguments (``""``: none)."""
    if approve is not None and approve not in APPROVE_MODES:
        return f"BAD_FLAG: approve={approve!r}: use one of {', '.join(APPROVE_MODES)}"
    if mode is not None:
        from ...tools.modes import parse_mode

        try:
            parse_mode(mode, "mode=")  # BAD_MODE, BYPASS_NOT_ARMED
        except DshError as exc:
            return coded(exc)
    if cwd is not None and not Path(cwd).expanduser().is_dir():
        return f"BAD_FLAG: cwd={cwd!r}: no such directory"
    if model is None:
        return ""
    from ...config import settings_from_env
    from ...models.routing import resolve_adapter

    try:
        resolve_adapter(settings_from_env(), model, base_url=base_url)
    except DshError as exc:
        return coded(exc)
    return ""


def check_session(host: Any | None, session_id: str) -> str:
    """``""`` when ``session_id`` is live in ``host`` or saved under its sessions directory, else
    the ``UNKNOWN_SESSION`` line (the host not answering is not the learner's error: ``""``).
    Without a host yet (none is started for the check) only the saved logs can hold it."""

    def known() -> str:
        if host is not None:
            store = host.registry.store
        else:
            from ...config import settings_from_env
            from ...session.store import SessionStore

            store = SessionStore(settings_from_env().home)
        try:
            path = store.path_for(session_id)
        except DshError as exc:  # "/" or a leading "." (BAD_SESSION_ID)
            return coded(exc)
        if (host is not None and session_id in host.registry.live) or path.is_file():
            return ""
        return (f"UNKNOWN_SESSION: no session {session_id!r} in this kernel nor in {path.parent} "
                "(%dsh sessions lists them; a log file is opened by its path)")

    try:
        found: str = host.call(known, timeout=5.0) if host is not None else known()
    except Exception:  # the host is busy or gone: the front end's follow will say what is wrong
        return ""
    return found
