"""Lossless JSON: values that survive ``json.dumps`` → ``json.loads`` unchanged.

Rejected: NaN and ±Infinity, negative zero, non-string keys, strings with lone surrogates,
and anything that is not ``None``/bool/int/float/str/list/tuple/dict.
"""

from __future__ import annotations

import copy
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
        if t is dict or t is FrozenDict:
            for k, v in item.items():
                if type(k) is not str:
                    _fail(where, f"a non-string key {k!r}")
                if not k.isascii():
                    stack.append((k, f"{where} (a key)"))
                stack.append((v, f"{where}.{k!a}"))
            continue
        if t is list or t is tuple or t is FrozenList:
            stack.extend((v, f"{where}[{i}]") for i, v in enumerate(item))
            continue
        _fail(where, f"a value of type {t.__name__}")


def _fail(where: str, what: str) -> None:
    raise SessionError(f"payload is not lossless JSON at {where}: {what}", code="NOT_LOSSLESS")


class FrozenDict(dict[str, Any]):
    """A ``dict`` that refuses mutation (JSON payloads inside committed events)."""

    __slots__ = ()

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("a committed event is immutable")

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = _refuse  # type: ignore[assignment]
    __ior__ = _refuse  # type: ignore[assignment]

    def __hash__(self) -> int:  # type: ignore[override]
        raise TypeError("unhashable type: 'FrozenDict'")

    def __reduce__(self) -> Any:
        return (FrozenDict, (dict(self),))

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, Any]:
        return {k: copy.deepcopy(v, memo) for k, v in self.items()}


class FrozenList(list[Any]):
    """A ``list`` that refuses mutation (JSON payloads inside committed events)."""

    __slots__ = ()

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("a committed event is immutable")

    __setitem__ = __delitem__ = append = extend = insert = pop = remove = _refuse  # type: ignore[assignment]
    clear = reverse = sort = __iadd__ = __imul__ = _refuse  # type: ignore[assignment]

    def __reduce__(self) -> Any:
        return (FrozenList, (list(self),))

    def __deepcopy__(self, memo: dict[int, Any]) -> list[Any]:
        return [copy.deepcopy(v, memo) for v in self]


def deep_freeze(value: Any) -> Any:
    """A copy of a JSON value whose dicts and lists refuse mutation (they still compare equal)."""
    t = type(value)
    if t is dict or t is FrozenDict:
        return FrozenDict({k: deep_freeze(v) for k, v in value.items()})
    if t is list or t is FrozenList or t is tuple:
        return FrozenList(deep_freeze(v) for v in value)
    return value
