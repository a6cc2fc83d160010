"""One model attempt's stream (seed 003): chunks → content blocks, a compact record, live frames.

:class:`StreamAttempt` is fed every :data:`~dsh_notebook.models.base.StreamChunk` of one request
attempt. It assembles blocks (the first ``block-end`` of an index wins and later deltas for it
are ignored; delta-only streams are tolerated; a missing ``finish`` means ``stop``; on
``max-tokens`` a cut tool call keeps its place, ``{}`` for arguments that are not JSON), packs consecutive deltas of one block into timed
:class:`~dsh_notebook.wire.events.StreamRun` records (``assistant/message.stream``), and
emits the transient ``assistant-stream`` frames (:mod:`dsh_notebook.wire.frames`): ``start``, one ``chunk`` per chunk, ``end``.
:func:`run_attempt` drives one attempt through it and commits the outcome to the Session.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, cast

from pydantic import JsonValue

from ..models.base import (
    BlockEnd,
    BlockParts,
    BlockStart,
    BlockType,
    Finish,
    FinishReason,
    ModelRequest,
    ReasoningDelta,
    StreamChunk,
    TextDelta,
    ToolCallDelta,
    UsageChunk,
    on_first_byte,
    reset_first_byte,
)
from ..redaction import StreamRedactor, redact, redact_json_text
from ..session.session import Session, now_ms
from ..wire.events import (
    AssistantAttempt,
    AssistantMessageEvent,
    ErrorInfo,
    EventBase,
    StreamRun,
    Usage,
)
from ..wire.follow import AssistantStreamItem, FrameSink
from ..wire.frames import Abandoned, Committed, StreamChunkFrame, StreamEnd, StreamStart
from ..wire.messages import (
    AssistantBlock,
    AssistantMessage,
    ReasoningBlock,
    TextBlock,
    ToolCallBlock,
)
from .hooks import error_info
from .request import ModelRoute


@dataclass
class _Run:
    """A run being recorded: consecutive deltas of one block (becomes a ``StreamRun``)."""

    kind: BlockType
    index: int
    time0: int
    last: int
    dt: list[int]
    parts: list[str]
    id: str | None
    name: str | None


class StreamAttempt:
    """Assembler + compact recorder + frame emitter for one request attempt."""

    def __init__(self, attempt_id: str, *, frames: FrameSink | None = None, clock: Callable[[], int] = now_ms) -> None:
        self.attempt_id = attempt_id
        self.frames = frames
        self.clock = clock
        self.blocks: dict[int, BlockParts] = {}
        self.usage: Usage | None = None
        self.finish: Finish | None = None
        self.provider_state: dict[str, JsonValue] | None = None
        self.chunks = 0
        self.first_byte_time: int | None = None
        self._runs: list[_Run] = []
        self._run: _Run | None = None
        self._redactors: dict[int, StreamRedactor] = {}  # text/reasoning index → held-back tail
        self._arg_redactors: dict[int, StreamRedactor] = {}  # tool-call index → held-back tail

    # -- transient frames (trusted internal data: built without re-validation) ----------------
    def _send(self, frame: StreamStart | StreamChunkFrame | StreamEnd) -> None:
        assert self.frames is not None
        self.frames(AssistantStreamItem.model_construct(frame=frame))

    def start(self, *, turn: int, step: int, started_after_seq: int) -> None:
        if self.frames is not None:
            self._send(StreamStart.model_construct(
                attempt_id=self.attempt_id, turn=turn, step=step, started_after_seq=started_after_seq))

    def end(self, committed: EventBase | None) -> None:
        """The attempt is over: its outcome was committed as ``committed``, or abandoned."""
        if self.frames is not None:
            outcome = (Committed.model_construct(event_type=committed.type, seq=committed.seq)
                       if committed is not None else Abandoned.model_construct())
            self._send(StreamEnd.model_construct(attempt_id=self.attempt_id, outcome=outcome))

    # -- feeding ------------------------------------------------------------------------------
    def mark_first_byte(self) -> None:
        if self.first_byte_time is None:
            self.first_byte_time = self.clock()

    def feed(self, chunk: StreamChunk) -> None:
        """Take one chunk. Model text is shown, recorded and assembled only after the known
        secrets are masked (a tail that may be the start of one waits for the next delta). A tool
        call's arguments are shown and recorded masked but assembled **as the model wrote them**:
        what the call runs with is never changed by redaction (issue 35 finding 3)."""
        t = type(chunk)
        if t is TextDelta or t is ReasoningDelta:
            said = cast(TextDelta | ReasoningDelta, chunk)
            text = self._redactor(self._redactors, said.index).feed(said.text)
            if text != said.text:  # masked or held back (the same text: the same chunk)
                chunk = type(said)(said.index, text)
        elif t is ToolCallDelta:
            call = cast(ToolCallDelta, chunk)
            self._assemble(call)
            if call.arguments_delta:  # shown live: masked
                delta = self._redactor(self._arg_redactors, call.index).feed(call.arguments_delta)
                if delta != call.arguments_delta:
                    chunk = ToolCallDelta(call.index, call.id, delta, name=call.name)
            self._show(chunk)
            return
        elif t is BlockEnd or t is Finish:
            self.flush_text()
            if t is BlockEnd:
                end = cast(BlockEnd, chunk)
                clean = _clean(end.block)  # the settled block is shown masked
                if isinstance(end.block, ToolCallBlock):
                    self._assemble(end)  # ... and runs as the model wrote it
                    self._show(BlockEnd(end.index, clean) if clean is not end.block else end)
                    return
                if clean is not end.block:
                    chunk = BlockEnd(end.index, clean)
        self._feed(chunk)

    @staticmethod
    def _redactor(redactors: dict[int, StreamRedactor], index: int) -> StreamRedactor:
        """The stream redactor of a block (made on its first delta, not on every one)."""
        found = redactors.get(index)
        if found is None:
            found = redactors[index] = StreamRedactor()
        return found

    def flush_text(self) -> None:
        """Release the held-back tails of every block (as one more delta each); a tool call's
        tail is only shown (its arguments were assembled as they came)."""
        for index, redactor in list(self._redactors.items()):
            if redactor.pending:
                kind = self.blocks[index].kind if index in self.blocks else "text"
                tail = redactor.flush()
                self._feed(ReasoningDelta(index, tail) if kind == "reasoning" else TextDelta(index, tail))
        for index, redactor in list(self._arg_redactors.items()):
            if redactor.pending:
                block = self.blocks.get(index)
                self._show(ToolCallDelta(index, (block.id if block else None) or "", redactor.flush()))

    def _feed(self, chunk: StreamChunk) -> None:
        self._show(chunk)
        self._assemble(chunk)

    def _show(self, chunk: StreamChunk) -> None:
        """The chunk as it is shown (a frame) and recorded (``assistant/message.stream``)."""
        t = self.clock()
        if self.frames is not None:
            self._send(StreamChunkFrame.model_construct(
                attempt_id=self.attempt_id, index=self.chunks, time=t, chunk=chunk))
        self.chunks += 1
        if isinstance(chunk, TextDelta | ReasoningDelta):
            self._record("text" if isinstance(chunk, TextDelta) else "reasoning", chunk.index, chunk.text, t)
        elif isinstance(chunk, ToolCallDelta):
            self._record("tool-call", chunk.index, chunk.arguments_delta, t, chunk.id, chunk.name)

    def _assemble(self, chunk: StreamChunk) -> None:
        """The chunk into the blocks of the message (text masked, a tool call's arguments raw)."""
        if isinstance(chunk, TextDelta | ReasoningDelta):
            kind: Literal["text", "reasoning"] = "text" if isinstance(chunk, TextDelta) else "reasoning"
            block = self._block(chunk.index, kind)
            if block.final is None:
                block.parts.append(chunk.text)
        elif isinstance(chunk, ToolCallDelta):
            block = self._block(chunk.index, "tool-call")
            block.id = block.id or chunk.id
            block.name = block.name or chunk.name
            if block.final is None:
                block.parts.append(chunk.arguments_delta)
        elif isinstance(chunk, BlockStart):
            block = self._block(chunk.index, chunk.block_type)
            block.id = block.id or chunk.id
            block.name = block.name or chunk.name
        elif isinstance(chunk, BlockEnd):
            block = self._block(chunk.index, chunk.block.type)
            if block.final is None:
                block.final = chunk.block
        elif isinstance(chunk, UsageChunk):
            self.usage = chunk.usage
        elif isinstance(chunk, Finish):
            self.finish = chunk

    def _block(self, index: int, kind: Literal["text", "reasoning", "tool-call"]) -> BlockParts:
        block = self.blocks.get(index)
        if block is None:
            block = self.blocks[index] = BlockParts(kind)
        return block

    def _record(self, kind: BlockType, index: int, part: str, t: int, id: str | None = None, name: str | None = None) -> None:
        run = self._run
        if run is not None and run.kind == kind and run.index == index:
            run.dt.append(t - run.last)
            run.last = t
            run.parts.append(part)
            if name and not run.name:
                run.name = name
            return
        self._run = _Run(kind, index, t, t, [], [part], id, name)
        self._runs.append(self._run)

    # -- results ------------------------------------------------------------------------------
    @property
    def finish_reason(self) -> FinishReason:
        return self.finish.reason if self.finish is not None else "stop"

    def stream_record(self) -> tuple[StreamRun, ...]:
        return tuple(
            StreamRun(kind=r.kind, index=r.index, time0=r.time0, dt=tuple(r.dt), parts=tuple(r.parts), id=r.id, name=r.name)
            for r in self._runs
        )

    def message(self, provider: str, model: str) -> AssistantMessage:
        """The settled assistant message, as it is logged, shown and sent back to the model:
        every secret masked (:meth:`calls_to_run` has the calls as the model wrote them). On
        ``max-tokens`` a tool call that was cut keeps its place (the agent answers it
        ``TRUNCATED_CALL``) with ``{}`` for arguments that are not valid JSON (:meth:`raw_arguments`
        has what arrived)."""
        self.flush_text()
        blocks = [b if part.final is not None and not isinstance(b, ToolCallBlock) else _clean(b)
                  for b, part in self._built()]  # a final text block was cleaned as it came
        if self.finish_reason == "max-tokens":
            blocks = [_whole(b) if isinstance(b, ToolCallBlock) else b for b in blocks]
        return AssistantMessage(content=tuple(blocks), provider=provider, model=model)

    def calls_to_run(self) -> tuple[ToolCallBlock, ...]:
        """The message's tool calls with their arguments exactly as the model wrote them: what the
        tools run with. Held in memory only, from the stream to the calls' execution; the log, the
        frames and the history keep the masked ones of :meth:`message`."""
        return tuple(b for b, _part in self._built() if isinstance(b, ToolCallBlock))

    def _built(self) -> list[tuple[AssistantBlock, BlockParts]]:
        return [(b, part) for i in sorted(self.blocks) if (b := (part := self.blocks[i]).build()) is not None]

    def raw_arguments(self, call_id: str) -> str:
        """The arguments of call ``call_id`` as they arrived (cut ones included; not masked)."""
        for block in self.blocks.values():
            if block.id == call_id:
                built = block.build()
                return built.arguments if isinstance(built, ToolCallBlock) else "".join(block.parts)
        return ""

    def interrupted_message(self, provider: str, model: str) -> AssistantMessage | None:
        """The visible prefix of a cut attempt (text and reasoning), or ``None`` without visible text."""
        self.flush_text()
        blocks = [
            _clean(b) for i in sorted(self.blocks)
            if isinstance(b := self.blocks[i].build(), TextBlock | ReasoningBlock) and b.text.strip()
        ]
        if not any(isinstance(b, TextBlock) for b in blocks):
            return None
        return AssistantMessage(content=tuple(blocks), provider=provider, model=model)


def _whole(block: ToolCallBlock) -> ToolCallBlock:
    """A cut call's arguments as JSON a provider accepts back (``{}`` when they are not)."""
    try:
        json.loads(block.arguments or "{}")
        return block
    except (ValueError, RecursionError):
        return block.model_copy(update={"arguments": "{}"})


def _clean(block: AssistantBlock) -> AssistantBlock:
    """A settled block with every secret masked: text and reasoning as a whole, a tool call's
    arguments inside their JSON strings (issue 21: they are logged, shown, indexed and sent back;
    issue 35: never run — the calls run with :meth:`StreamAttempt.calls_to_run`)."""
    if isinstance(block, TextBlock | ReasoningBlock):
        clean = redact(block.text)
        if clean != block.text:
            return block.model_copy(update={"text": clean})
    elif isinstance(block, ToolCallBlock):
        args = redact_json_text(block.arguments)
        if args != block.arguments:
            return block.model_copy(update={"arguments": args})
    return block


async def run_attempt(
    session: Session,
    prepared: ModelRoute,
    request: ModelRequest,
    *,
    turn: int,
    step: int,
    attempt: int,
    frames: FrameSink | None = None,
    cite: tuple[int, ...] = (),
) -> tuple[AssistantMessageEvent, StreamAttempt]:
    """Stream one request attempt and commit its outcome: the ``assistant/message`` (returned
    with its :class:`StreamAttempt`), or, when the stream fails or is cancelled, an
    ``assistant/attempt`` error record (or the interrupted visible prefix on cancellation)
    before the exception propagates. ``cite``: events the answer cites (``debug/edit`` of the
    request it answers)."""
    stream = StreamAttempt(f"{session.id}/{turn}.{step}.{attempt}", frames=frames)
    stream.start(turn=turn, step=step, started_after_seq=session.last_seq)
    token = on_first_byte(stream.mark_first_byte)
    try:
        async for chunk in prepared.adapter.stream(request):
            stream.feed(chunk)
    except BaseException as exc:
        stream.flush_text()
        reset_first_byte(token)
        record = stream.stream_record() or None
        partial = stream.interrupted_message(prepared.provider, prepared.model)
        if isinstance(exc, asyncio.CancelledError) and partial is not None:
            failed: AssistantMessageEvent | AssistantAttempt = session.append(
                AssistantMessageEvent(turn=turn, step=step, message=partial, usage=stream.usage,
                                      interrupted=True, stream=record,
                                      first_byte_time=stream.first_byte_time))
        else:
            info = (ErrorInfo(code="CANCELLED", message="the request was cancelled")
                    if isinstance(exc, asyncio.CancelledError) else error_info(exc))
            failed = session.append(
                AssistantAttempt(turn=turn, step=step, attempt=attempt, error=info, stream=record,
                                 first_byte_time=stream.first_byte_time))
        stream.end(failed)
        raise
    reset_first_byte(token)
    message = stream.message(prepared.provider, prepared.model)
    event = session.append(
        AssistantMessageEvent(turn=turn, step=step, message=message, usage=stream.usage,
                              stream=stream.stream_record() or None, source_event_seqs=cite or None,
                              first_byte_time=stream.first_byte_time))
    stream.end(event)
    return event, stream
