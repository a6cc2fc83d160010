"""Model-visible messages and content blocks (seed 000, DESIGN §4).

These are the shapes the model sees after :meth:`Session.derive_messages`: ``user``, ``system``,
``assistant`` and ``tool`` messages. Field names are snake_case in Python and camelCase on the
wire (``toolCallId``, ``isError``, ``requestId``). All models are frozen; sequences are tuples.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import Field

from .base import Frozen

__all__ = [
    "AnyMessage", "AssistantBlock", "AssistantMessage", "Frozen", "Message", "MessageSource",
    "ReasoningBlock", "SystemMessage", "TextBlock", "ToolCallBlock", "ToolMessage", "UserMessage",
    "plugin_text", "tool_text", "user_text",
]


class TextBlock(Frozen):
    type: Literal["text"] = "text"
    text: str


class ReasoningBlock(Frozen):
    type: Literal["reasoning"] = "reasoning"
    text: str


class ToolCallBlock(Frozen):
    """A tool call inside an assistant message. ``arguments`` is the model's raw JSON string."""

    type: Literal["tool-call"] = "tool-call"
    id: str
    name: str
    arguments: str


AssistantBlock = Annotated[TextBlock | ReasoningBlock | ToolCallBlock, Field(discriminator="type")]


class CellRef(Frozen):
    """The notebook cell that sent a prompt: the front end's ``cellId`` (execute request metadata,
    when it sends one) and the kernel's execution count of that cell."""

    cell_id: str | None = None
    execution_count: int | None = None


class MessageSource(Frozen):
    """Where a user-role message came from: a person (``user``) or a plugin (``plugin``)."""

    kind: Literal["user", "plugin"] = "user"
    request_id: str | None = None
    rpc_id: str | None = None
    plugin: str | None = None
    form: str | None = None
    cell: CellRef | None = None  # the notebook cell that sent it, if it came from one


class UserMessage(Frozen):
    role: Literal["user"] = "user"
    content: tuple[TextBlock, ...]
    source: MessageSource = MessageSource()


class SystemMessage(Frozen):
    role: Literal["system"] = "system"
    content: tuple[TextBlock, ...] = ()


class AssistantMessage(Frozen):
    role: Literal["assistant"] = "assistant"
    content: tuple[AssistantBlock, ...] = ()
    provider: str | None = None
    model: str | None = None

    @property
    def tool_calls(self) -> tuple[ToolCallBlock, ...]:
        return tuple(b for b in self.content if isinstance(b, ToolCallBlock))

    @property
    def text(self) -> str:
        return "".join(b.text for b in self.content if isinstance(b, TextBlock))


class ToolMessage(Frozen):
    role: Literal["tool"] = "tool"
    tool_call_id: str
    content: tuple[TextBlock, ...]
    is_error: bool = False

    @property
    def text(self) -> str:
        return "".join(b.text for b in self.content)

    @property
    def exit_code(self) -> int | None:
        """The exit code a command's result ends with (its last line ``[exit code: N]``, as the bash
        tool writes it); ``None`` for results that are not a command's."""
        lines = self.text.rstrip().rsplit("\n", 1)
        match = EXIT_LINE.match(lines[-1].strip()) if lines else None
        return int(match.group(1)) if match else None


EXIT_LINE = re.compile(r"^\[exit code: (-?\d+)\]$")  # the last line of a command's tool result

Message = Annotated[
    UserMessage | SystemMessage | AssistantMessage | ToolMessage, Field(discriminator="role")
]
AnyMessage = UserMessage | SystemMessage | AssistantMessage | ToolMessage


def user_text(text: str, *, request_id: str | None = None, rpc_id: str | None = None) -> UserMessage:
    """A user message from a person, with one text block."""
    return UserMessage(
        content=(TextBlock(text=text),),
        source=MessageSource(kind="user", request_id=request_id, rpc_id=rpc_id),
    )


def plugin_text(text: str, *, plugin: str, form: str | None = None) -> UserMessage:
    """A user-role message contributed by a plugin (runtime context, deferred context)."""
    return UserMessage(
        content=(TextBlock(text=text),), source=MessageSource(kind="plugin", plugin=plugin, form=form)
    )


def tool_text(call_id: str, text: str, *, is_error: bool = False) -> ToolMessage:
    """A tool result message with one text block."""
    return ToolMessage(tool_call_id=call_id, content=(TextBlock(text=text),), is_error=is_error)
