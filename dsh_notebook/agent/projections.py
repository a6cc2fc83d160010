"""How prompt state enters the facts (seed 001 objects 26 and 30).

:class:`RuntimeContextProjection` turns the runtime-context sections into a user message
(``source.kind: plugin``) **only when they changed** since the retained snapshot (or the CLEARED
marker when they became empty). The step enters it *before* its input, so a request's last
message is the user's prompt — a small model answers the last user message it sees, and took a
trailing snapshot ("Today's date: …") for the question. Logs written when it trailed the prompt
read and replay as they were (the order is the surface's). :class:`SystemPromptProjection` keeps the rendered system prompt as
``system/message`` surface nodes: **append** (no head yet, or a changed prompt on an in-history
route), **replace** (the head with the new text; ``sourceEventSeqs=[replaced seq]``), **clear**
(replace with empty content) or **unchanged**. Both restore their state from the session, so a
resumed agent does not repeat an unchanged snapshot.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol

from ..session.session import Session
from ..wire.events import ReplaceOp, SystemMessageEvent, UserMessageEvent
from ..wire.messages import MessageSource, SystemMessage, TextBlock, UserMessage

PLUGIN = "dsh/system-prompt"
SNAPSHOT_HEADER = "Current runtime context. This snapshot supersedes earlier runtime-context snapshots."
CLEARED = "Current runtime context: none. Earlier runtime-context snapshots no longer apply."
SystemOp = Literal["append", "replace", "clear", "unchanged"]


class _Named(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def text(self) -> str: ...


def _owned(event: object) -> bool:
    return (
        isinstance(event, UserMessageEvent)
        and event.message.source.kind == "plugin"
        and event.message.source.plugin == PLUGIN
        and event.message.source.form == "snapshot"
    )


class RuntimeContextProjection:
    """Runtime state → a deduplicated context message (a candidate until its step is entered)."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.retained: tuple[int, str] | None = None
        self.ever = False  # has any snapshot been logged in this session?
        for event in reversed(session.events):
            if _owned(event):
                assert isinstance(event, UserMessageEvent)
                self.ever = True
                if event.seq in set(session.surface):
                    self.retained = (event.seq, event.message.content[0].text)
                break
        self._generation = session.generation

    def _check_shadowed(self) -> None:
        if self._generation != self.session.generation:
            self._generation = self.session.generation
            if self.retained is not None and self.retained[0] not in set(self.session.surface):
                self.retained = None  # e.g. compaction shadowed it: the next project re-sends

    def project(self, sections: Sequence[_Named]) -> UserMessage | None:
        """The snapshot message to add to this step, or ``None`` when nothing changed."""
        self._check_shadowed()
        texts = [s.text for s in sections if s.text.strip()]
        if not texts:
            if not self.ever:
                return None
            text = CLEARED
        else:
            text = SNAPSHOT_HEADER + "\n\n" + "\n\n".join(texts)
        if self.retained is not None and self.retained[1] == text:
            return None
        return UserMessage(
            content=(TextBlock(text=text),),
            source=MessageSource(kind="plugin", plugin=PLUGIN, form="snapshot"),
        )

    def committed(self, event: UserMessageEvent) -> None:
        """Tell the projection a snapshot it produced was committed (its step was entered)."""
        if _owned(event):
            self.ever = True
            self.retained = (event.seq, event.message.content[0].text)


class SystemPromptProjection:
    """The rendered system prompt as ``system/message`` surface nodes (append/replace/clear)."""

    def __init__(self, session: Session, *, in_history: bool = False) -> None:
        self.session = session
        self.in_history = in_history
        self.last_op: SystemOp | None = None
        self._nodes: list[tuple[int, str]] = []
        self._generation = -1
        self._rescan()

    def _rescan(self) -> None:
        events = self.session.events
        self._nodes = []
        for seq in self.session.surface:
            ev = events[seq]
            if isinstance(ev, SystemMessageEvent):
                self._nodes.append((seq, "".join(b.text for b in ev.message.content)))
        self._generation = self.session.generation

    @property
    def nodes(self) -> list[tuple[int, str]]:
        """The surviving system nodes as ``(seq, text)``; the first is the head."""
        if self._generation != self.session.generation:
            self._rescan()
        return list(self._nodes)

    def project(self, rendered: str, *, turn: int, step: int, starts_series: bool = False) -> SystemOp:
        """Bring the system nodes in line with ``rendered``; returns the operation done."""
        nodes = self.nodes
        if not nodes:
            self._append(rendered, turn, step)
            return self._done("append")
        if not self.in_history or starts_series or rendered == "":
            op: SystemOp = "unchanged"
            for seq, text in nodes[1:]:
                if text:
                    self._replace(seq, "", turn, step)
                    op = "clear"
            head_seq, head_text = self.nodes[0]
            if head_text != rendered:
                self._replace(head_seq, rendered, turn, step)
                op = "replace" if rendered else "clear"
            return self._done(op)
        latest = next((text for _, text in reversed(nodes) if text), "")
        if latest != rendered:
            self._append(rendered, turn, step)
            return self._done("append")
        return self._done("unchanged")

    def _message(self, text: str) -> SystemMessage:
        return SystemMessage(content=(TextBlock(text=text),) if text else ())

    def _append(self, text: str, turn: int, step: int) -> None:
        ev = self.session.append(SystemMessageEvent(turn=turn, step=step, message=self._message(text)))
        self._nodes.append((ev.seq, text))

    def _replace(self, seq: int, text: str, turn: int, step: int) -> None:
        ev = self.session.append(
            SystemMessageEvent(
                turn=turn,
                step=step,
                message=self._message(text),
                surface_op=ReplaceOp(start_seq=seq, end_seq=seq),
                source_event_seqs=(seq,),
            )
        )
        self._nodes = [(ev.seq, text) if s == seq else (s, t) for s, t in self._nodes]
        self._generation = self.session.generation

    def _done(self, op: SystemOp) -> SystemOp:
        self.last_op = op
        return op
