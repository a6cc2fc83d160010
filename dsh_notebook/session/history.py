"""``MessageHistory``: the O(1) snapshot that :meth:`Session.derive_messages` returns.

A snapshot shares the Session's message list and remembers its length. The Session only ever
appends to that list; a surface *replace* builds new lists (and bumps ``generation``), so every
snapshot handed out stays valid and unchanged forever. Slicing copies only the slice, so reading
the tail of a long history (what incremental consumers do) costs what the tail costs.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import overload

from ..wire.messages import AnyMessage, ReasoningBlock, TextBlock, ToolCallBlock


def message_chars(message: AnyMessage) -> int:
    """The characters a message carries (text, reasoning, a tool call's name, id and arguments):
    what the cheap token estimate counts (``agent.compaction.estimate_tokens``)."""
    n = 0
    for block in message.content:
        if isinstance(block, TextBlock | ReasoningBlock):
            n += len(block.text)
        elif isinstance(block, ToolCallBlock):
            n += len(block.name) + len(block.arguments) + len(block.id)
    return n


class MessageHistory(Sequence[AnyMessage]):
    """An immutable snapshot of the derived messages, with the surface seq of each."""

    __slots__ = ("_msgs", "_n", "_seqs", "_sums", "generation")

    def __init__(self, msgs: list[AnyMessage], seqs: list[int], n: int, generation: int,
                 sums: list[int] | None = None) -> None:
        self._msgs, self._seqs, self._n, self.generation = msgs, seqs, n, generation
        self._sums = [0] if sums is None else sums  # running message_chars totals, shared like msgs

    def chars(self) -> int:
        """:func:`message_chars` of every message, summed. The running totals are shared by every
        snapshot of one message list (it only grows), so a step pays for its new messages only."""
        sums, msgs = self._sums, self._msgs
        for k in range(len(sums) - 1, self._n):
            sums.append(sums[-1] + message_chars(msgs[k]))
        return sums[self._n]

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, i: int) -> AnyMessage: ...
    @overload
    def __getitem__(self, i: slice) -> list[AnyMessage]: ...
    def __getitem__(self, i: int | slice) -> AnyMessage | list[AnyMessage]:
        if isinstance(i, slice):
            start, stop, step = i.indices(self._n)
            return self._msgs[start:stop:step]
        if i < 0:
            i += self._n
        if not 0 <= i < self._n:
            raise IndexError(i)
        return self._msgs[i]

    def __iter__(self) -> Iterator[AnyMessage]:
        msgs = self._msgs
        for i in range(self._n):
            yield msgs[i]

    def seq_of(self, i: int) -> int:
        """The surface seq the i-th message came from."""
        if i < 0:
            i += self._n
        if not 0 <= i < self._n:
            raise IndexError(i)
        return self._seqs[i]

    @property
    def seqs(self) -> list[int]:
        """The surface seq of every message, in order (a copy)."""
        return self._seqs[: self._n]

    def seqs_between(self, start: int, stop: int) -> list[int]:
        """Seqs of messages ``start..stop-1`` (clamped), copying only that range."""
        start, stop, _ = slice(start, stop).indices(self._n)
        return self._seqs[start:stop]

    def extends(self, other: MessageHistory | None) -> bool:
        """True when this snapshot is ``other`` plus zero or more appended messages."""
        return other is not None and other._msgs is self._msgs and other._n <= self._n

    def seqs_since(self, other: MessageHistory | None) -> list[int] | None:
        """Seqs added after ``other`` when this history extends it; ``None`` when it does not."""
        if other is None or not self.extends(other):
            return None
        return self._seqs[other._n : self._n]

    def __repr__(self) -> str:
        return f"<MessageHistory {self._n} messages, generation {self.generation}>"


def messages_of(history: Sequence[AnyMessage]) -> list[AnyMessage]:
    """A plain list of the messages of ``history`` (a MessageHistory or any sequence)."""
    return history[:] if isinstance(history, MessageHistory) else list(history)
