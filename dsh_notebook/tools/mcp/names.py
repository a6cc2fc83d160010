"""Model-facing names of MCP tools: ``SERVER__TOOL`` within ``^[a-zA-Z0-9_-]{1,64}$``.

Providers accept tool names of at most 64 characters from ``[a-zA-Z0-9_-]``. Each character
outside that set becomes ``_``; a name that had to be shortened, or that collides with one
already taken, ends in ``_`` plus six hex digits of a SHA-1 of the *original* server and tool
names — so the same configuration always yields the same names, in any start order. A tool
whose name needs no cleaning keeps it; a cleaned name that collides with it gets the hash.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

MAX_NAME = 64
MAX_PREFIX = 32
VALID_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_BAD = re.compile(r"[^a-zA-Z0-9_-]")
SEP = "__"


def clean(part: str) -> str:
    """Replace every character a provider refuses by ``_`` (an empty part becomes ``_``)."""
    return _BAD.sub("_", part) or "_"


def short_hash(*parts: str) -> str:
    return hashlib.sha1("\0".join(parts).encode("utf-8", "surrogatepass")).hexdigest()[:6]


def _fit(base: str, digest: str, limit: int = MAX_NAME) -> str:
    return f"{base[: limit - len(digest) - 1]}_{digest}"


def server_prefixes(names: Iterable[str]) -> dict[str, str]:
    """Each configured server's cleaned prefix (at most 32 characters; unique; valid names first)."""
    out: dict[str, str] = {}
    taken: set[str] = set()
    for name in sorted(names, key=lambda n: (clean(n) != n, n)):
        prefix = clean(name)
        if len(prefix) > MAX_PREFIX or prefix in taken:
            prefix = _fit(prefix, short_hash(name), MAX_PREFIX)
        taken.add(prefix)
        out[name] = prefix
    return out


def tool_names(server: str, prefix: str, tools: Iterable[str]) -> dict[str, str]:
    """Remote tool name → model-facing name for one server (valid names first, then sorted)."""
    out: dict[str, str] = {}
    taken: set[str] = set()
    unique = set(tools)
    # tools whose names are already valid keep them; cleaned ones yield on a collision
    for tool in sorted(unique, key=lambda t: (clean(t) != t, t)):
        name = f"{prefix}{SEP}{clean(tool)}"
        if len(name) > MAX_NAME or name in taken:
            name = _fit(name, short_hash(server, tool))
        n = 0
        while name in taken:  # a hash collision on top of a name collision: still deterministic
            n += 1
            name = _fit(f"{prefix}{SEP}{clean(tool)}", short_hash(server, tool, str(n)))
        taken.add(name)
        out[tool] = name
    return out
