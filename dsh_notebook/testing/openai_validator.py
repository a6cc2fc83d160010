"""A strict validator of OpenAI Chat Completions request messages, as real providers apply.

``validate_chat_request(messages)`` raises ``ValueError`` (message names the offending index)
when the list would be refused by a strict OpenAI-compatible server:

- not a non-empty list of dicts; an unknown role; unknown keys for a role;
- ``content`` of the wrong type: a string (or a list of ``{"type":"text","text":str}`` parts) for
  system / user / developer / tool; a string on assistant messages, where ``null`` is accepted
  only next to ``tool_calls`` (and never when ``allow_null_content=False``);
- ``tool_calls`` not a non-empty list of ``{"id", "type":"function", "function":{"name",
  "arguments": str}}``; a tool-call id used twice anywhere in the request;
- an assistant tool call not answered by ``tool`` messages immediately after its message, before
  any other role (including at the end of the list);
- a ``tool`` message that answers no pending call (orphan) or a call already answered
  (duplicate).

The loopback OpenAI server of the tests reuses it to return 400s.
"""

from __future__ import annotations

from typing import Any

__all__ = ["validate_chat_request"]

_KEYS = {
    "system": {"role", "content", "name"},
    "developer": {"role", "content", "name"},
    "user": {"role", "content", "name"},
    "assistant": {"role", "content", "name", "tool_calls", "reasoning_content", "refusal"},
    "tool": {"role", "content", "tool_call_id"},
}


def _fail(i: int, what: str) -> None:
    raise ValueError(f"messages[{i}]: {what}")


def _check_content(i: int, content: Any, *, null_ok: bool) -> None:
    if content is None:
        if not null_ok:
            _fail(i, "content must not be null")
        return
    if isinstance(content, str):
        return
    if isinstance(content, list) and content:
        for part in content:
            if not (
                isinstance(part, dict)
                and part.get("type") == "text"  # OpenAI API shapes, not this package's wire
                and isinstance(part.get("text"), str)
            ):
                _fail(i, f"content part {part!r} is not a text part")
        return
    _fail(i, f"content must be a string or a list of text parts, not {type(content).__name__}")


def _check_tool_calls(i: int, calls: Any, seen_ids: set[str]) -> list[str]:
    if not isinstance(calls, list) or not calls:
        _fail(i, "tool_calls must be a non-empty list")
    ids: list[str] = []
    for call in calls:
        if not isinstance(call, dict) or set(call) - {"id", "type", "function", "index"}:
            _fail(i, f"malformed tool call {call!r}")
        cid = call.get("id")
        if not isinstance(cid, str) or not cid:
            _fail(i, f"tool call id must be a non-empty string, got {cid!r}")
        if cid in seen_ids:
            _fail(i, f"duplicate tool call id {cid!r}")
        seen_ids.add(cid)
        if call.get("type") != "function":  # OpenAI API shapes, not this package's wire
            _fail(i, f"tool call {cid!r}: type must be 'function'")
        fn = call.get("function")
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str) or not fn["name"]:
            _fail(i, f"tool call {cid!r}: function.name must be a non-empty string")
        if not isinstance(fn.get("arguments"), str):
            _fail(i, f"tool call {cid!r}: function.arguments must be a string")
        ids.append(cid)
    return ids


def validate_chat_request(messages: Any, *, allow_null_content: bool = True) -> None:
    """Raise ``ValueError`` if ``messages`` is not a valid Chat Completions message list."""
    if not isinstance(messages, list) or not messages:
        raise ValueError("messages must be a non-empty list")
    seen_ids: set[str] = set()
    pending: list[str] = []  # calls of the last assistant message not yet answered
    answered: set[str] = set()
    pending_from = -1
    for i, m in enumerate(messages):
        if not isinstance(m, dict):
            _fail(i, f"not an object: {m!r}")
        role = m.get("role")
        if role not in _KEYS:
            _fail(i, f"unknown role {role!r}")
        extra = set(m) - _KEYS[role]
        if extra:
            _fail(i, f"unexpected keys for role {role!r}: {sorted(extra)}")
        if role == "tool":
            cid = m.get("tool_call_id")
            if not isinstance(cid, str) or not cid:
                _fail(i, "tool message needs a non-empty tool_call_id")
            _check_content(i, m.get("content"), null_ok=False)
            if cid in answered:
                _fail(i, f"duplicate tool message for call {cid!r}")
            if cid not in pending:
                _fail(i, f"orphan tool message: no pending assistant tool call {cid!r}")
            pending.remove(cid)
            answered.add(cid)
            continue
        if pending:
            _fail(
                i,
                f"{role} message before the tool calls {pending} of messages[{pending_from}] "
                "were answered",
            )
        if "content" not in m and role != "assistant":
            _fail(i, "missing content")
        if role == "assistant":
            has_calls = "tool_calls" in m
            _check_content(i, m.get("content"), null_ok=has_calls and allow_null_content)
            if "content" not in m and not has_calls:
                _fail(i, "assistant message needs content or tool_calls")
            if has_calls:
                pending = _check_tool_calls(i, m["tool_calls"], seen_ids)
                pending_from = i
            rc = m.get("reasoning_content")
            if rc is not None and not isinstance(rc, str):
                _fail(i, "reasoning_content must be a string")
        else:
            _check_content(i, m.get("content"), null_ok=False)
    if pending:
        raise ValueError(
            f"messages end before the tool calls {pending} of messages[{pending_from}] were answered"
        )
