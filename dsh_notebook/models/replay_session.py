"""``replay:<session id or log>``: answer each request with what the origin session got for it.

:class:`SessionReplayModel` reads a saved session and indexes every request attempt that got an
answer by its model-visible messages (:mod:`dsh_notebook.session.requests`). A request with the
same messages as one of the origin's is answered with the origin's recorded response, streamed
as it was recorded (:meth:`ReplayModel.chunks`). The first request that matches none ends the
replay with ``REPLAY_DIVERGED``: the error names the origin request it is closest to, the first
message where they differ and how — the usual cause is an edit at a fork point, or a tool whose
output changed. This is what makes ``fork --at SEQ`` + ``--model replay:<origin>`` a way to
ask "what would the model have done if this had been different?" without spending a model call
on the part that did not change.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

from ..errors import ModelError
from ..session.requests import RequestPoint, canonical_key, model_view, request_points
from ..wire.events import AnyEvent, AssistantMessageEvent
from .base import ModelAdapter, ModelRequest, StreamChunk
from .replay import ReplayModel, load_events

__all__ = ["SessionReplayModel", "describe_divergence"]


def _snippets(a: str | None, b: str | None, n: int = 70) -> tuple[str, str]:
    """Both texts around where they first differ."""
    if a is None or b is None:
        return (a or "(no message)")[:n], (b or "(no message)")[:n]
    k = 0
    while k < min(len(a), len(b)) and a[k] == b[k]:
        k += 1
    start = max(0, k - n // 3)

    def cut(t: str) -> str:
        return ("…" if start else "") + t[start : start + n] + ("…" if start + n < len(t) else "")

    return cut(a), cut(b)


def _common_prefix(a: Sequence[str], b: Sequence[str]) -> int:
    k = 0
    while k < min(len(a), len(b)) and a[k] == b[k]:
        k += 1
    return k


def describe_divergence(
    origin_id: str, points: Sequence[RequestPoint], request: ModelRequest, model_ids: Sequence[str] = ()
) -> str:
    """Which origin request ``request`` is closest to, and where they first differ."""
    mask = [*model_ids, f"{request.provider}:{request.model}"]
    view = model_view(request.messages, mask)
    mine = [text for _, text in view]
    if not points:
        return f"{origin_id} has no answered requests to replay"
    views = {p.seq: model_view(p.messages, mask) for p in points}
    scored = [(_common_prefix([t for _, t in views[p.seq]], mine), p) for p in points]
    k, best = max(scored, key=lambda item: item[0])
    theirs = [text for _, text in views[best.seq]]
    at = views[best.seq][k][0] if k < len(theirs) else None
    seq = best.message_seqs[at] if at is not None and at < len(best.message_seqs) else None
    index = view[k][0] if k < len(view) else len(request.messages)  # the index in this request
    where = f"message {index}" + (f" (origin seq {seq})" if seq is not None and seq >= 0 else "")
    a, b = _snippets(theirs[k] if k < len(theirs) else None, mine[k] if k < len(mine) else None)
    what = _what_differs(request.messages[index] if index < len(request.messages) else None)
    return (
        f"this request diverges from {origin_id}: closest is its request/frozen {best.seq} "
        f"(turn {best.turn} step {best.step}); they agree on {k} message{'' if k == 1 else 's'} and differ at {where}{what}: "
        f"origin has {a} — this request has {b}"
    )


def _what_differs(message: Any) -> str:
    """What kind of message differs, and what that usually means for a replay."""
    role = getattr(message, "role", None)
    if role == "tool":
        return (f", the result of tool call {getattr(message, 'tool_call_id', '?')} (the tool saw other files: "
                "replay needs the workspace as it was when the origin ran)")
    source = getattr(message, "source", None)
    if role == "user" and getattr(source, "kind", None) == "plugin":
        return ", the runtime context (working directory, date or model differ from the origin's)"
    if role == "user":
        return ", the person's prompt"
    return ""


class SessionReplayModel(ModelAdapter):
    """Replays a saved session's responses for as long as the requests match."""

    provider = "replay"
    base_url = None

    def __init__(self, source: str | Path | Sequence[Any], *, origin_id: str | None = None) -> None:
        self.events: list[AnyEvent] = load_events(source)
        self.origin_id = origin_id or (Path(source).stem if isinstance(source, str | Path) else "the origin")
        self.points = [p for p in request_points(self.events) if p.response_seq is not None]
        if not self.points:  # refused when the model is built (before a prompt is logged), not per request
            raise ModelError(f"{self.origin_id} has no answered requests to replay (it never got a model "
                             "response): replay a session that did, or give a model", code="REPLAY_DIVERGED")
        # the model ids the origin's history names (its system prompt and runtime contexts)
        self.model_ids = sorted({p.model_id for p in self.points})
        self._answers: dict[str, AssistantMessageEvent] = {}
        for point in self.points:
            response = point.response(self.events)
            if response is not None:
                self._answers.setdefault(canonical_key(point.messages, self.model_ids), response)
        self._chunker = ReplayModel([], pieces=3)
        self.replayed = 0

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamChunk]:
        mask = [*self.model_ids, f"{request.provider}:{request.model}"]
        response = self._answers.get(canonical_key(request.messages, mask))
        if response is None:
            raise ModelError(
                describe_divergence(self.origin_id, self.points, request, self.model_ids), code="REPLAY_DIVERGED"
            )
        self.replayed += 1
        for _, chunk in self._chunker.chunks(response.message, response.stream, response.usage):
            await asyncio.sleep(0)
            yield chunk
