"""Reading a real kernel's replies the way a front end does: the shell reply to one request, and
its IOPub messages up to the kernel going idle."""

from __future__ import annotations

import time
from typing import Any


def shell_reply(kc: Any, msg_id: str, timeout: float = 90) -> dict[str, Any]:
    """The shell-channel reply whose parent is ``msg_id`` (other replies are skipped)."""
    while True:
        reply: dict[str, Any] = kc.get_shell_msg(timeout=timeout)
        if reply["parent_header"].get("msg_id") == msg_id:
            return reply


def iopub_until_idle(kc: Any, msg_id: str, timeout: float = 60) -> list[dict[str, Any]]:
    """IOPub messages of ``msg_id`` until its kernel status is idle."""
    out = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        msg = kc.get_iopub_msg(timeout=timeout)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        out.append(msg)
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            return out
    raise AssertionError("the kernel did not go idle")
