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
from .persistence import LoadedLog, SessionLog, load_log
from .repair import (
    PairingRepairer,
    Repair,
    RepairResult,
    close_interrupted_turn,
    repair_pairing,
)
from .session import MessageHistory, Session, now_ms
from .store import SessionStore, SessionSummary

__all__ = [
    "AnyEvent",
    "AnyMessage",
    "AssistantMessage",
    "LoadedLog",
    "PairingRepairer",
    "Repair",
    "RepairResult",
    "SessionLog",
    "SessionStore",
    "SessionSummary",
    "close_interrupted_turn",
    "load_log",
    "repair_pairing",
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
