"""The sandbox limits every built-in tool works under (seed 001 L7: guard / approval / sandbox).

- :class:`Workspace` confines paths to the session's workspace: a path is joined to the root
  when relative, then **resolved with every symlink followed** (also dangling ones), and refused
  with ``ToolError(code="OUTSIDE_WORKSPACE")`` when the real path is not under the real root.
  ``..`` escapes, absolute paths elsewhere, and symlinks (files or directories) that point out
  are all caught by the same check, because it looks at where the path really leads.
- :func:`scrubbed_env` is the parent's environment minus anything that looks like a credential
  (by name: ``*KEY*``, ``*TOKEN*``, ``*SECRET*``, ``*PASS*``, ``*AUTH*`` …; by value: URLs with
  a password). The ``bash`` tool uses the stricter allow-list of :mod:`.confine` instead.
- :class:`HeadTail` and :func:`cap_middle` bound output sizes while keeping both ends, which is
  where the useful part of a long log usually is (the command, and the error at the end).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from ..errors import ToolError
from ..redaction import is_secret_name, url_password

_FORCED_ENV = {"PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"}
__all__ = ["HeadTail", "Workspace", "cap_middle", "is_secret_name", "scrubbed_env"]


def scrubbed_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """A copy of ``base`` (default ``os.environ``) without credentials, with non-interactive pagers.

    ``PATH``, ``HOME``, ``LANG``, ``LC_*``, ``TERM``, ``USER``, ``SHELL``, ``TMPDIR`` and every
    other non-secret variable are kept, so commands behave as in the user's own shell.
    """
    src = os.environ if base is None else base
    env = {k: v for k, v in src.items() if not is_secret_name(k) and url_password(v) is None}
    env.update(_FORCED_ENV)
    return env


class Workspace:
    """A directory that tool paths are confined to."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(os.path.realpath(os.fspath(root)))

    def resolve(self, path: str | os.PathLike[str]) -> Path:
        """The real path of ``path`` (relative to the root, or absolute inside it).

        Raises ``ToolError(code="OUTSIDE_WORKSPACE")`` when it leads outside the workspace and
        ``ToolError(code="INVALID_PATH")`` for paths the OS cannot represent.
        """
        raw = os.fspath(path)
        try:
            candidate = Path(raw)
            if not candidate.is_absolute():
                candidate = self.root / candidate
            real = Path(os.path.realpath(candidate))
        except (ValueError, OSError) as exc:
            raise ToolError(f"invalid path {raw!r}: {exc}", code="INVALID_PATH") from exc
        if not self.contains(real):
            raise ToolError(
                f"path {raw!r} resolves to {real}, which is outside the workspace {self.root}; "
                "access denied (only files inside the workspace can be used)",
                code="OUTSIDE_WORKSPACE",
            )
        return real

    def contains(self, real: Path) -> bool:
        """True when the (already resolved) path is the root or below it."""
        return real == self.root or real.is_relative_to(self.root)

    def relative(self, real: Path) -> str:
        """``real`` shown relative to the root (``.`` for the root itself)."""
        try:
            rel = real.relative_to(self.root)
        except ValueError:
            return str(real)
        return rel.as_posix() or "."

    def __repr__(self) -> str:
        return f"Workspace({str(self.root)!r})"


def elision_marker(count: int, unit: str = "characters") -> str:
    return f"\n\n[... {count} {unit} elided from the middle of the output ...]\n\n"


def cap_middle(text: str, limit: int) -> str:
    """``text`` if it fits in ``limit`` characters, else its head and tail with a marker between."""
    if len(text) <= limit:
        return text
    head = limit // 2
    tail = limit - head
    return text[:head] + elision_marker(len(text) - head - tail) + text[len(text) - tail :]


class HeadTail:
    """A byte sink that keeps the first ``head`` and the last ``tail`` bytes of a stream.

    Memory stays bounded however much a command prints; :meth:`text` decodes what was kept and
    puts an elision marker where the middle was dropped.
    """

    def __init__(self, head: int = 15_000, tail: int = 15_000) -> None:
        self.head_limit = head
        self.tail_limit = tail
        self._head = bytearray()
        self._tail = bytearray()
        self.total = 0

    def write(self, data: bytes) -> None:
        self.total += len(data)
        room = self.head_limit - len(self._head)
        if room > 0:
            self._head += data[:room]
            data = data[room:]
        if data:
            self._tail += data
            if len(self._tail) > 2 * self.tail_limit:
                del self._tail[: len(self._tail) - self.tail_limit]

    @property
    def elided(self) -> int:
        return max(0, self.total - len(self._head) - min(len(self._tail), self.tail_limit))

    def text(self) -> str:
        tail = bytes(self._tail[-self.tail_limit :]) if self.tail_limit else b""
        head = self._head.decode("utf-8", errors="replace")
        if not self.elided:
            return (bytes(self._head) + bytes(self._tail)).decode("utf-8", errors="replace")
        return head + elision_marker(self.elided, "bytes") + tail.decode("utf-8", errors="replace")
