"""The values that flow through the tool pipeline: invocations, verdicts, outcomes, hook types.

- :class:`ToolInvocation` — one validated call: the tool, its parsed arguments, the raw JSON
  the model produced (arguments can never be rewritten by a hook);
- :class:`PolicyVerdict` — ``allow`` / ``deny`` / ``ask`` plus a reason and who decided;
- :class:`ToolOutcome` — what the runtime hands the scheduler: the tool message (durable), the
  coded error (durable), contexts deferred to after the batch, and whether the turn concludes;
- :func:`error_outcome` — the one way a failure becomes a result: text starting ``Error: ``,
  ``isError: true`` and a ``ToolErrorInfo(name, code)``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from pydantic import BaseModel, JsonValue

from ..errors import ErrorCode, redact
from ..wire.codes import received
from ..wire.events import ToolErrorInfo
from ..wire.messages import ToolCallBlock, ToolMessage, tool_text
from .base import PolicyDecision, Tool, ToolOutput

ERROR_CODES: tuple[ErrorCode, ...] = (
    "UNKNOWN_TOOL",
    "INVALID_JSON",
    "INVALID_ARGS",
    "DENIED",
    "TOOL_RAISED",
    "TIMED_OUT",
    "CANCELLED",
    "ABORTED_BEFORE_DISPATCH",
    "OUTSIDE_WORKSPACE",
    "TRUNCATED_CALL",
)
"""The pipeline's own codes; a tool may raise ``ToolError`` with a more specific one."""

ERROR_NAMES: dict[ErrorCode, str] = {
    "UNKNOWN_TOOL": "ToolNotFoundError",
    "INVALID_JSON": "InvalidJsonError",
    "INVALID_ARGS": "ValidationError",
    "DENIED": "PermissionDenied",
    "TIMED_OUT": "TimeoutError",
    "CANCELLED": "AbortError",
    "ABORTED_BEFORE_DISPATCH": "AbortError",
    "TRUNCATED_CALL": "TruncatedCallError",
}

CANCELLED_TEXT = "Error: tool call cancelled while it was running (it may have had partial effects)"
ABORTED_TEXT = "Error: tool call aborted before dispatch"



@dataclass
class ToolOutcome:
    """The result of one call as the runtime hands it to the scheduler."""

    message: ToolMessage
    error: ToolErrorInfo | None = None
    deferred: list[str] = field(default_factory=list)
    concludes: bool = False
    meta: dict[str, JsonValue] | None = None

    @property
    def is_error(self) -> bool:
        return self.message.is_error

    @property
    def text(self) -> str:
        return self.message.text

    @property
    def code(self) -> ErrorCode | None:
        return received(self.error.code) if self.error else None


def error_outcome(
    call_id: str,
    text: str,
    code: ErrorCode,
    name: str | None = None,
    *,
    meta: dict[str, JsonValue] | None = None,
) -> ToolOutcome:
    """A failed call's outcome: ``Error: <text>``, ``isError``, and ``{name, code}``."""
    body = text if text.startswith("Error: ") else f"Error: {text}"
    info = ToolErrorInfo(name=name or ERROR_NAMES.get(code, "ToolError"), code=code)
    return ToolOutcome(tool_text(call_id, redact(body), is_error=True), info, meta=meta)


def aborted_outcome(call_id: str, *, started: bool) -> ToolOutcome:
    """``CANCELLED`` for a call whose body was running, else ``ABORTED_BEFORE_DISPATCH``."""
    if started:
        return error_outcome(call_id, CANCELLED_TEXT, "CANCELLED")
    return error_outcome(call_id, ABORTED_TEXT, "ABORTED_BEFORE_DISPATCH")


def output_outcome(call_id: str, output: ToolOutput, text: str) -> ToolOutcome:
    """The outcome of a body that returned (``text`` is the capped, non-empty output text)."""
    if output.is_error:
        return error_outcome(call_id, text, output.code or "TOOL_ERROR", "ToolError", meta=output.meta)
    return ToolOutcome(tool_text(call_id, text), meta=output.meta)


@dataclass(frozen=True)
class PolicyVerdict:
    """A pre-execute decision with its reason and who made it (tool, hook, mode, approval, guard)."""

    decision: PolicyDecision
    reason: str | None = None
    source: str = "tool"
    rule: str | None = None  # the approval rule / grant / callable that decided (tools.rules)


@dataclass(frozen=True)
class ToolInvocation:
    """One validated call, as hooks, guards and wrappers see it."""

    call_id: str
    name: str
    arguments: str
    args: BaseModel
    tool: Tool
    session_id: str | None = None


@dataclass
class PreparedToolCall:
    """A call after prepare: either ready to dispatch, or already finished (``outcome`` set)."""

    call: ToolCallBlock
    invocation: ToolInvocation | None = None
    outcome: ToolOutcome | None = None

    @property
    def dispatchable(self) -> bool:
        return self.outcome is None and self.invocation is not None


HookResult = PolicyVerdict | PolicyDecision | None
PreExecuteHook = Callable[[ToolInvocation, PolicyVerdict], "HookResult | Awaitable[HookResult]"]
"""Waterfall: gets the verdict so far, returns a new one (or ``None`` to keep it)."""

Guard = Callable[[ToolInvocation], "str | None"]
"""Monotonic: returns a denial reason, or ``None``. A guard can only deny."""

PostExecuteHook = Callable[
    [ToolInvocation, ToolOutcome], "ToolOutcome | None | Awaitable[ToolOutcome | None]"
]
"""Waterfall after the body (and after denials): may replace the outcome."""

Dispatch = Callable[[], Awaitable[ToolOutput]]
ExecuteWrapper = Callable[[ToolInvocation, Dispatch], Awaitable[ToolOutput]]
"""Around-dispatch wrapper (metrics, retry, …): call ``dispatch()`` to run the inner layers."""
