"""Pre-execute policy, approval and guards: may this call run? (seed 001 L7 guard / approval).

The decision is made in three steps, each visible as live frames and, for approvals, as facts:

1. **pre-execute** — start from the tool's default (``allow`` / ``ask`` / ``deny``), then run
   each hook in order (a waterfall; a hook returns a verdict, a bare decision, or ``None`` to
   keep the verdict so far; a failing hook denies — fail closed). The session's approval
   policy (:mod:`.rules`: callables, rules, grants) is the first hook; when it (or any verdict
   with a ``rule``) allows or denies, ``approval/decided {by, rule}`` records which rule did;
2. **ask** — resolved by the runtime's ``policy_mode``: ``auto`` allows, ``deny`` denies, and
   ``ask`` asks the :class:`Approver`, logging ``approval/asked`` before and
   ``approval/decided`` after (also when the wait is cancelled). Only ``allow`` proceeds;
   ``deny``, ``cancelled``, a failing approver or no approver at all deny; an answer "allow for
   the rest of the session" (``approver.granted``) is logged with its ``grant``;
3. **guards** — monotonic checks that can only deny (a failing guard denies).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from typing import TYPE_CHECKING, Any, Protocol

from ..wire.events import ApprovalAsked, ApprovalDecided
from ..wire.messages import ToolCallBlock
from .base import ApprovalRequest
from .outcome import Guard, PolicyVerdict, PreExecuteHook, ToolInvocation
from .rules import grant_for, grant_label

if TYPE_CHECKING:
    from ..session.session import Session
    from ..wire.frames import Phase, RuntimeStatus
    from .base import ApprovalMode, Approver


class PolicyRuntime(Protocol):
    """What the policy reads of the runtime that asks it (:class:`~.runtime.ToolRuntime` is one)."""

    approver: Approver | None
    session: Session | None
    policy_mode: ApprovalMode
    pre_execute: list[PreExecuteHook]
    guards: list[Guard]

    def emit(self, call: ToolCallBlock, phase: Phase, status: RuntimeStatus, detail: str | None = None) -> None: ...

log = logging.getLogger(__name__)


async def settle(value: Any) -> Any:
    """``await value`` if it is awaitable (hooks may be sync or async)."""
    return await value if inspect.isawaitable(value) else value


async def decide(rt: PolicyRuntime, call: ToolCallBlock, inv: ToolInvocation) -> PolicyVerdict:
    """The final verdict for ``inv``: pre-execute, then ask resolution, then guards."""
    verdict = await pre_execute(rt, call, inv)
    if verdict.decision != "allow":
        return verdict
    for guard in rt.guards:
        try:
            reason = guard(inv)
        except Exception as exc:
            reason = f"guard failed: {type(exc).__name__}: {exc}"
        if reason:
            rt.emit(call, "policy", "deny", f"guard: {reason}")
            return PolicyVerdict("deny", reason, "guard")
    return verdict


async def pre_execute(rt: PolicyRuntime, call: ToolCallBlock, inv: ToolInvocation) -> PolicyVerdict:
    """The tool's default, the hooks' waterfall, then ``policy_mode`` / the approver for ``ask``."""
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
    if verdict.rule is not None and verdict.decision != "ask":  # an approval policy decided
        _log(rt, ApprovalDecided(call_id=inv.call_id, name=inv.name, decision=verdict.decision,
                                 by=verdict.source, rule=verdict.rule))
    if verdict.decision == "allow":
        rt.emit(call, "policy", "allow", verdict.reason)
        return verdict
    if verdict.decision == "deny":
        rt.emit(call, "policy", "deny", verdict.reason)
        return verdict
    if rt.policy_mode == "auto":
        rt.emit(call, "policy", "allow", "approved automatically (policy_mode=auto)")
        return PolicyVerdict("allow", verdict.reason, "mode")
    if rt.policy_mode == "deny":
        reason = f"{inv.name} needs approval and approvals are set to deny (policy_mode=deny)"
        rt.emit(call, "policy", "deny", reason)
        return PolicyVerdict("deny", reason, "mode")
    rt.emit(call, "policy", "done", f"ask: {verdict.reason}" if verdict.reason else "ask")
    return await ask(rt, call, inv, verdict)


async def ask(
    rt: PolicyRuntime, call: ToolCallBlock, inv: ToolInvocation, verdict: PolicyVerdict
) -> PolicyVerdict:
    """Ask the runtime's approver, logging ``approval/asked`` and ``approval/decided``."""
    approver = rt.approver
    if approver is None:
        rt.emit(call, "approval", "deny", "no approver configured")
        reason = f"{inv.name} needs approval and no approver is configured"
        return PolicyVerdict("deny", reason, "approval")
    _log(rt, ApprovalAsked(call_id=inv.call_id, name=inv.name, reason=verdict.reason, approver=approver.name))
    rt.emit(call, "approval", "waiting", verdict.reason)
    request = ApprovalRequest(inv.session_id, inv.call_id, inv.name, inv.arguments, verdict.reason)
    try:
        decision = await approver.decide(request)
    except asyncio.CancelledError:
        _log(rt, ApprovalDecided(call_id=inv.call_id, name=inv.name, decision="cancelled", by=approver.name))
        rt.emit(call, "approval", "deny", "cancelled")
        raise
    except Exception as exc:
        log.warning("approver %s failed: %s", approver.name, exc)
        decision = "deny"
    if decision not in ("allow", "deny", "cancelled"):
        decision = "deny"
    by = approver.answered_by(inv.call_id)
    grant = grant_for(inv.name, inv.arguments) if decision == "allow" and approver.granted(inv.call_id) else None
    _log(rt, ApprovalDecided(call_id=inv.call_id, name=inv.name, decision=decision, by=by,
                             rule=grant_label(grant) if grant else None, grant=grant))
    if decision == "allow":
        rt.emit(call, "approval", "allow", by)
        return PolicyVerdict("allow", None, "approval")
    rt.emit(call, "approval", "deny", decision)
    why = "was cancelled" if decision == "cancelled" else f"was refused (by {by})"
    return PolicyVerdict("deny", f"approval to run this {inv.name} call {why}", "approval")


def _log(rt: PolicyRuntime, event: ApprovalAsked | ApprovalDecided) -> None:
    if rt.session is not None:
        rt.session.append(event)
