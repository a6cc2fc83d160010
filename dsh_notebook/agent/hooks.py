"""The values that flow through the agent's waterfall hooks (seed 001 object 27).

- ``agent/pre-step`` gets a :class:`PreStep` — the messages a step would enter with (the claimed
  input, then the runtime-context snapshot last) and the step's :class:`PromptAssembly`. A
  listener returns ``decision.with_messages([...])`` to rewrite, ``decision.reject(reason)`` to
  refuse (the turn ends ``blocked``; the claimed input is not re-queued), or ``None`` to keep it.
- ``agent/turn-stopping`` gets a :class:`TurnStopping` when a turn is about to end naturally; a
  listener may ``agent.steer(...)`` / ``agent.inject(...)`` to force another step.
- ``tools/pre-execute`` and ``tools/post-execute`` listeners take the ToolRuntime's two arguments
  — ``fn(invocation, verdict)`` and ``fn(invocation, outcome)`` — see :mod:`dsh_notebook.tools.outcome`.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from ..errors import DshError, ModelError, redact
from ..wire.events import ErrorInfo, TurnEndReason
from ..wire.messages import UserMessage
from .prompt import PromptAssembly

if TYPE_CHECKING:
    from ..context import Scope
    from ..tools.runtime import ToolRuntime

COMPLETED = TurnEndReason(kind="completed")
MAX_TOKENS = TurnEndReason(kind="max-tokens")


@dataclass(frozen=True)
class PreStep:
    """The decision before a step: ``enter`` with messages, or ``reject`` with a reason."""

    turn: int
    step: int
    messages: tuple[UserMessage, ...]
    assembly: PromptAssembly
    claimed: tuple[UserMessage, ...] = ()
    snapshot: UserMessage | None = None
    kind: Literal["enter", "reject"] = "enter"
    reason: str | None = None

    def with_messages(self, messages: Sequence[UserMessage]) -> PreStep:
        return dataclasses.replace(self, messages=tuple(messages))

    def reject(self, reason: str) -> PreStep:
        return dataclasses.replace(self, kind="reject", reason=reason)


@dataclass(frozen=True)
class TurnStopping:
    turn: int
    step: int
    reason: TurnEndReason
    agent: Any = None


def error_info(exc: BaseException) -> ErrorInfo:
    """The coded form of an exception as it appears in events (keys redacted)."""
    if isinstance(exc, ModelError):
        return ErrorInfo(code=exc.code, message=exc.message, status=exc.status, retry_after_ms=exc.retry_after_ms)
    if isinstance(exc, DshError):
        return ErrorInfo(code=exc.code, message=exc.message)
    return ErrorInfo(code="UNKNOWN", message=redact(f"{type(exc).__name__}: {exc}"))


async def _waterfall(listeners: list[Any], invocation: Any, value: Any) -> Any:
    for fn in listeners:
        out = _call2(fn, invocation, value)
        if inspect.isawaitable(out):
            out = await out
        if out is not None:
            value = out
    return value


class ToolHookBridge:
    """Feeds a Scope's ``tools/*`` listeners into a ToolRuntime's hook lists (looked up per call)."""

    def __init__(self, scope: Scope) -> None:
        self.scope = scope

    def pre_execute(self, invocation: Any, verdict: Any) -> Any:
        """The listeners' verdict (a coroutine), or ``verdict`` itself when none listens (the
        runtime settles either: no coroutine for every call of a scope without listeners)."""
        listeners = self.scope.hooks("tools/pre-execute")
        return _waterfall(listeners, invocation, verdict) if listeners else verdict

    def post_execute(self, invocation: Any, outcome: Any) -> Any:
        listeners = self.scope.hooks("tools/post-execute")
        return _waterfall(listeners, invocation, outcome) if listeners else outcome

    def install(self, runtime: ToolRuntime) -> ToolRuntime:
        if self.pre_execute not in runtime.pre_execute:
            runtime.pre_execute.append(self.pre_execute)
        if self.post_execute not in runtime.post_execute:
            runtime.post_execute.append(self.post_execute)
        return runtime


def _call2(fn: Callable[..., Any], a: Any, b: Any) -> Any:
    return fn(a, b)
