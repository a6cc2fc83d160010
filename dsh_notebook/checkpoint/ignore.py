"""What a checkpoint covers: ``.git`` skipped, ``.gitignore`` and ``DSH_CHECKPOINT_IGNORE`` honoured,
size caps per file and per workspace (``DSH_CHECKPOINT_MAX_FILE``, ``DSH_CHECKPOINT_MAX_TOTAL``).

Supported ``.gitignore`` syntax (the workspace root's file only): blank lines and ``#`` comments,
``name`` (any depth), ``*.ext`` / ``?`` / ``[abc]`` globs on the base name, ``dir/`` (directories
only), patterns with a ``/`` (anchored at the root, ``**`` any depth). Negation (``!pattern``) and
nested ``.gitignore`` files are not supported (ignored lines; the file is then covered).
``DSH_CHECKPOINT_IGNORE`` is a comma-separated list of the same globs.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from ..errors import UserError

MB = 1024 * 1024
DEFAULT_MAX_FILE = 10 * MB
DEFAULT_MAX_TOTAL = 500 * MB
ALWAYS_SKIPPED = frozenset({".git"})


@dataclass(frozen=True)
class Pattern:
    regex: re.Pattern[str]
    anchored: bool
    dir_only: bool


def _compile(raw: str) -> Pattern | None:
    line = raw.strip()
    if not line or line.startswith(("#", "!")):
        return None
    dir_only = line.endswith("/")
    line = line.rstrip("/")
    anchored = "/" in line
    line = line.lstrip("/")
    if not line:
        return None
    text = fnmatch.translate(line.replace("**/", "\0").replace("/**", "\1"))
    text = text.replace("\0", "(?:.*/)?").replace("\1", "(?:/.*)?")
    return Pattern(re.compile(text), anchored, dir_only)


@dataclass(frozen=True)
class Limits:
    """The caps and ignore patterns of one workspace's checkpoints."""

    max_file: int = DEFAULT_MAX_FILE
    max_total: int = DEFAULT_MAX_TOTAL
    patterns: tuple[Pattern, ...] = field(default_factory=tuple)

    def ignored(self, rel: str, is_dir: bool, name: str | None = None) -> bool:
        name = name if name is not None else rel.rsplit("/", 1)[-1]
        if name in ALWAYS_SKIPPED:
            return True
        if not self.patterns:
            return False
        for p in self.patterns:
            if p.dir_only and not is_dir:
                continue
            if p.regex.match(rel if p.anchored else name):
                return True
        return False


def _size(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise UserError(f"{name}={raw!r} is not a number of bytes", code="BAD_CONFIG") from None
    if value < 0:
        raise UserError(f"{name} must be >= 0 bytes, not {value}", code="BAD_CONFIG")
    return value


def limits_for(cwd: str, env: Mapping[str, str] | None = None) -> Limits:
    """The limits of the workspace ``cwd`` from ``env`` (default ``os.environ``) and its ``.gitignore``."""
    env = os.environ if env is None else env
    lines: list[str] = [p for p in env.get("DSH_CHECKPOINT_IGNORE", "").split(",") if p.strip()]
    try:
        with open(os.path.join(cwd, ".gitignore"), encoding="utf-8", errors="replace") as fh:
            lines.extend(fh.read(1_000_000).splitlines())
    except OSError:
        pass
    patterns = tuple(p for p in (_compile(line) for line in lines) if p is not None)
    return Limits(_size(env, "DSH_CHECKPOINT_MAX_FILE", DEFAULT_MAX_FILE),
                  _size(env, "DSH_CHECKPOINT_MAX_TOTAL", DEFAULT_MAX_TOTAL), patterns)
