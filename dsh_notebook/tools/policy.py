"""Pre-execute policy, permission modes, approval and guards: may this call run? (seed 001 L7).

The decision is made in three steps, each visible as live frames and as facts in the log:

1. **pre-execute** — start from the tool's default (``allow`` / ``ask`` / ``deny``), then run
   each hook in order (a waterfall; a hook returns a verdict, a bare decision, or ``None`` to
   keep the verdict so far; a failing hook denies — fail closed). The session's approval
   policy (:mod:`.rules`: callables, rules, grants) is the first hook. Then the session's
   permission mode decides, in :func:`.modes.decide` (the one decision function): ``allow``,
   ``deny`` or ``ask``. A call decided without asking gets ``approval/decided {decision, by,
   rule?, mode, decider}`` (``by: "mode"`` when the mode decided) — every call that reaches the
   policy has a recorded decision;
2. **ask** — the :class:`Approver`, logging ``approval/asked {mode, decider}`` before and
   ``approval/decided {decider: "user"}`` after (also when the wait is cancelled). Only
   ``allow`` proceeds; ``deny``, ``cancelled``, a failing approver or no approver at all deny;
   an answer "allow for the rest of the session" (``approver.granted``) is logged with its
   ``grant``. What is logged of a decision (reasons, rule labels, the grant, feedback) has its
   secrets masked; the grant itself is kept as given by the session's policy (``on_grant``). An approved ``exit_plan_mode`` logs the mode chosen (``nextMode``) and changes the
   session's mode (``mode/changed {by: "plan"}``) before the tool runs; one sent back logs the
   person's ``feedback``, which the model reads in the result;
3. **guards** — monotonic checks that can only deny (a failing guard denies; logged as a second
   ``approval/decided`` with ``by: "guard"``).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from ..redaction import redact
from ..wire.events import ApprovalAsked, ApprovalDecided, Decider, Grant, PermissionMode
from ..wire.messages import ToolCallBlock
from .base import ApprovalRequest
from .modes import call_effect
from .modes import decide as mode_decide
from .outcome import Guard, PolicyVerdict, PreExecuteHook, ToolInvocation
from .rules import grant_for, grant_label, grant_shown

if TYPE_CHECKING:
    from ..session.session import Session
    from ..wire.frames import Phase, RuntimeStatus
    from .base import Approver
    from .modes import SessionMode
    from .sandbox import Workspace

CONTINUE_MODES: tuple[PermissionMode, ...] = ("accept-edits", "default")  # after an approved plan


class PolicyRuntime(Protocol):
    """What the policy reads of the runtime that asks it (:class:`~.runtime.ToolRuntime` is one)."""

    approver: Approver | None
    session: Session | None
    modes: SessionMode
    workspace: Workspace
    pre_execute: list[PreExecuteHook]
    guards: list[Guard]
    on_grant: Callable[[Grant], None] | None  # the session's policy keeps a grant as given

    def emit(self, call: ToolCallBlock, phase: Phase, status: RuntimeStatus, detail: str | None = None) -> None: ...

log = logging.getLogger(__name__)


async def settle(value: Any) -> Any:
    """``await value`` if it is awaitable (hooks may be sync or async)."""
    return await value if inspect.isawaitable(value) else value


async def decide(rt: PolicyRuntime, call: ToolCallBlock, inv: ToolInvocation) -> PolicyVerdict:
    """The final verdict for ``inv``: pre-execute and the mode, then ask, then guards."""
    verdict = await pre_execute(rt, call, inv)
    if verdict.decision != "allow":
        return verdict
    for guard in rt.guards:
        try:
            reason = guard(inv)
        except Exception as exc:
            reason = f"guard failed: {type(exc).__name__}: {exc}"
        if reason:
            _log(rt, ApprovalDecided(call_id=inv.call_id, name=inv.name, decision="deny", by="guard",
                                     mode=rt.modes.current, decider="rule"))
            rt.emit(call, "policy", "deny", f"guard: {reason}")
            return PolicyVerdict("deny", reason, "guard")
    return verdict


async def pre_execute(rt: PolicyRuntime, call: ToolCallBlock, inv: ToolInvocation) -> PolicyVerdict:
    """The tool's default, the hooks' waterfall, then the mode (:func:`.modes.decide`) and, for
    ``ask``, the approver."""
    default = inv.tool.approval
    verdict = PolicyVerdict(default, f"the {inv.name} tool is disabled" if default == "deny" else None)
    for hook in rt.pre_execute:
        try:
            result = await settle(hook(inv, verdict))
        except Exception as exc:
            result = PolicyVerdict("deny", f"pre-execute hook failed: {exc}", "hook")
        if result in ("allow", "deny", "ask"):
            result = PolicyVerdict(result, None, "hook")
        if isinstance(result, PolicyVerdict):
            verdict = result
    mode = rt.modes.current
    if inv.tool.effect == "bash":  # the line is parsed off the host loop
        effect, note = await asyncio.to_thread(call_effect, inv.tool, inv.args, rt.workspace)
    else:
        effect, note = call_effect(inv.tool, inv.args, rt.workspace)
    decision = mode_decide(mode, verdict, effect, inv.name)
    reason = decision.reason
    if note and decision.decider == "mode" and decision.action != "deny":
        reason = f"{reason or f'mode {mode}'} ({note})"
    if decision.action != "ask":
        _log(rt, ApprovalDecided(call_id=inv.call_id, name=inv.name, decision=decision.action, by=decision.by,
                                 rule=decision.rule, mode=mode, decider=decision.decider))
        rt.emit(call, "policy", decision.action, reason)
        return PolicyVerdict(decision.action, reason, decision.by, rule=decision.rule)
    rt.emit(call, "policy", "done", f"ask: {reason}" if reason else "ask")
    return await ask(rt, call, inv, PolicyVerdict("ask", reason, decision.by, rule=decision.rule), decision.decider)


async def ask(
    rt: PolicyRuntime, call: ToolCallBlock, inv: ToolInvocation, verdict: PolicyVerdict, decider: Decider = "mode"
) -> PolicyVerdict:
    """Ask the runtime's approver, logging ``approval/asked`` and ``approval/decided``."""
    approver, mode = rt.approver, rt.modes.current
    if approver is None:
        _log(rt, ApprovalDecided(call_id=inv.call_id, name=inv.name, decision="deny", by="no-approver", mode=mode,
                                 decider=decider))
        rt.emit(call, "approval", "deny", "no approver configured")
        reason = f"{inv.name} needs approval and no approver is configured"
        return PolicyVerdict("deny", reason, "approval")
    _log(rt, ApprovalAsked(call_id=inv.call_id, name=inv.name, reason=verdict.reason, approver=approver.name,
                           mode=mode, decider=decider))
    rt.emit(call, "approval", "waiting", verdict.reason)
    request = ApprovalRequest(inv.session_id, inv.call_id, inv.name, inv.arguments, verdict.reason, mode)
    try:
        decision = await approver.decide(request)
    except asyncio.CancelledError:
        _log(rt, ApprovalDecided(call_id=inv.call_id, name=inv.name, decision="cancelled", by=approver.name,
                                 mode=mode, decider="user"))
        rt.emit(call, "approval", "deny", "cancelled")
        raise
    except Exception as exc:
        log.warning("approver %s failed: %s", approver.name, exc)
        decision = "deny"
    if decision not in ("allow", "deny", "cancelled"):
        decision = "deny"
    by = approver.answered_by(inv.call_id)
    if inv.tool.effect == "plan":
        return _plan_answered(rt, call, inv, decision, by)
    grantable = inv.tool.effect != "notebook"  # a cell insert is asked every time (issue 37)
    granted = approver.granted(inv.call_id)
    grant = grant_for(inv.name, inv.arguments) if decision == "allow" and granted and grantable else None
    if grant is not None and rt.on_grant is not None:
        rt.on_grant(grant)  # as given: the log holds it masked (_log)
    _log(rt, ApprovalDecided(call_id=inv.call_id, name=inv.name, decision=decision, by=by,
                             rule=grant_label(grant) if grant else None, grant=grant, mode=mode, decider="user"))
    if decision == "allow":
        rt.emit(call, "approval", "allow", by)
        return PolicyVerdict("allow", None, "approval")
    rt.emit(call, "approval", "deny", decision)
    why = "was cancelled" if decision == "cancelled" else f"was refused (by {by})"
    return PolicyVerdict("deny", f"approval to run this {inv.name} call {why}", "approval")


def _plan_answered(rt: PolicyRuntime, call: ToolCallBlock, inv: ToolInvocation, decision: str, by: str
                   ) -> PolicyVerdict:
    """``exit_plan_mode`` answered: approved → the chosen mode from now on; else keep planning."""
    answer = rt.approver.plan_answer(inv.call_id) if rt.approver is not None else None
    if decision == "allow":
        chosen = answer.mode if answer is not None and answer.mode in CONTINUE_MODES else "default"
        _log(rt, ApprovalDecided(call_id=inv.call_id, name=inv.name, decision="allow", by=by, mode="plan",
                                 decider="user", next_mode=chosen))
        rt.modes.change(chosen, by="plan", call_id=inv.call_id, reason="the plan was approved")
        rt.emit(call, "approval", "allow", f"{by}: continue in {chosen}")
        return PolicyVerdict("allow", None, "approval")
    feedback = (answer.feedback or "").strip() or None if answer is not None else None
    _log(rt, ApprovalDecided(call_id=inv.call_id, name=inv.name, decision=decision, by=by,  # type: ignore[arg-type]
                             mode="plan", decider="user", feedback=feedback))
    rt.emit(call, "approval", "deny", decision)
    if decision == "cancelled":
        return PolicyVerdict("deny", "approval of the plan was cancelled", "approval")
    said = f" The person's feedback: {feedback}" if feedback else " They gave no feedback: ask what to change."
    return PolicyVerdict("deny", "the plan was not approved: the session stays in plan mode; keep planning "
                                 f"(only reads run) and present a revised plan with exit_plan_mode.{said}", "approval")


def _log(rt: PolicyRuntime, event: ApprovalAsked | ApprovalDecided) -> None:
    if rt.session is not None:
        rt.session.append(_shown(event))


def _shown(event: ApprovalAsked | ApprovalDecided) -> ApprovalAsked | ApprovalDecided:
    """The event as it is logged (and so followed, shown, exported): every text that can quote
    the call or a rule — ``reason``, ``rule``, ``grant``, ``feedback`` — with its secrets
    masked. What the call runs with, and the grant this process keeps, stay as given."""
    update: dict[str, Any] = {}
    for name in ("reason", "rule", "feedback"):
        text = getattr(event, name, None)
        if text and (masked := redact(text)) != text:
            update[name] = masked
    grant = getattr(event, "grant", None)
    if grant is not None and (masked_grant := grant_shown(grant)) is not grant:
        update["grant"] = masked_grant
    return event.model_copy(update=update) if update else event
