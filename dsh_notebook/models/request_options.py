"""The per-request options a user sets: ``--option KEY=VALUE``, ``--tools NAMES``, ``--max-tokens``.

``--option KEY=VALUE`` (repeatable; ``DshMagics.options`` a dict) puts ``KEY`` on every request:
the value is parsed as JSON (``temperature=0.2`` → ``0.2``, ``stop=["\\n"]`` → a list,
``seed=7`` → ``7``) and otherwise kept as a string (``reasoning_effort=low`` → ``"low"``). Known
OpenAI parameters are sent as such; anything else reaches the server in the request body
(``extra_body``: ``top_k``, ``min_p``, ``repeat_penalty`` …). A JSON ``null`` removes an option
set before. The fields the harness owns (``model``, ``messages``, ``stream``, ``tools`` …) are
refused with ``BAD_CONFIG``; ``max_tokens`` is the same as ``--max-tokens``.

``--tools NAMES``: a comma list of the tools the model is offered, ``none`` for a plain chat turn
(no tools), ``all`` for every tool (the default).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any, cast

from pydantic import JsonValue

from ..errors import UserError

RESERVED = frozenset({"model", "messages", "stream", "stream_options", "tools", "functions", "n"})
_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")


def parse_option(raw: str, name: str = "--option") -> tuple[str, JsonValue]:
    """``KEY=VALUE`` → ``(key, value)``: the value as JSON, else as the string typed."""
    key, sep, value = raw.partition("=")
    key = key.strip()
    if not sep or not _KEY.match(key):
        raise UserError(f"{name} takes KEY=VALUE (e.g. temperature=0.2), not {raw!r}", code="BAD_CONFIG")
    return check_option(key, parse_value(value), name)


def parse_value(value: str) -> JsonValue:
    text = value.strip()
    try:
        parsed: JsonValue = json.loads(text)
    except ValueError:
        return value
    return parsed


def check_option(key: str, value: object, name: str = "--option") -> tuple[str, JsonValue]:
    if key in RESERVED:
        raise UserError(f"{name} {key}: the harness sets {key!r} itself and it cannot be overridden "
                        f"(reserved: {', '.join(sorted(RESERVED))})", code="BAD_CONFIG")
    if key in ("max_tokens", "max_completion_tokens") and value is not None:
        from ..config import parse_max_tokens

        parse_max_tokens(value if isinstance(value, (int, str)) and not isinstance(value, bool) else -1,
                         f"{name} {key}")
    if key == "extra_body" and value is not None and not isinstance(value, dict):
        raise UserError(f"{name} extra_body: the value must be a JSON object, not {value!r}", code="BAD_CONFIG")
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        raise UserError(f"{name} {key}: the value must be finite JSON, not {value!r}", code="BAD_CONFIG") from None
    return key, cast(JsonValue, value)  # json.dumps took it: JSON data


def parse_options(raws: Iterable[str] | Mapping[str, Any] | None, name: str = "--option") -> dict[str, JsonValue]:
    """Several ``KEY=VALUE`` strings (or a dict, e.g. ``DshMagics.options``) → one checked dict."""
    if raws is None:
        return {}
    if isinstance(raws, Mapping):
        return dict(check_option(str(k), v, name) for k, v in raws.items())
    out: dict[str, JsonValue] = {}
    for raw in raws:
        key, value = parse_option(raw, name)
        out[key] = value
    return out


def merge_options(current: Mapping[str, Any], changes: Mapping[str, Any]) -> dict[str, JsonValue]:
    """``current`` updated with ``changes``; a ``None`` value removes the key."""
    out = dict(current)
    for key, value in changes.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = value
    return out


def parse_tools(raw: str | Iterable[str] | None, name: str = "--tools") -> tuple[str, ...] | None:
    """``none`` → ``()`` (no tools); ``all`` / unset → ``None`` (every tool); else the names."""
    if raw is None:
        return None
    words = raw.split(",") if isinstance(raw, str) else list(raw)
    names = tuple(dict.fromkeys(w.strip() for w in words if w.strip()))
    if not names:
        raise UserError(f"{name} needs tool names (comma-separated), none or all", code="BAD_CONFIG")
    lowered = {n.lower() for n in names}
    if lowered & {"none", "all"}:
        if len(names) > 1:
            raise UserError(f"{name}: none and all stand alone, not in a list: {','.join(names)}", code="BAD_CONFIG")
        return () if lowered == {"none"} else None
    bad = [n for n in names if not re.match(r"^[A-Za-z0-9_.:-]+$", n)]
    if bad:
        raise UserError(f"{name}: not a tool name: {bad[0]!r}", code="BAD_CONFIG")
    return names


def tools_text(tools: tuple[str, ...] | None) -> str:
    """The wire / display form of a tool choice: ``all``, ``none`` or ``a,b``."""
    return "all" if tools is None else "none" if not tools else ",".join(tools)


def request_flags(args: Any) -> dict[str, JsonValue]:
    """``--max-tokens``, ``--option``, ``--tools``, ``--max-repeats``, ``--first-byte-timeout``,
    ``--idle-timeout`` checked (a coded error naming the flag) → ``SessionOptions`` fields."""
    from ..config import parse_max_repeats, parse_max_tokens, parse_timeout

    out: dict[str, JsonValue] = {}
    if getattr(args, "max_tokens", None) is not None:
        out["max_tokens"] = parse_max_tokens(args.max_tokens, "--max-tokens")
    if getattr(args, "option", None):
        out["options"] = parse_options(args.option, "--option")
    if getattr(args, "tools", None) is not None:
        out["tools"] = tools_text(parse_tools(args.tools, "--tools"))
    if getattr(args, "max_repeats", None) is not None:
        out["max_repeats"] = parse_max_repeats(args.max_repeats, "--max-repeats")
    for flag in ("first_byte_timeout", "idle_timeout"):
        if getattr(args, flag, None) is not None:
            out[flag] = parse_timeout(getattr(args, flag), "--" + flag.replace("_", "-"))
    return out
