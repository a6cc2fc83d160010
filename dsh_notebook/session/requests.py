"""The requests of a logged session, read back from its events (pure; no I/O).

Every model request attempt is a ``request/frozen`` event whose ``messageSeqs`` name the surface
events its messages came from (``baseRequestSeq`` chains an incremental request to the one it
extends). :func:`request_points` turns a log into one :class:`RequestPoint` per attempt: the
exact messages it carried (derived from those seqs, then repaired at the API boundary the way
the agent repairs them) and the assistant message that answered it, if one was committed.

Two users: the ``replay:<session>`` model (answer a request with the response the origin got
for the same messages) and ``compare`` (align two sessions by turn and step and find where they
first differ). Messages are compared in their **model-visible** form (:func:`canonical`): role,
content blocks, tool-call id and error flag — not where a message came from (``source``) nor
which provider produced it. The system prompt and the runtime context name the model a session
runs on (``You run on script:auto``); a replay runs on ``replay:<origin>``, so comparisons
*mask* the model ids (:data:`MODEL_MASK`) — two requests that differ only in the name of the
model they were sent to are the same request — and a runtime-context snapshot that, masked,
repeats the snapshot before it (the projection re-sends it because the model name changed) is
no difference either (:func:`model_view`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import JsonValue

from ..errors import SessionError
from ..wire.events import AnyEvent, AssistantMessageEvent, RequestFrozen
from ..wire.messages import AnyMessage
from .repair import repair_pairing
from .session import _derive

__all__ = [
    "MODEL_MASK", "RequestPoint", "canonical", "canonical_key", "masked", "model_view", "request_points",
    "resolve_message_seqs",
]

_HIDDEN = ("source", "provider", "model")
MODEL_MASK = "<model>"


def resolve_message_seqs(events: Sequence[AnyEvent], seq: int) -> list[int]:
    """The full ``messageSeqs`` of the ``request/frozen`` at ``seq`` (following ``baseRequestSeq``)."""
    parts: list[tuple[int, ...]] = []
    cursor: int | None = seq
    while cursor is not None:
        event = events[cursor]
        if not isinstance(event, RequestFrozen):
            raise SessionError(f"seq {cursor} is {event.type}, not request/frozen", code="NOT_A_REQUEST")
        parts.append(event.message_seqs)
        if event.base_request_seq is not None and event.base_request_seq >= cursor:
            raise SessionError(f"request/frozen {cursor} has a bad baseRequestSeq", code="BAD_BASE_REQUEST")
        cursor = event.base_request_seq
    out: list[int] = []
    for part in reversed(parts):
        out.extend(part)
    return out


def canonical(message: AnyMessage) -> dict[str, JsonValue]:
    """A message as the model sees it: JSON, without ``source`` / ``provider`` / ``model``."""
    out: dict[str, JsonValue] = message.model_dump(mode="json", exclude_none=True)
    for key in _HIDDEN:
        out.pop(key, None)
    return out


def masked(text: str, model_ids: Sequence[str]) -> str:
    """``text`` with each of ``model_ids`` (``provider:model``) replaced by :data:`MODEL_MASK`."""
    for model_id in sorted({m for m in model_ids if m}, key=len, reverse=True):
        text = text.replace(model_id, MODEL_MASK)
    return text


def _is_snapshot(message: AnyMessage) -> bool:
    source = getattr(message, "source", None)
    return source is not None and source.kind == "plugin" and source.form == "snapshot"


def model_view(messages: Sequence[AnyMessage], model_ids: Sequence[str] = ()) -> list[tuple[int, str]]:
    """``(index, masked canonical JSON)`` of each message that counts in a comparison."""
    out: list[tuple[int, str]] = []
    last_snapshot: str | None = None
    for k, message in enumerate(messages):
        text = masked(json.dumps(canonical(message), sort_keys=True, ensure_ascii=False), model_ids)
        if _is_snapshot(message):
            if text == last_snapshot:
                continue  # the same context again, only under another model's name
            last_snapshot = text
        out.append((k, text))
    return out


def canonical_key(messages: Sequence[AnyMessage], model_ids: Sequence[str] = ()) -> str:
    """One string per distinct model-visible message list (a dictionary key)."""
    return "\n".join(text for _, text in model_view(messages, model_ids))


@dataclass(frozen=True)
class RequestPoint:
    """One request attempt of a log: where it sits, what it carried, what answered it."""

    seq: int  # its request/frozen
    turn: int
    step: int
    attempt: int
    model_id: str  # ``provider:model`` it was sent to
    message_seqs: tuple[int, ...]  # surface seq of each message (-1: added by pairing repair)
    messages: tuple[AnyMessage, ...]
    response_seq: int | None  # the assistant/message that answered it, if one was committed

    def response(self, events: Sequence[AnyEvent]) -> AssistantMessageEvent | None:
        if self.response_seq is None:
            return None
        event = events[self.response_seq]
        return event if isinstance(event, AssistantMessageEvent) else None


def _messages_at(events: Sequence[AnyEvent], seqs: list[int]) -> tuple[list[AnyMessage], list[int]]:
    raw: list[AnyMessage] = []
    kept: list[int] = []
    for s in seqs:
        if not 0 <= s < len(events):
            raise SessionError(f"messageSeqs names seq {s}, outside the log", code="BAD_MESSAGE_SEQS")
        message = _derive(events[s])
        if message is not None:
            raw.append(message)
            kept.append(s)
    repaired = repair_pairing(raw)
    if not repaired.changed:
        return raw, kept
    # map each repaired message back to its surface seq by identity (synthetic results: -1)
    by_id = {id(m): s for m, s in zip(raw, kept, strict=True)}
    return list(repaired.messages), [by_id.get(id(m), -1) for m in repaired.messages]


def request_points(events: Sequence[AnyEvent]) -> list[RequestPoint]:
    """Every ``request/frozen`` of ``events`` with its messages and its answer, in seq order."""
    points: list[RequestPoint] = []
    open_point: tuple[RequestFrozen, list[AnyMessage], list[int]] | None = None

    def close(response_seq: int | None) -> None:
        nonlocal open_point
        if open_point is None:
            return
        frozen, messages, seqs = open_point
        points.append(
            RequestPoint(
                frozen.seq, frozen.turn, frozen.step, frozen.attempt, f"{frozen.provider}:{frozen.model}", tuple(seqs),
                tuple(messages), response_seq,
            )
        )
        open_point = None

    for event in events:
        if isinstance(event, RequestFrozen):
            close(None)
            messages, seqs = _messages_at(events, resolve_message_seqs(events, event.seq))
            open_point = (event, messages, seqs)
        elif isinstance(event, AssistantMessageEvent) and open_point is not None:
            frozen = open_point[0]
            close(event.seq if (event.turn, event.step) == (frozen.turn, frozen.step) else None)
    close(None)
    return points
