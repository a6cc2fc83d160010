"""The ToolRuntime: one call through the pipeline (seed 000 stage 03, seed 003 tool turn).

``prepare`` — parse the raw JSON (``""`` → ``{}``) and validate it with the tool's pydantic
model; run the pre-execute policy (the tool's default ``allow``/``ask``/``deny``, then each hook
in order, waterfall); the session's permission mode decides (:mod:`.modes`; ``ask`` → the
:class:`Approver`, logging ``approval/asked`` and ``approval/decided``); then the guards, which
can only deny. ``dispatch`` — execute wrappers around the body, the tool's
timeout innermost; then the post-execute hooks. Every failure becomes a :class:`ToolOutcome`
with a code; nothing here raises except cancellation, which the scheduler answers. Every
result text, deferred context and progress line is passed through :func:`~..redaction.redact`
first: a secret value the process knows never reaches the log, a frame or the model.

Transient frames (never durable; progress goes *only* here), :class:`~dsh_notebook.wire.follow.ToolRuntimeItem`::

    {"type": "tool-runtime", "frame": {"callId", "name", "phase", "status", "detail"?, "time"}}

phase/status: ``prepare`` start → done|error; ``policy`` allow|deny (``done`` when it asks);
``approval`` waiting → allow|deny; ``execute`` start → done|error; ``progress`` start (detail =
the text); ``result`` done|error (detail = the error code).
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import ValidationError

from ..errors import ToolError
from ..redaction import redact, redact_known
from ..session.session import Session, now_ms
from ..wire.events import Grant
from ..wire.follow import FrameSink, ToolRuntimeItem
from ..wire.frames import Phase, RuntimeStatus, ToolRuntimeFrame
from ..wire.messages import ToolCallBlock
from .arguments import parse_arguments
from .base import ApprovalMode, Approver, ToolContext, ToolOutput
from .modes import LEGACY, SessionMode
from .outcome import (
    Dispatch,
    ExecuteWrapper,
    Guard,
    PostExecuteHook,
    PreExecuteHook,
    PreparedToolCall,
    ToolInvocation,
    ToolOutcome,
    aborted_outcome,
    error_outcome,
    output_outcome,
)
from .policy import decide, settle
from .registry import ToolRegistry
from .sandbox import Workspace, cap_middle

log = logging.getLogger(__name__)
MAX_RESULT_CHARS = 100_000
__all__ = ["MAX_RESULT_CHARS", "PreparedToolCall", "ToolOutcome", "ToolRuntime"]


class ToolRuntime:
    """Runs tool calls through validate → policy → approval → guards → execute → post-execute."""

    def __init__(
        self,
        registry: ToolRegistry,
        *,
        workspace: Workspace | str | os.PathLike[str],
        approver: Approver | None = None,
        session: Session | None = None,
        frames: FrameSink | None = None,
        policy_mode: ApprovalMode = "ask",
        modes: SessionMode | None = None,
        pre_execute: Sequence[PreExecuteHook] = (),
        guards: Sequence[Guard] = (),
        post_execute: Sequence[PostExecuteHook] = (),
        wrappers: Sequence[ExecuteWrapper] = (),
        env: dict[str, str] | None = None,
        main_thread: Any = None,
    ) -> None:
        self.registry = registry
        self.workspace = workspace if isinstance(workspace, Workspace) else Workspace(workspace)
        self.approver = approver
        self.session = session
        self.frames = frames
        self.policy_mode: ApprovalMode = policy_mode  # legacy: the initial mode when ``modes`` is not given
        self.modes = modes if modes is not None else SessionMode(session, LEGACY[policy_mode])
        self.pre_execute: list[PreExecuteHook] = list(pre_execute)
        self.on_grant: Callable[[Grant], None] | None = None  # the session policy's remember (Toolset)
        self.guards: list[Guard] = list(guards)
        self.post_execute: list[PostExecuteHook] = list(post_execute)
        self.wrappers: list[ExecuteWrapper] = list(wrappers)
        self.env = env
        self.main_thread = main_thread

    # -- transient frames -------------------------------------------------------------------

    def emit(self, call: ToolCallBlock, phase: Phase, status: RuntimeStatus, detail: str | None = None) -> None:
        """Send one ``tool-runtime`` frame (a failing sink is logged, never raised)."""
        if self.frames is None:
            return
        frame = ToolRuntimeFrame.model_construct(  # a detail may quote the call or a rule: masked
            call_id=call.id, name=call.name, phase=phase, status=status, detail=redact(detail) if detail else detail,
            time=now_ms(),
        )
        try:
            self.frames(ToolRuntimeItem.model_construct(frame=frame))
        except Exception:
            log.exception("tool-runtime frame sink failed")

    def finish(self, call: ToolCallBlock, outcome: ToolOutcome) -> ToolOutcome:
        self.emit(call, "result", "error" if outcome.is_error else "done", outcome.code)
        return outcome

    def aborted(self, call: ToolCallBlock, *, started: bool) -> ToolOutcome:
        """The answer for a call cut off by cancellation (body started or not)."""
        return self.finish(call, aborted_outcome(call.id, started=started))

    # -- prepare ----------------------------------------------------------------------------

    def parse(self, call: ToolCallBlock) -> ToolInvocation | ToolOutcome:
        """Look the tool up and validate the raw arguments; a failure is an outcome."""
        tool = self.registry.get(call.name)
        if tool is None:
            names = ", ".join(self.registry.names) or "(none)"
            return error_outcome(
                call.id, f"unknown tool {call.name!r}; available tools: {names}", "UNKNOWN_TOOL"
            )
        raw = call.arguments
        try:
            obj = parse_arguments(raw, call.name)
        except ToolError as exc:
            return error_outcome(call.id, exc.message, exc.code)
        if not isinstance(obj, dict):
            return error_outcome(
                call.id,
                f"the arguments for {call.name} must be a JSON object, not {type(obj).__name__}",
                "INVALID_ARGS",
            )
        try:
            args = tool.args_model.model_validate(obj)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or '(arguments)'}: {e['msg']}"
                for e in exc.errors()
            )
            return error_outcome(call.id, f"invalid arguments for {call.name}: {problems}", "INVALID_ARGS")
        session_id = self.session.id if self.session is not None else None
        return ToolInvocation(call.id, call.name, raw, args, tool, session_id)

    def is_concurrency_safe(self, call: ToolCallBlock) -> bool:
        """Whether ``call`` may share the parallel pool (unknown or invalid calls: no)."""
        inv = self.parse(call)
        return isinstance(inv, ToolInvocation) and inv.tool.is_concurrency_safe(inv.args)

    async def prepare(self, call: ToolCallBlock) -> PreparedToolCall:
        """Validate and decide; the returned call is dispatchable or already has its outcome."""
        self.emit(call, "prepare", "start")
        inv = self.parse(call)
        if isinstance(inv, ToolOutcome):
            self.emit(call, "prepare", "error", inv.code)
            return PreparedToolCall(call, outcome=self.finish(call, inv))
        self.emit(call, "prepare", "done")
        verdict = await decide(self, call, inv)
        if verdict.decision == "allow":
            return PreparedToolCall(call, inv)
        denied = error_outcome(call.id, f"permission denied: {verdict.reason or 'denied'}", "DENIED")
        return PreparedToolCall(call, inv, self.finish(call, await self._post(inv, denied)))

    # -- dispatch ---------------------------------------------------------------------------

    async def dispatch(self, prepared: PreparedToolCall) -> ToolOutcome:
        """Run the body (wrappers, timeout) and the post-execute hooks. Re-raises cancellation."""
        inv, call = prepared.invocation, prepared.call
        if prepared.outcome is not None or inv is None:
            return prepared.outcome or self.finish(call, aborted_outcome(call.id, started=False))
        ctx = ToolContext(
            cwd=self.workspace.root,
            call_id=inv.call_id,
            tool_name=inv.name,
            session_id=inv.session_id,
            progress=lambda text: self.emit(call, "progress", "start", redact_known(text)),
            main_thread=self.main_thread,
            env=self.env,
            mode=self.modes.current,
        )
        self.emit(call, "execute", "start")
        try:
            output = await self._execute(inv, ctx)
        except asyncio.CancelledError:
            self.emit(call, "execute", "error", "CANCELLED")
            raise  # the scheduler answers it (and sends the result frame)
        except ToolError as exc:
            outcome = error_outcome(call.id, exc.message, exc.code)
        except Exception as exc:
            outcome = error_outcome(call.id, f"{type(exc).__name__}: {exc}", "TOOL_RAISED", type(exc).__name__)
        else:
            text = redact(cap_middle(output.text, MAX_RESULT_CHARS)) or "(no output)"
            outcome = output_outcome(call.id, output, text)
        self.emit(call, "execute", "error" if outcome.is_error else "done", outcome.code)
        outcome.deferred = [redact(text) for text in ctx.deferred_contexts]
        outcome.concludes = ctx.concludes
        return self.finish(call, await self._post(inv, outcome))

    async def _execute(self, inv: ToolInvocation, ctx: ToolContext) -> ToolOutput:
        timeout = inv.tool.timeout_s

        async def body() -> ToolOutput:
            if timeout is None:
                return await inv.tool.execute(inv.args, ctx)
            task = asyncio.ensure_future(inv.tool.execute(inv.args, ctx))
            try:
                done, _ = await asyncio.wait({task}, timeout=timeout)
            except asyncio.CancelledError:
                task.cancel()
                await asyncio.wait({task})
                raise
            if not done:
                task.cancel()
                await asyncio.wait({task})
                raise ToolError(f"{inv.name} timed out after {timeout:g} s and was stopped", code="TIMED_OUT")
            return task.result()

        dispatch: Dispatch = body
        for wrapper in reversed(self.wrappers):
            dispatch = _wrap(wrapper, inv, dispatch)
        return await dispatch()

    async def _post(self, inv: ToolInvocation, outcome: ToolOutcome) -> ToolOutcome:
        for hook in self.post_execute:
            try:
                replaced = await settle(hook(inv, outcome))
            except Exception as exc:
                replaced = error_outcome(inv.call_id, f"post-execute hook failed: {exc}", "TOOL_RAISED")
            if isinstance(replaced, ToolOutcome) and replaced is not outcome:
                if not replaced.deferred:  # a replacement keeps the contexts the body deferred
                    replaced.deferred = outcome.deferred
                replaced.concludes = replaced.concludes or outcome.concludes
                outcome = replaced
        return outcome

    async def run(self, call: ToolCallBlock) -> ToolOutcome:
        """The whole pipeline for one call (prepare, then dispatch)."""
        return await self.dispatch(await self.prepare(call))


def _wrap(wrapper: ExecuteWrapper, inv: ToolInvocation, inner: Dispatch) -> Dispatch:
    async def wrapped() -> ToolOutput:
        return await wrapper(inv, inner)

    return wrapped
