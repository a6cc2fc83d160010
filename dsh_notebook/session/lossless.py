"""Lossless JSON: values that survive ``json.dumps`` → ``json.loads`` unchanged.

Rejected: NaN and ±Infinity, negative zero, non-string keys, strings with lone surrogates,
and anything that is not ``None``/bool/int/float/str/list/tuple/dict.
"""

from __future__ import annotations

import math
from typing import Any

from ..errors import SessionError


def check_lossless(value: Any, path: str = "$") -> None:
    """Raise :class:`SessionError` (code ``NOT_LOSSLESS``) if ``value`` is not lossless JSON."""
    stack: list[tuple[Any, str]] = [(value, path)]
    while stack:
        item, where = stack.pop()
        if item is None or item is True or item is False or type(item) is int:
            continue
        t = type(item)
        if t is str:
            if not item.isascii():
                try:
                    item.encode("utf-8")
                except UnicodeEncodeError:
                    _fail(where, "a string with a lone surrogate")
            continue
        if t is float:
            if math.isnan(item) or math.isinf(item):
                _fail(where, f"{item!r}")
            if item == 0.0 and math.copysign(1.0, item) < 0:
                _fail(where, "negative zero")
            continue
        if t is dict:
            for k, v in item.items():
                if type(k) is not str:
                    _fail(where, f"a non-string key {k!r}")
                stack.append((v, f"{where}.{k}"))
            continue
        if t is list or t is tuple:
            stack.extend((v, f"{where}[{i}]") for i, v in enumerate(item))
            continue
        _fail(where, f"a value of type {t.__name__}")


def _fail(where: str, what: str) -> None:
    raise SessionError(f"payload is not lossless JSON at {where}: {what}", code="NOT_LOSSLESS")
