"""Request validation for the fake OpenAI server — as strict as real providers.

:func:`check_request` returns the message of the 400 a real provider would answer, or ``None``.
It checks the request shape (``stream_options`` only with ``stream``), the tool definitions
(``type: function``, a valid unique name, an object ``parameters`` schema) and the messages:
roles, string content (``null`` content is refused everywhere — some providers refuse it even
next to ``tool_calls``, and we always send ``""``), tool-call shapes, duplicate call ids,
unanswered tool calls, orphan or duplicate tool results, and ``reasoning_content`` (refused by
plain OpenAI-compatible servers; required on tool-call turns in DeepSeek thinking mode).
The shared :func:`dsh_notebook.testing.openai_validator.validate_chat_request` runs too (unknown keys …).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .openai_validator import validate_chat_request

_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_ROLES = {"system", "developer", "user", "assistant", "tool"}


def check_request(body: Mapping[str, object], *, deepseek_thinking: bool = False) -> str | None:
    if "stream_options" in body and not body.get("stream"):
        return "The 'stream_options' parameter is only allowed when 'stream' is enabled."
    problem = check_tools(body.get("tools"))
    if problem is None:
        problem = check_messages(body.get("messages"), deepseek_thinking=deepseek_thinking)
    if problem is None:
        try:
            validate_chat_request(body["messages"], allow_null_content=False)
        except ValueError as exc:
            problem = f"Invalid request: {exc}"
    return problem


def check_tools(tools: Any) -> str | None:
    if tools is None:
        return None
    if not isinstance(tools, list) or not tools:
        return "Invalid 'tools': expected a non-empty array."
    seen: set[str] = set()
    for n, tool in enumerate(tools):
        fn = tool.get("function") if isinstance(tool, dict) else None
        # OpenAI request/response shapes (the provider's API, not this package's wire) throughout
        if not isinstance(tool, dict) or tool.get("type") != "function" or not isinstance(fn, dict):
            return f"Invalid 'tools[{n}]': expected {{'type': 'function', 'function': {{...}}}}."
        name = fn.get("name")
        if not isinstance(name, str) or not _NAME.match(name):
            return f"Invalid 'tools[{n}].function.name': string does not match pattern."
        if name in seen:
            return f"Invalid 'tools': duplicate function name '{name}'."
        seen.add(name)
        params = fn.get("parameters")
        if params is not None and (not isinstance(params, dict) or params.get("type") != "object"):
            return f"Invalid schema for function '{name}': schema must be a JSON Schema of 'type: \"object\"'."
        if "description" in fn and not isinstance(fn["description"], str):
            return f"Invalid 'tools[{n}].function.description': expected a string."
    return None


def _content_ok(content: Any) -> bool:
    if isinstance(content, str):
        return True
    return isinstance(content, list) and all(
        isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str) for p in content
    )


def check_messages(messages: Any, *, deepseek_thinking: bool = False) -> str | None:  # noqa: C901
    if not isinstance(messages, list) or not messages:
        return "Invalid 'messages': empty array. Expected an array with minimum length 1."
    all_ids: set[str] = set()
    open_calls: list[str] = []  # calls of the last assistant message still unanswered
    answered: set[str] = set()
    for n, msg in enumerate(messages):
        role = msg.get("role") if isinstance(msg, dict) else None
        where = f"messages[{n}]"
        if role not in _ROLES:
            return f"Invalid '{where}.role': expected one of {sorted(_ROLES)}."
        if open_calls and role != "tool":
            return ("An assistant message with 'tool_calls' must be followed by tool messages "
                    "responding to each 'tool_call_id'. The following tool_call_ids did not have "
                    f"response messages: {', '.join(open_calls)}")
        if not _content_ok(msg.get("content")):
            return f"Invalid '{where}.content': expected a string, got {type(msg.get('content')).__name__}."
        if "reasoning_content" in msg:
            if role != "assistant" or not deepseek_thinking:
                return f"Invalid '{where}': unrecognized property 'reasoning_content'."
            if not isinstance(msg["reasoning_content"], str):
                return f"Invalid '{where}.reasoning_content': expected a string."
        if role == "assistant":
            calls = msg.get("tool_calls")
            if calls is None:
                continue
            if not isinstance(calls, list) or not calls:
                return f"Invalid '{where}.tool_calls': empty array. Expected an array with minimum length 1."
            if deepseek_thinking and not isinstance(msg.get("reasoning_content"), str):
                return 'The "reasoning_content" in the thinking mode must be passed back to the API.'
            for k, call in enumerate(calls):
                fn = call.get("function") if isinstance(call, dict) else None
                cid = call.get("id") if isinstance(call, dict) else None
                if not isinstance(cid, str) or not cid or call.get("type") != "function" or not isinstance(fn, dict):
                    return f"Invalid '{where}.tool_calls[{k}]': expected id, type 'function' and function."
                if not isinstance(fn.get("name"), str) or not isinstance(fn.get("arguments"), str):
                    return f"Invalid '{where}.tool_calls[{k}].function': name and arguments must be strings."
                if cid in all_ids:
                    return f"Duplicate tool_call id '{cid}' in '{where}.tool_calls[{k}]'."
                all_ids.add(cid)
                open_calls.append(cid)
        elif role == "tool":
            cid = msg.get("tool_call_id")
            if not isinstance(cid, str) or not cid:
                return f"Missing required parameter: '{where}.tool_call_id'."
            if cid in answered:
                return f"Duplicate tool message for tool_call_id '{cid}' at '{where}'."
            if cid not in open_calls:
                return (f"Invalid parameter: messages with role 'tool' must be a response to a "
                        f"preceeding message with 'tool_calls' ('{where}', tool_call_id '{cid}').")
            open_calls.remove(cid)
            answered.add(cid)
    if open_calls:
        return ("An assistant message with 'tool_calls' must be followed by tool messages responding "
                f"to each 'tool_call_id'. The following tool_call_ids did not have response messages: "
                f"{', '.join(open_calls)}")
    return None
