"""Kept notebook variables in formats that cannot run code (issue 35: kept variables were pickles,
so a tampered file ran code on ``rewind --variables``; a value was pickled whole before the 20 MB
cap was checked, +1.46 GB for a 1.5 GB array).

A value is kept only in one of three formats, each read back without running anything:

- ``json``: ``None``, ``bool``, ``int``, ``float`` (NaN and infinities tagged), ``str``, ``bytes``,
  ``complex`` and ``list`` / ``tuple`` / ``dict`` / ``set`` / ``frozenset`` of them — exact types
  only (a subclass would come back as its base), tagged so each comes back as it was; encoded by
  a walk that stops as soon as the output passes the cap (or nests deeper than :data:`MAX_DEPTH`);
- ``npy``: a NumPy array or scalar without Python objects, ``numpy.save(allow_pickle=False)``,
  read with ``allow_pickle=False``; its size is ``nbytes``, checked before anything is written;
- ``parquet``: a pandas DataFrame (or Series) when pyarrow ≥ 14.0.1 is installed (earlier ones
  could unpickle an extension type), sized by ``memory_usage(deep=True)`` first and kept only if
  it reads back equal.

Anything else is not kept, and says why (:class:`NotKept`). NumPy and pandas are never imported
here unless the notebook already has them.
"""

from __future__ import annotations

import base64
import io
import json
import math
import sys
from typing import Any

MAX_DEPTH = 64
FORMATS = ("json", "npy", "parquet")


class NotKept(Exception):
    """Why a value is not kept (it stays in the notebook; a rewind cannot put it back)."""


def _module(name: str) -> Any:
    return sys.modules.get(name)


def _tagged(value: Any, budget: list[int], depth: int) -> Any:
    """``value`` as plain JSON data, types tagged (``{"$": "tuple", "v": […]}``); ``budget[0]``
    the characters left (an estimate of the output): :class:`NotKept` when it runs out."""
    if depth > MAX_DEPTH:
        raise NotKept(f"nested deeper than {MAX_DEPTH} levels")
    kind = type(value)
    if value is None or kind is bool:
        budget[0] -= 5
        out: Any = value
    elif kind is int:
        budget[0] -= 4 + int(value.bit_length() * 0.302)  # decimal digits, cheaply
        out = value
    elif kind is float:
        budget[0] -= 24
        out = value if math.isfinite(value) else {"$": "float", "v": repr(value)}
    elif kind is str:
        budget[0] -= len(value) + 2
        out = value
    elif kind is bytes:
        budget[0] -= len(value) * 4 // 3 + 16
        out = {"$": "bytes", "v": base64.b64encode(value).decode() if budget[0] >= 0 else ""}
    elif kind is complex:
        budget[0] -= 50
        out = {"$": "complex", "v": [_tagged(value.real, budget, depth + 1), _tagged(value.imag, budget, depth + 1)]}
    elif kind in (list, tuple, set, frozenset):
        budget[0] -= 2 * len(value) + 16
        if budget[0] < 0:
            raise NotKept("too large")
        items = [_tagged(v, budget, depth + 1) for v in (sorted(value, key=repr) if kind in (set, frozenset) else value)]
        out = items if kind is list else {"$": kind.__name__, "v": items}
    elif kind is dict:
        budget[0] -= 4 * len(value) + 16
        if budget[0] < 0:
            raise NotKept("too large")
        out = {"$": "dict", "v": [[_tagged(k, budget, depth + 1), _tagged(v, budget, depth + 1)] for k, v in value.items()]}
    else:
        raise NotKept(f"a {kind.__module__}.{kind.__qualname__} is kept only as JSON, NumPy or Parquet data")
    if budget[0] < 0:
        raise NotKept("too large")
    return out


def _untagged(data: Any) -> Any:
    if isinstance(data, list):
        return [_untagged(v) for v in data]
    if not isinstance(data, dict):
        return data
    tag = data.get("$")
    v: Any = data.get("v")
    if tag == "float":
        return float(v)
    if tag == "bytes":
        return base64.b64decode(v)
    if tag == "complex":
        return complex(_untagged(v[0]), _untagged(v[1]))
    if tag in ("tuple", "set", "frozenset"):
        items = [_untagged(x) for x in v]
        return tuple(items) if tag == "tuple" else set(items) if tag == "set" else frozenset(items)
    if tag == "dict":
        return {_untagged(k): _untagged(x) for k, x in v}
    raise ValueError(f"unknown tag {tag!r}")


def _pyarrow_ok() -> bool:
    try:
        import pyarrow  # noqa: F401  (the engine pandas uses for Parquet)
    except ImportError:
        return False
    parts = [int(p) for p in pyarrow.__version__.split(".")[:3] if p.isdigit()]
    return tuple(parts) >= (14, 0, 1)


def _frame(value: Any, cap: int, pd: Any) -> tuple[str, bytes]:
    usage = value.memory_usage(deep=True)  # a Series: a number; a DataFrame: one per column
    size = int(usage.sum() if hasattr(usage, "sum") else usage)
    if size > cap:
        raise NotKept(f"over DSH_CHECKPOINT_MAX_VARIABLE ({size} bytes in memory)")
    if not _pyarrow_ok():
        raise NotKept("a pandas object is kept as Parquet, which needs pyarrow >= 14.0.1 (pip install pyarrow)")
    series = isinstance(value, pd.Series)
    frame = value.to_frame(name=value.name if value.name is not None else "__series__") if series else value
    buf = io.BytesIO()
    try:
        frame.to_parquet(buf, engine="pyarrow")
        back = pd.read_parquet(io.BytesIO(buf.getvalue()), engine="pyarrow")
    except Exception as exc:
        raise NotKept(f"does not convert to Parquet ({type(exc).__name__})") from None
    if not back.equals(frame) or list(back.dtypes) != list(frame.dtypes):
        raise NotKept("does not come back equal from Parquet")
    if len(buf.getvalue()) > cap:
        raise NotKept(f"over DSH_CHECKPOINT_MAX_VARIABLE ({len(buf.getvalue())} bytes as Parquet)")
    return ("parquet", (b"S" if series else b"F") + buf.getvalue())


def encode(value: Any, cap: int) -> tuple[str, bytes]:
    """``(format, bytes)`` of ``value`` within ``cap`` bytes, or :class:`NotKept`; the size is
    known (or bounded) before the value is serialised."""
    np, pd = _module("numpy"), _module("pandas")
    if np is not None and (type(value) is np.ndarray or isinstance(value, np.generic)):
        arr = np.asarray(value)
        if arr.dtype.hasobject:
            raise NotKept("a NumPy array of Python objects is kept only without pickle: not kept")
        if arr.nbytes > cap:
            raise NotKept(f"over DSH_CHECKPOINT_MAX_VARIABLE ({arr.nbytes} bytes of data)")
        buf = io.BytesIO()
        np.save(buf, arr, allow_pickle=False)
        return ("npy", (b"A" if type(value) is np.ndarray else b"S") + buf.getvalue())
    if pd is not None and type(value) in (pd.DataFrame, pd.Series):
        return _frame(value, cap, pd)
    budget = [cap]
    try:
        data = _tagged(value, budget, 0)
    except RecursionError:
        raise NotKept(f"nested deeper than {MAX_DEPTH} levels") from None
    except NotKept as exc:
        if str(exc) == "too large":
            raise NotKept(f"over DSH_CHECKPOINT_MAX_VARIABLE (more than {cap} bytes as JSON)") from None
        raise
    text = json.dumps(data, allow_nan=False, separators=(",", ":")).encode()
    if len(text) > cap:
        raise NotKept(f"over DSH_CHECKPOINT_MAX_VARIABLE ({len(text)} bytes as JSON)")
    return ("json", text)


def decode(fmt: str, data: bytes) -> Any:
    """The value kept as ``(fmt, data)``; ``ValueError`` when it cannot be read back (nothing it
    holds is ever run: no pickle, no object arrays)."""
    if fmt == "json":
        return _untagged(json.loads(data))
    if fmt == "npy":
        import numpy as np

        arr = np.load(io.BytesIO(data[1:]), allow_pickle=False)
        return arr if data[:1] == b"A" else arr[()]
    if fmt == "parquet":
        if not _pyarrow_ok():
            raise ValueError("kept as Parquet: reading it back needs pyarrow >= 14.0.1")
        import pandas as pd

        frame = pd.read_parquet(io.BytesIO(data[1:]), engine="pyarrow")
        if data[:1] == b"S":
            series = frame.iloc[:, 0]
            return series.rename(None) if series.name == "__series__" else series
        return frame
    raise ValueError(f"kept in the format {fmt!r}, which this version does not read (a pickle is never read)")
