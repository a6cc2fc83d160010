"""The rules a Session applies before an event is committed (DESIGN §4, upstream checklist 1–2).

Pure checks over the Session's state, kept apart from the Session so each rule reads on its own:

- :func:`check_envelope` — ``seq`` is the next index, ``time`` is epoch ms.
- :func:`freeze_payload` — JSON payloads (``config``, tool ``parameters``, ``repairs``) are checked
  for lossless JSON and replaced by copies that refuse mutation.
- :func:`check_provenance` — ``sourceEventSeqs`` non-empty, unique, each an earlier seq; a
  ``tool/result`` that appends cites exactly one open ``tool/call`` seq of its call id, first (a
  result with no logged call, e.g. crash repair's ``TOOL_NOT_STARTED``, carries none; after it,
  the ``debug/edit`` events that changed the call or its result).
- :func:`check_replace` — both ends of a replace are current surface nodes in order, every
  shadowed node is cited; a ``tool/result`` replacement shadows exactly one ``tool/result`` of the
  same call id (tool-result pruning).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import ProvenanceError, SessionError
from ..wire.events import AnyEvent, DebugEdit, RequestHeader, SurfaceEventBase, ToolResult
from .lossless import check_lossless, deep_freeze


def check_envelope(event: AnyEvent, next_seq: int) -> None:
    if event.seq != next_seq:
        raise SessionError(f"event seq {event.seq} is not the next seq {next_seq}", code="BAD_SEQ")
    if type(event.time) is not int or event.time < 0:
        raise SessionError(f"event time {event.time!r} is not epoch ms", code="BAD_TIME")


def freeze_payload(event: AnyEvent) -> AnyEvent:
    """Check JSON payloads for losslessness and return the event holding frozen copies of them.

    Only events that carry free-form JSON need this; every other field is a frozen model, a
    tuple, a str or an int already. The returned event is a fresh object, never the caller's.
    """
    if isinstance(event, RequestHeader):
        check_lossless(event.config, "$.config")
        check_lossless([t.parameters for t in event.tools], "$.tools")
        tools = tuple(
            t.model_copy(update={"parameters": deep_freeze(t.parameters)}) for t in event.tools
        )
        return event.model_copy(update={"config": deep_freeze(event.config), "tools": tools})
    return event


def check_provenance(
    event: AnyEvent, n_events: int, open_calls: dict[str, list[int]], events: Sequence[AnyEvent] = ()
) -> None:
    src = event.source_event_seqs
    if isinstance(event, ToolResult) and event.surface_op is None:
        call_id = event.message.tool_call_id
        open_seqs = open_calls.get(call_id) or []
        if src is None:
            if open_seqs:
                raise ProvenanceError(
                    f"tool/result for {call_id!r} must cite its tool/call seq {open_seqs[0]}"
                )
            return
        extras_ok = all(0 <= s < len(events) and isinstance(events[s], DebugEdit) for s in src[1:])
        if not src or src[0] not in open_seqs or not extras_ok:
            raise ProvenanceError(
                f"tool/result for {call_id!r} must cite exactly its open tool/call seq (then only "
                f"debug/edit events); got {list(src)}, open: {open_seqs}"
            )
    if src is None:
        return
    if len(src) == 0:
        raise ProvenanceError("sourceEventSeqs must not be empty when present")
    if len(set(src)) != len(src):
        raise ProvenanceError(f"sourceEventSeqs has duplicates: {list(src)}")
    for s in src:
        if type(s) is not int or not 0 <= s < n_events:
            raise ProvenanceError(f"sourceEventSeqs cites {s}, not an earlier event (< {n_events})")


def check_replace(
    event: SurfaceEventBase, nodes: Sequence[int], events: Sequence[AnyEvent]
) -> tuple[int, int]:
    """Validate a replace against the current surface; returns the node index range ``i..j``."""
    op = event.surface_op
    assert op is not None
    try:
        i, j = nodes.index(op.start_seq), nodes.index(op.end_seq)
    except ValueError:
        raise ProvenanceError(
            f"replace {op.start_seq}..{op.end_seq}: both ends must be current surface nodes"
        ) from None
    if i > j:
        raise ProvenanceError(f"replace {op.start_seq}..{op.end_seq}: start comes after end")
    shadowed = nodes[i : j + 1]
    missing = set(shadowed) - set(event.source_event_seqs or ())
    if missing:
        raise ProvenanceError(
            f"replace must cite every shadowed node in sourceEventSeqs; missing {sorted(missing)}"
        )
    if isinstance(event, ToolResult):
        old: Any = events[shadowed[0]]
        if (
            len(shadowed) != 1
            or not isinstance(old, ToolResult)
            or old.message.tool_call_id != event.message.tool_call_id
        ):
            raise ProvenanceError(
                "a tool/result replacement must shadow exactly one tool/result of the same call"
            )
    return i, j
