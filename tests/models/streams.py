"""Helpers shared by the model tests: build a request, collect a stream, assemble a message."""

from __future__ import annotations

from collections.abc import Sequence

from dsh_notebook.models.base import BlockEnd, Finish, ModelAdapter, ModelRequest, StreamChunk
from dsh_notebook.wire.messages import AnyMessage, AssistantMessage, user_text


def request(messages: Sequence[AnyMessage] | None = None, **options: object) -> ModelRequest:
    """A frozen request for the fake server's model."""
    return ModelRequest(
        provider="openai",
        model=str(options.pop("model", "fake-model")),
        messages=list(messages) if messages is not None else [user_text("hi")],
        **options,  # type: ignore[arg-type]
    )


async def collect(model: ModelAdapter, req: ModelRequest | None = None) -> list[StreamChunk]:
    return [chunk async for chunk in model.stream(req or request())]


def assemble(chunks: Sequence[StreamChunk]) -> tuple[AssistantMessage, str]:
    """The message the agent would commit (blocks from ``BlockEnd``) and the finish reason."""
    blocks = [c.block for c in chunks if isinstance(c, BlockEnd)]
    finishes = [c.reason for c in chunks if isinstance(c, Finish)]
    assert len(finishes) == 1 and isinstance(chunks[-1], Finish)
    return AssistantMessage(content=tuple(blocks)), finishes[0]
