"""Reading any log, however broken, for inspection (``python -m dsh_notebook show``).

:func:`inspect_log` never writes to the file. It tries the strict path first — the same path as
resume: :func:`load_log` → :meth:`Session.restore` (all rules) → :func:`close_interrupted_turn`
on that in-memory copy — and falls back, step by step, when the log breaks a rule:

- a corrupt line in the middle is skipped (with a warning) instead of refusing the log;
- events that break a Session rule (a second result for one call, a result citing the wrong
  call, seqs with gaps after a skipped line) are folded without the rules: surface appends and
  those replaces whose ends are current nodes, nothing else.

Either way the messages go through :func:`repair_pairing`, so ``next_messages`` is always a
valid request body. Only an unreadable file (missing, no header, unknown version) is an error.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..errors import DshError, LogFormatError
from ..wire.events import AnyEvent, EventAdapter, SurfaceEventBase
from ..wire.log import SessionHeader
from ..wire.messages import AnyMessage
from .closers import close_interrupted_turn
from .persistence import LoadedLog, load_log, parse_header
from .repair import Repair, repair_pairing
from .session import Session, _derive

__all__ = ["Inspection", "derive_leniently", "inspect_log", "read_lenient"]


@dataclass
class Inspection:
    """What ``show`` prints: the log's events, what resume would add, and the next request."""

    header: SessionHeader
    events: list[AnyEvent]
    lines: list[str]
    closers: list[AnyEvent]
    next_messages: list[AnyMessage]
    repairs: list[Repair]
    warnings: list[str] = field(default_factory=list)
    strict: bool = True  # False: the log broke a Session rule and was folded leniently


def read_lenient(path: Path) -> LoadedLog:
    """:func:`load_log`, but a corrupt middle line is skipped with a warning, not refused."""
    try:
        return load_log(path)
    except LogFormatError as exc:
        if exc.code != "LOG_CORRUPT":
            raise
    raw = path.read_bytes().split(b"\n")
    while raw and not raw[-1].strip():
        raw.pop()
    loaded = LoadedLog(path, parse_header(raw[0], path), [], [])
    for n, line in enumerate(raw[1:], start=2):
        try:
            event = EventAdapter.validate_json(line)
        except ValueError:
            what = "torn last line" if n == len(raw) else "corrupt line"
            loaded.warnings.append(f"skipped {what} {n}")
            loaded.torn_tail = loaded.torn_tail or n == len(raw)
            continue
        loaded.events.append(event)
        loaded.lines.append(line.decode())
    return loaded


def derive_leniently(events: list[AnyEvent]) -> list[AnyMessage]:
    """The surface fold without the Session's rules (for logs that break them)."""
    nodes: list[AnyEvent] = []
    for ev in events:
        if not isinstance(ev, SurfaceEventBase):
            continue
        op = ev.surface_op
        if op is not None:
            seqs = [n.seq for n in nodes]
            if op.start_seq in seqs and op.end_seq in seqs:
                i, j = seqs.index(op.start_seq), seqs.index(op.end_seq)
                if i <= j:
                    nodes[i : j + 1] = [ev]
                    continue
        nodes.append(ev)
    out = [_derive(n) for n in nodes]  # type: ignore[arg-type]
    return [m for m in out if m is not None]


def inspect_log(path: str | Path) -> Inspection:
    """Read ``path`` for display (see the module doc). Never writes to the file."""
    loaded = read_lenient(Path(path))
    warnings = list(loaded.warnings)
    closers: list[AnyEvent] = []
    strict = True
    try:
        session = Session.restore(
            loaded.header.id, loaded.events, mark_seed=False
        )
        closers = close_interrupted_turn(session)
        messages: list[AnyMessage] = list(session.derive_messages())
    except DshError as exc:
        strict = False
        warnings.append(f"the log breaks a session rule, folded leniently: {exc}")
        messages = derive_leniently(loaded.events)
    repaired = repair_pairing(messages)
    return Inspection(
        loaded.header,
        loaded.events,
        loaded.lines,
        closers,
        list(repaired.messages),
        repaired.changes,
        warnings,
        strict,
    )
