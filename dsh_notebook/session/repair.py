"""Pairing repair at the API boundary (seed 003, third layer) — pure, over derived messages.

Whatever the log holds, the messages a request carries must pair every assistant tool call with
exactly one tool message, placed right after that assistant message and before any other role
(what OpenAI-compatible APIs demand). One left-to-right pass does it; each repair is reported as
a :class:`Repair` (``index`` is the position in the *input* of the message concerned — for a
synthetic result, of the assistant message whose call it answers):

- ``synthetic-result`` — a call with no tool message in its batch gets an error result
  (``"Error: no result was recorded for this tool call"``, ``isError``) placed right after the
  batch's existing results, in call order.
- ``stripped-leading-orphan`` — a tool message before the first assistant message (the head of a
  resumed or compacted history) is removed.
- ``dropped-orphan`` — a tool message whose call does not precede it is removed.
- ``dropped-duplicate`` — a second tool message for an already answered call is removed.
- ``dropped-late-result`` — a tool message for an earlier call, separated from that call's batch
  by another role, is removed; its call was answered synthetically in its batch. (Moving it up
  would reorder facts, and would make the incremental form rewrite what it already produced.)
- ``renamed-duplicate-call`` — a tool-call id already used earlier in the request (some servers
  restart ``call_0`` every response) or empty gets a fresh id ``<id>_dup<n>`` (n ≥ 2; ids stay
  within ``[A-Za-z0-9_-]`` when the original is); the tool messages of its own batch follow it. Renaming keeps both calls and their results visible to the model,
  where dropping would lose them, and no request ever carries a duplicate id.

Tool messages bind to the first unanswered call with that id in the open batch, so duplicate ids
inside one message pair positionally. ``strict=True`` raises ``SessionError`` with code
``UNPAIRED_TOOL_CALLS`` instead of changing anything. The output needs no repair: repair is
idempotent. :class:`PairingRepairer` is the incremental form (cost per call proportional to the
messages added since its last call); :func:`repair_pairing` is one full pass.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar, overload

from pydantic import JsonValue

from ..errors import SessionError
from ..wire.events import RepairNote
from ..wire.messages import AnyMessage, AssistantMessage, ToolCallBlock, ToolMessage, tool_text
from .closers import close_interrupted_turn
from .history import MessageHistory

__all__ = [
    "SYNTHETIC_RESULT_TEXT",
    "PairingRepairer",
    "Repair",
    "RepairResult",
    "close_interrupted_turn",
    "repair_pairing",
]

SYNTHETIC_RESULT_TEXT = "Error: no result was recorded for this tool call"


@dataclass(frozen=True)
class Repair:
    """One change the repair made."""

    kind: str
    call_id: str
    index: int
    detail: str = ""

    def to_dict(self) -> dict[str, JsonValue]:
        return {"kind": self.kind, "callId": self.call_id, "index": self.index, "detail": self.detail}

    def note(self) -> RepairNote:
        """The record ``request/frozen.repairs`` keeps of it."""
        return RepairNote(kind=self.kind, call_id=self.call_id, index=self.index, detail=self.detail)


T = TypeVar("T")


class RepairedMessages(Sequence[T]):
    """Messages = a shared, append-only prefix (first ``n``) + a small tail; O(1) to build."""

    __slots__ = ("_base", "_n", "_tail")

    def __init__(self, base: list[T], n: int, tail: tuple[T, ...] = ()) -> None:
        self._base, self._n, self._tail = base, n, tail

    def __len__(self) -> int:
        return self._n + len(self._tail)

    @overload
    def __getitem__(self, i: int) -> T: ...
    @overload
    def __getitem__(self, i: slice) -> list[T]: ...
    def __getitem__(self, i: int | slice) -> T | list[T]:
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        return self._base[i] if i < self._n else self._tail[i - self._n]

    def __iter__(self) -> Iterator[T]:
        base = self._base
        for k in range(self._n):
            yield base[k]
        yield from self._tail

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)

    def __repr__(self) -> str:
        return f"RepairedMessages({list(self)!r})"


@dataclass(frozen=True)
class RepairResult:
    """The repaired messages, what changed, and (incremental form) each message's surface seq."""

    messages: Sequence[AnyMessage]
    changes: list[Repair]
    seqs: Sequence[int] | None = field(default=None, repr=False)  # -1 for a synthetic result

    @property
    def changed(self) -> bool:
        return bool(self.changes)

    @property
    def message_seqs(self) -> list[int]:
        """The surface seqs the messages came from (synthetic results have none)."""
        return [s for s in self.seqs or () if s >= 0]


@dataclass
class _Call:
    orig: str
    out: str
    answered: bool = False


class _Pairing:
    """The state of one left-to-right pass; ``feed`` one input message at a time."""

    def __init__(self) -> None:
        self.out: list[AnyMessage] = []
        self.out_seqs: list[int] = []
        self.changes: list[Repair] = []
        self.used_ids: set[str] = set()
        self.answered: set[str] = set()  # original ids answered by a real tool message
        self.synthesised: set[str] = set()  # original ids answered synthetically
        self.seen_assistant = False
        self.batch: list[_Call] = []
        self.batch_msgs: list[AnyMessage] = []
        self.batch_seqs: list[int] = []
        self.batch_index = -1

    def feed(self, m: AnyMessage, k: int, seq: int) -> None:
        if isinstance(m, ToolMessage):
            self._tool(m, k, seq)
            return
        self._close_batch()
        if isinstance(m, AssistantMessage):
            self.seen_assistant = True
            if m.tool_calls:
                self._open_batch(m, k, seq)
                return
        self.out.append(m)
        self.out_seqs.append(seq)

    def _tool(self, m: ToolMessage, k: int, seq: int) -> None:
        cid = m.tool_call_id
        for call in self.batch:
            if call.orig == cid and not call.answered:
                call.answered = True
                self.answered.add(cid)
                if call.out != cid:
                    m = m.model_copy(update={"tool_call_id": call.out})
                self.batch_msgs.append(m)
                self.batch_seqs.append(seq)
                return
        if cid in self.answered:
            kind, why = "dropped-duplicate", "a second result for an answered call"
        elif cid in self.synthesised:
            kind, why = "dropped-late-result", "separated from its call's batch by another role"
        elif not self.seen_assistant:
            kind, why = "stripped-leading-orphan", "a result before any assistant message"
        else:
            kind, why = "dropped-orphan", "no call with this id precedes it"
        self.changes.append(Repair(kind, cid, k, why))

    def _open_batch(self, m: AssistantMessage, k: int, seq: int) -> None:
        blocks: list[Any] = list(m.content)
        renamed = False
        for i, b in enumerate(blocks):
            if isinstance(b, ToolCallBlock):
                new_id = b.id
                if not b.id or b.id in self.used_ids:
                    new_id = self._fresh_id(b.id)
                    blocks[i] = b.model_copy(update={"id": new_id})
                    renamed = True
                    why = f"id {b.id!r} already used earlier; renamed {new_id!r}"
                    self.changes.append(Repair("renamed-duplicate-call", b.id, k, why))
                self.used_ids.add(new_id)
                self.batch.append(_Call(b.id, new_id))
        if renamed:
            m = m.model_copy(update={"content": tuple(blocks)})
        self.batch_msgs, self.batch_seqs, self.batch_index = [m], [seq], k

    def _fresh_id(self, base: str) -> str:
        base = base or "call"
        n = 2
        while f"{base}_dup{n}" in self.used_ids:
            n += 1
        return f"{base}_dup{n}"

    def _synthetic(self) -> tuple[list[AnyMessage], list[Repair]]:
        msgs: list[AnyMessage] = []
        changes: list[Repair] = []
        for call in self.batch:
            if not call.answered:
                msgs.append(tool_text(call.out, SYNTHETIC_RESULT_TEXT, is_error=True))
                why = "no tool message answered this call in its batch"
                changes.append(Repair("synthetic-result", call.out, self.batch_index, why))
        return msgs, changes

    def _close_batch(self) -> None:
        if not self.batch_msgs:
            return
        msgs, changes = self._synthetic()
        self.synthesised.update(c.orig for c in self.batch if not c.answered)
        self.out.extend(self.batch_msgs)
        self.out_seqs.extend(self.batch_seqs)
        self.out.extend(msgs)
        self.out_seqs.extend([-1] * len(msgs))
        self.changes.extend(changes)
        self.batch, self.batch_msgs, self.batch_seqs = [], [], []

    def result(self) -> RepairResult:
        msgs, changes = self._synthetic()
        n = len(self.out)
        tail = (*self.batch_msgs, *msgs)
        seq_tail = (*self.batch_seqs, *([-1] * len(msgs)))
        return RepairResult(
            RepairedMessages(self.out, n, tail),
            self.changes + changes,
            RepairedMessages(self.out_seqs, n, seq_tail),
        )


def _raise_unpaired(changes: list[Repair]) -> None:
    summary = "; ".join(f"{c.kind} {c.call_id!r} at {c.index}" for c in changes[:5])
    more = f" (+{len(changes) - 5} more)" if len(changes) > 5 else ""
    raise SessionError(
        f"tool calls and results do not pair: {summary}{more}", code="UNPAIRED_TOOL_CALLS"
    )


def repair_pairing(messages: Sequence[AnyMessage], *, strict: bool = False) -> RepairResult:
    """Repair ``messages`` for an OpenAI-compatible request (one full pass; see module doc)."""
    state = _Pairing()
    seqs = messages.seqs if isinstance(messages, MessageHistory) else None
    for k, m in enumerate(messages):
        state.feed(m, k, seqs[k] if seqs is not None else -1)
    result = state.result()
    if strict and result.changes:
        _raise_unpaired(result.changes)
    return RepairResult(list(result.messages), result.changes, list(result.seqs or ()))


class PairingRepairer:
    """Incremental :func:`repair_pairing` for one session's successive histories.

    When the history passed in extends the previous one (same ``MessageHistory`` lineage, only
    appended to), only the new messages are processed and the result shares the already
    repaired prefix; otherwise (a replace, another session) it starts over. The result's
    ``messages`` and ``seqs`` are read-only sequences.
    """

    def __init__(self) -> None:
        self._state = _Pairing()
        self._last: MessageHistory | None = None
        self.full_passes = 0

    def repair(self, history: Sequence[AnyMessage], *, strict: bool = False) -> RepairResult:
        if isinstance(history, MessageHistory) and history.extends(self._last):
            start = len(self._last) if self._last is not None else 0
        else:
            self._state, start = _Pairing(), 0
            self.full_passes += 1
        n = len(history)
        if isinstance(history, MessageHistory):
            new, seqs = history[start:n], history.seqs_between(start, n)
            self._last = history
        else:
            new, seqs, self._last = list(history), [-1] * n, None
        for k, (m, s) in enumerate(zip(new, seqs, strict=True), start):
            self._state.feed(m, k, s)
        result = self._state.result()
        if strict and result.changes:
            _raise_unpaired(result.changes)
        return result
