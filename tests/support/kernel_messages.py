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
    """IOPub messages of ``msg_id`` until its kernel status is idle; a run of stream messages of one
    name is joined into one, as JupyterLab shows it (the kernel flushes stdout on a timer, so under
    load one print() can come in two parts)."""
    out: list[dict[str, Any]] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        msg = kc.get_iopub_msg(timeout=timeout)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        last = out[-1] if out else None
        if last is not None and msg["msg_type"] == last["msg_type"] == "stream" \
                and msg["content"].get("name") == last["content"].get("name"):
            last["content"] = {**last["content"], "text": last["content"]["text"] + msg["content"]["text"]}
            continue
        out.append(msg)
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            return out
    raise AssertionError("the kernel did not go idle")
