"""Bounded JSON-lines input for ``serve --stdio``: never more than the limit plus one chunk held.

:func:`read_lines` reads a binary stream in chunks and yields each complete line (without its
``\\n``/``\\r\\n``), or an :class:`Oversized` for a line longer than ``limit`` — which keeps only the
line's first bytes (enough to read its ``rpcId`` or ``streamId``) and skips the rest as it arrives,
so a 1 GB line with no newline costs the same memory as an 8 MB one. :func:`oversized_error` turns
that into the coded ``LINE_TOO_LONG`` error, with the ids read from the line's start.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass

from .envelopes import MAX_ID, MAX_LINE, EnvelopeError

__all__ = ["CHUNK", "Oversized", "oversized_error", "read_lines"]

CHUNK = 1 << 16
PREFIX = 4096  # what is kept of an oversized line to find its ids
_ID = {key: re.compile(rb'"%s"\s*:\s*"((?:[^"\\]|\\.){1,%d})"' % (key.encode(), MAX_ID))
       for key in ("rpcId", "streamId")}


@dataclass(frozen=True)
class Oversized:
    """A line longer than the limit: its first bytes and its length in bytes (as read)."""

    prefix: bytes
    size: int


def read_lines(fd: int, limit: int = MAX_LINE, chunk: int = CHUNK) -> Iterator[bytes | Oversized]:
    """Lines from file descriptor ``fd`` until end of input (a last line without ``\\n`` counts)."""
    buf = bytearray()
    skipping: Oversized | None = None  # inside an oversized line: its prefix and size so far
    while True:
        data = os.read(fd, chunk)
        if not data:
            break
        start = 0
        while start < len(data):
            nl = data.find(b"\n", start)
            piece = data[start:] if nl < 0 else data[start:nl]
            start = len(data) if nl < 0 else nl + 1
            if skipping is not None:
                skipping = Oversized(skipping.prefix, skipping.size + len(piece))
            elif len(buf) + len(piece) > limit:
                skipping = Oversized(bytes((buf + piece[:PREFIX])[:PREFIX]), len(buf) + len(piece))
                buf = bytearray()
            else:
                buf += piece
            if nl < 0:
                continue
            if skipping is not None:
                yield skipping
                skipping = None
            else:
                yield bytes(buf.rstrip(b"\r"))
                buf = bytearray()
    if skipping is not None:
        yield skipping
    elif buf:
        yield bytes(buf.rstrip(b"\r"))


def oversized_error(line: Oversized, limit: int = MAX_LINE) -> EnvelopeError:
    """``LINE_TOO_LONG`` for an oversized line, carrying the ``rpcId``/``streamId`` of its start."""
    ids: dict[str, str | None] = {}
    for key, pattern in _ID.items():
        found = pattern.search(line.prefix)
        try:
            value = json.loads(b'"' + found.group(1) + b'"') if found else None
        except ValueError:  # also a bad UTF-8 sequence
            value = None
        ids[key] = value if isinstance(value, str) else None
    err = EnvelopeError(
        f"the line is {line.size} bytes, longer than the {limit}-byte limit; it was skipped "
        "(send large content in smaller messages)",
        rpc_id=ids["rpcId"],
        stream_id=ids["streamId"],
    )
    err.code = "LINE_TOO_LONG"
    return err
