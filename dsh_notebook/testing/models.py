"""Model adapters for tests, at the model boundary (``ModelAdapter``): nothing inside the agent is
faked.

- :class:`CannedModel` answers each request with the next scripted reply — a list of chunks, an
  exception to raise, or a :class:`Gate` that stops mid-stream until the test opens it;
- :class:`FunctionModel` answers each request with what a function of the request returns (a text,
  a list of chunks, an exception, or an async iterator of chunks made as it streams), for replies
  that depend on what the model was sent (:class:`HoldModel`: every reply held mid-stream until
  a test sets an event); ``record=False, pause=False`` make it the cheapest fake
  there is, for benchmarks that time the harness around the model.

Both record the requests they got (``.requests``); a :class:`CannedModel` given a ``window``
reports it as its server's (``server_window()``, as the OpenAI-compatible adapters do). :func:`text_chunks` and :func:`call_chunks`
build the chunk lists of a text answer and of tool calls::

    model = CannedModel(call_chunks(("c1", "read", '{"file_path": "a.txt"}')), text_chunks("done"))
    agent = Agent(session, adapter_for=lambda _id: model, model="fake:m1")
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from ..models.base import (
    BlockEnd,
    BlockStart,
    Finish,
    FinishReason,
    ModelRequest,
    StreamChunk,
    TextDelta,
    ToolCallDelta,
    UsageChunk,
)
from ..wire.events import Usage
from ..wire.messages import TextBlock, ToolCallBlock

Call = tuple[str, str, str]
"""``(call_id, tool_name, arguments_json)``."""


def text_chunks(text: str, *, finish: FinishReason = "stop", pieces: int = 2, usage: bool = True) -> list[StreamChunk]:
    """A text answer in about ``pieces`` deltas; ``usage``: 10 input tokens, one output token a
    character (a fixed, countable figure)."""
    step = max(1, len(text) // max(1, pieces))
    parts = [text[i : i + step] for i in range(0, len(text), step)] or [""]
    out: list[StreamChunk] = [BlockStart(0, "text"), *(TextDelta(0, p) for p in parts), BlockEnd(0, TextBlock(text=text))]
    if usage:
        out.append(UsageChunk(Usage(input_tokens=10, output_tokens=len(text))))
    return [*out, Finish(finish)]


def call_chunks(*calls: Call, say: str = "", finish: FinishReason = "tool-calls") -> list[StreamChunk]:
    """Tool calls (each in one delta), after an optional text ``say``."""
    out: list[StreamChunk] = []
    first = 0
    if say:
        out += [BlockStart(0, "text"), TextDelta(0, say), BlockEnd(0, TextBlock(text=say))]
        first = 1
    for k, (cid, name, args) in enumerate(calls, start=first):
        out += [BlockStart(k, "tool-call", id=cid, name=name), ToolCallDelta(k, cid, args, name=name),
                BlockEnd(k, ToolCallBlock(id=cid, name=name, arguments=args))]
    return [*out, Finish(finish)]


@dataclass
class Gate:
    """Stream ``before``, set ``reached``, wait until ``opened`` is set, then stream ``after`` (a test
    acts mid-stream: cancels, steers, pauses).

    ``opened`` may be a :class:`threading.Event` where the test runs in another thread than the
    model's loop (a :class:`~dsh_notebook.host.host.Host` runs its own): the stream then looks at it
    between short sleeps, and stays cancellable. One such event can hold every request of a run
    until the test sets it (see :func:`hold_text`)."""

    before: list[StreamChunk]
    after: list[StreamChunk] = field(default_factory=list)
    reached: asyncio.Event = field(default_factory=asyncio.Event)
    opened: asyncio.Event | threading.Event = field(default_factory=asyncio.Event)


async def _opened(gate: Gate) -> None:
    if isinstance(gate.opened, asyncio.Event):
        await gate.opened.wait()
        return
    while not gate.opened.is_set():  # noqa: ASYNC110 (a threading.Event set by another thread: looked at)
        await asyncio.sleep(0.005)


def hold_text(opened: threading.Event, text: str, *, first: str = "held ") -> Gate:
    """A text answer that streams ``first``, holds until ``opened`` is set (from any thread), then
    streams the rest of ``text`` word by word; no usage chunk. For a :class:`FunctionModel` whose
    every request holds until the test lets them go::

        release = threading.Event()
        model = FunctionModel(lambda _r: hold_text(release, "held w0 w1"))
    """
    rest = text[len(first):] if text.startswith(first) else text
    words = rest.split(" ") if rest else []
    after: list[StreamChunk] = [TextDelta(0, (" " if i else "") + w) for i, w in enumerate(words)]
    return Gate([BlockStart(0, "text"), TextDelta(0, first)],
                [*after, BlockEnd(0, TextBlock(text=first + rest)), Finish("stop")], opened=opened)


Reply = Sequence[StreamChunk] | BaseException | Gate | AsyncIterable[StreamChunk]
"""What a fake model answers a request with: chunks (streamed with a turn of the loop between
them), an exception (raised), a :class:`Gate`, or an async iterator of chunks (streamed as it
yields them: paced, or stamped with the time they are sent)."""


async def _play(reply: Reply | str) -> AsyncIterator[StreamChunk]:
    if isinstance(reply, str):
        reply = text_chunks(reply)
    if isinstance(reply, BaseException):
        raise reply
    if isinstance(reply, AsyncIterable):
        async for c in reply:
            yield c
        return
    if isinstance(reply, Gate):
        for c in reply.before:
            yield c
        reply.reached.set()
        await _opened(reply)
        for c in reply.after:
            yield c
        return
    for c in reply:
        await asyncio.sleep(0)  # a real stream yields to the loop between chunks
        yield c


class CannedModel:
    """Each request pops the next reply; past the script it answers ``(no more steps)``.

    ``window``: the context window its server reports when the agent asks (``server_window()``;
    ``None``, the default: the server cannot tell, the catalog decides); ``window_asked`` counts the
    asks (the agent asks once per model)."""

    base_url: str | None = None

    def __init__(self, *replies: Reply, provider: str = "fake", window: int | None = None) -> None:
        self.provider = provider
        self.steps: list[Reply] = list(replies)
        self.requests: list[ModelRequest] = []
        self.on_request: Callable[[ModelRequest], None] | None = None
        self.window = window
        self.window_asked = 0

    async def server_window(self) -> int | None:
        self.window_asked += 1
        return self.window

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamChunk]:
        self.requests.append(request)
        if self.on_request is not None:
            self.on_request(request)
        async for c in _play(self.steps.pop(0) if self.steps else text_chunks("(no more steps)")):
            yield c

    async def aclose(self) -> None:
        return None


Answer = Reply | str


class FunctionModel:
    """Answers each request with ``fn(request)`` (sync or async): a text, chunks, a :class:`Gate`,
    an exception, or an async iterator of chunks.

    ``record=False`` keeps no ``requests``; ``pause=False`` streams a list of chunks straight, without
    a turn of the loop between them. Both off, the fake adds next to nothing to a model call: what a
    benchmark of the harness's per-step cost wants (``tests/benchmarks/bench_loop.py``)::

        model = FunctionModel(lambda r: text_chunks("done", usage=False), record=False, pause=False)
    """

    base_url: str | None = None

    def __init__(self, fn: Callable[[ModelRequest], Answer | Awaitable[Answer]], *, provider: str = "fake",
                 record: bool = True, pause: bool = True) -> None:
        self.fn = fn
        self.provider = provider
        self.record = record
        self.pause = pause
        self.requests: list[ModelRequest] = []
        self.closed = False

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamChunk]:
        if self.record:
            self.requests.append(request)
        answer = self.fn(request)
        if inspect.isawaitable(answer):
            answer = await answer
        if not self.pause and isinstance(answer, list):
            for c in answer:
                yield c
            return
        async for c in _play(answer):
            yield c

    async def aclose(self) -> None:
        self.closed = True


class HoldModel(FunctionModel):
    """Every request streams ``held `` and holds until the test sets ``release`` (a
    :class:`threading.Event`, from any thread), then streams ``w0 … w{words-1}``
    (:func:`hold_text`): a test acts mid-stream on a host or kernel that runs its own loop::

        hold = HoldModel()
        ...  # a prompt is held mid-stream; cancel, steer, follow it
        hold.release.set()
    """

    def __init__(self, words: int = 6, *, provider: str = "hold") -> None:
        self.release = threading.Event()
        text = "held " + " ".join(f"w{i}" for i in range(words))
        super().__init__(lambda _request: hold_text(self.release, text), provider=provider)


__all__ = ["Call", "FunctionModel", "Gate", "HoldModel", "Reply", "CannedModel", "call_chunks", "hold_text", "text_chunks"]
