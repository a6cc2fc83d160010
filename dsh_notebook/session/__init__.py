"""The fact layer: events, messages, the Core Session, repair, persistence and the store."""

from .events import *  # noqa: F403
from .events import AnyEvent, Event, EventAdapter, event_to_dict, event_to_json
from .messages import (
    AnyMessage,
    AssistantMessage,
    MessageSource,
    ReasoningBlock,
    SystemMessage,
    TextBlock,
    ToolCallBlock,
    ToolMessage,
    UserMessage,
    plugin_text,
    tool_text,
    user_text,
)
from .session import MessageHistory, Session, now_ms

__all__ = [
    "AnyEvent",
    "AnyMessage",
    "AssistantMessage",
    "Event",
    "EventAdapter",
    "MessageHistory",
    "MessageSource",
    "ReasoningBlock",
    "Session",
    "SystemMessage",
    "TextBlock",
    "ToolCallBlock",
    "ToolMessage",
    "UserMessage",
    "event_to_dict",
    "event_to_json",
    "now_ms",
    "plugin_text",
    "tool_text",
    "user_text",
]
