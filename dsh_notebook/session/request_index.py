"""A light index of a log's requests for comparing huge sessions in linear time (pure; no I/O).

:func:`~.requests.request_points` materialises every request's full message list — for a long
session each request repeats the whole history, so that is quadratic in time and memory (a
100,000-event log would need gigabytes). ``compare`` only needs to know, pair by pair, whether
two requests carry the same model-visible messages, and the messages themselves only where they
differ. :class:`RequestIndex` gives each ``request/frozen`` a **fingerprint** of its message list
instead: a polynomial rolling hash (mod the Mersenne prime 2^127 − 1) of the 128-bit digests of
each message's masked canonical JSON (:func:`~.requests.model_view`'s form), folded message by
message and continued from the request it extends (``baseRequestSeq``). A rolling hash of a
concatenation depends only on the content, not on how the log chained its requests, so a
chained log and a flat one fingerprint alike. A runtime-context snapshot that repeats the
previous one is skipped as ``model_view`` skips it. Each message is hashed once per log.

Equal fingerprints mean equal message lists (and so equal repaired views); unequal ones are
checked exactly by the caller (:meth:`RequestIndex.point` materialises one request), so the
answer is always the exact one — only its cost changes.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import SessionError
from ..wire.events import AnyEvent, AssistantMessageEvent, RequestFrozen
from ..wire.messages import AnyMessage
from .requests import (
    RequestPoint,
    _is_snapshot,
    _messages_at,
    canonical,
    masked,
    resolve_message_seqs,
)
from .session import _derive

__all__ = ["Fingerprint", "RequestIndex", "RequestRef", "StepSummary", "step_summaries"]

_PRIME = (1 << 127) - 1
_BASE = 0x9E3779B97F4A7C15F39CC0605CEDC835 % _PRIME


@dataclass(frozen=True)
class Fingerprint:
    """What a request's message list hashes to: the rolling hash, its length, the last snapshot."""

    value: int = 0
    count: int = 0
    last_snapshot: int | None = None

    def same_messages(self, other: Fingerprint) -> bool:
        return (self.value, self.count) == (other.value, other.count)


@dataclass(frozen=True)
class RequestRef:
    """One request attempt without its messages: where it sits and what answered it."""

    seq: int
    turn: int
    step: int
    attempt: int
    model_id: str
    response_seq: int | None


class RequestIndex:
    """The request attempts of one log, their fingerprints, and one request's messages on demand."""

    def __init__(self, events: Sequence[AnyEvent]) -> None:
        self.events = events
        self.refs = _refs(events)
        self._digests: dict[int, tuple[int, bool] | None] = {}
        self._prints: dict[int, Fingerprint] = {}
        self._mask: tuple[str, ...] = ()

    @property
    def model_ids(self) -> set[str]:
        return {r.model_id for r in self.refs}

    def fingerprints(self, mask: Sequence[str]) -> dict[int, Fingerprint]:
        """Every request's fingerprint under ``mask`` (the model ids that are no difference)."""
        if tuple(mask) != self._mask or not self._prints:
            self._mask, self._digests, self._prints = tuple(mask), {}, {}
            for ref in self.refs:
                self._prints[ref.seq] = self._fold(ref.seq)
        return self._prints

    def point(self, ref: RequestRef) -> RequestPoint:
        """The full :class:`RequestPoint` of one request (its messages, repaired)."""
        messages, seqs = _messages_at(self.events, resolve_message_seqs(self.events, ref.seq))
        return RequestPoint(ref.seq, ref.turn, ref.step, ref.attempt, ref.model_id, tuple(seqs), tuple(messages),
                            ref.response_seq)

    def _fold(self, seq: int) -> Fingerprint:
        frozen = self.events[seq]
        assert isinstance(frozen, RequestFrozen)
        base = frozen.base_request_seq
        if base is not None and (base >= seq or base not in self._prints):
            raise SessionError(f"request/frozen {seq} has a bad baseRequestSeq", code="BAD_BASE_REQUEST")
        value, count, last = (self._prints[base].value, self._prints[base].count,
                              self._prints[base].last_snapshot) if base is not None else (0, 0, None)
        for s in frozen.message_seqs:
            digest = self._digest(s)
            if digest is None:
                continue
            h, snapshot = digest
            if snapshot:
                if h == last:
                    continue  # the same context again (model_view skips it too)
                last = h
            value, count = (value * _BASE + h) % _PRIME, count + 1
        return Fingerprint(value, count, last)

    def _digest(self, seq: int) -> tuple[int, bool] | None:
        if seq in self._digests:
            return self._digests[seq]
        if not 0 <= seq < len(self.events):
            raise SessionError(f"messageSeqs names seq {seq}, outside the log", code="BAD_MESSAGE_SEQS")
        message = _derive(self.events[seq])
        out = None
        if message is not None:
            text = masked(json.dumps(canonical(message), sort_keys=True, ensure_ascii=False), self._mask)
            out = (int.from_bytes(hashlib.blake2b(text.encode(), digest_size=16).digest(), "big"), _is_snapshot(message))
        self._digests[seq] = out
        return out


def _refs(events: Sequence[AnyEvent]) -> list[RequestRef]:
    """Every ``request/frozen`` and its answer, as :func:`~.requests.request_points` pairs them."""
    refs: list[RequestRef] = []
    open_: RequestFrozen | None = None
    for event in events:
        if isinstance(event, RequestFrozen):
            if open_ is not None:
                refs.append(_ref(open_, None))
            open_ = event
        elif isinstance(event, AssistantMessageEvent) and open_ is not None:
            same = (event.turn, event.step) == (open_.turn, open_.step)
            refs.append(_ref(open_, event.seq if same else None))
            open_ = None
    if open_ is not None:
        refs.append(_ref(open_, None))
    return refs


def _ref(frozen: RequestFrozen, response_seq: int | None) -> RequestRef:
    return RequestRef(frozen.seq, frozen.turn, frozen.step, frozen.attempt, f"{frozen.provider}:{frozen.model}",
                      response_seq)


@dataclass(frozen=True)
class StepSummary:
    """The last request attempt of one (turn, step): how many messages it carried and the last one."""

    ref: RequestRef
    messages: int
    last: AnyMessage | None


def step_summaries(events: Sequence[AnyEvent]) -> dict[tuple[int, int], StepSummary]:
    """Per (turn, step), its last request attempt with its message count and last message, in one
    pass: a request continues the count and the last message of the request it extends, so nothing
    is materialised per request (what the compare widget shows for each aligned step). The messages
    are the log's derived messages, as sent (a log whose requests needed pairing repair may count a
    synthetic result fewer than :func:`~.requests.request_points` does)."""
    derived: dict[int, AnyMessage | None] = {}
    tails: dict[int, tuple[int, AnyMessage | None]] = {}
    out: dict[tuple[int, int], StepSummary] = {}
    for ref in _refs(events):
        frozen = events[ref.seq]
        assert isinstance(frozen, RequestFrozen)
        base = frozen.base_request_seq
        if base is not None and base not in tails:
            raise SessionError(f"request/frozen {ref.seq} has a bad baseRequestSeq", code="BAD_BASE_REQUEST")
        count, last = tails[base] if base is not None else (0, None)
        for s in frozen.message_seqs:
            if s not in derived:
                if not 0 <= s < len(events):
                    raise SessionError(f"messageSeqs names seq {s}, outside the log", code="BAD_MESSAGE_SEQS")
                derived[s] = _derive(events[s])
            message = derived[s]
            if message is not None:
                count, last = count + 1, message
        tails[ref.seq] = (count, last)
        out[(ref.turn, ref.step)] = StepSummary(ref, count, last)
    return out
