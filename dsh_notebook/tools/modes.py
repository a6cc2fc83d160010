"""Permission modes (issue 36 item 4): what the agent may do without asking, decided in one place.

A session has one mode at a time (the last ``mode/changed`` of its log, else the mode it was
created in, :func:`default_mode`); :func:`decide` is **the** decision function, asked by the tool
runtime before any tool runs (:mod:`.policy`). It takes the verdict of the approval policy
(rules, policy callables, hooks, "allow for this session" grants: :mod:`.rules`) and what the
call does (:func:`call_effect`), and says ``allow`` / ``ask`` / ``deny`` and what decided it
(``rule``, ``grant`` or ``mode``; a person's answer is ``user``):

==================  ======  ============  ====  ========  ======  ====
call                default accept-edits  plan  dont-ask  bypass  auto
==================  ======  ============  ====  ========  ======  ====
read (1)            run     run           run   run       run     run
read-only bash (2)  ask     run           run   deny      run     run
edit (3)            ask     run           deny  deny      run     run
bash, python        ask     ask           deny  deny      run     run
notebook (4)        ask     ask           deny  deny      run     ask
exit_plan_mode      deny    deny          ask   deny      deny    deny
==================  ======  ============  ====  ========  ======  ====

(1) a tool whose ``effect`` is ``read`` (``Tool.read_only``): ``read``, ``grep``, ``glob``,
``notebook_read``, ``inspect_var`` (and MCP tools whose read-only hint is trusted); (2) :func:`bash_is_read_only` — ``default`` asks for every bash line as
the issue says ("writes, edits, bash … ask"), ``accept-edits`` and ``plan`` let read-only lines
run, and ``dont-ask`` denies what ``default`` would ask; (3) ``write`` / ``edit`` of a path inside
the workspace and outside any ``.git`` directory (a ``.git/config`` or hook runs programs later:
it asks); (4) ``notebook_insert`` always asks a person, in every mode but bypass (issue 37 item 7)
— no rule, grant or callable allows it, so in ``accept-edits`` it asks too.

Around the table: a **deny** from a rule, a callable, a hook or a disabled tool holds in every
mode, bypass included (and the sandbox always holds); an explicit **allow** (a rule, a grant)
runs a call that would ask, but not a non-read in plan mode; an explicit **ask** rule asks even
for a read (in ``bypass`` and ``auto`` nothing asks but ``notebook_insert`` in ``auto``);
``dont-ask`` denies whatever would ask. ``bypass`` must be armed: ``DSH_ALLOW_BYPASS=1`` in the
environment of the process that runs the session, else ``BYPASS_NOT_ARMED``.

Legacy ``--approve``: ``ask`` → ``default``, ``deny`` → ``dont-ask``, ``auto`` → ``auto`` — the old
behaviour (every call runs, deny rules aside) kept under its own name, never armed-only bypass,
except that ``notebook_insert`` asks; a demo-workspace copy starts in ``auto`` as it always did.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from ..demo import is_demo_copy
from ..errors import ToolError, UserError
from ..wire.events import ChosenMode, Decider, ModeChanged, PermissionMode
from .base import ApprovalMode, ToolEffect, ToolSpec
from .git_guard import git_refusal
from .grants import is_read_only
from .outcome import PolicyVerdict
from .registry import reads_phrase
from .shell_parse import parse_line

if TYPE_CHECKING:
    from ..session.session import Session
    from .sandbox import Workspace

MODES: tuple[ChosenMode, ...] = ("default", "accept-edits", "plan", "dont-ask", "bypass")
LEGACY: dict[ApprovalMode, PermissionMode] = {"ask": "default", "deny": "dont-ask", "auto": "auto"}
ARM_VAR = "DSH_ALLOW_BYPASS"
READS = reads_phrase()  # "read, grep, glob, notebook_read, inspect_var and read-only bash": the tools' own flags
Action = Literal["allow", "ask", "deny"]
CallKind = Literal["read", "read-bash", "edit", "execute", "notebook", "plan"]
"""What :func:`decide` is told a call does: a tool's :data:`~.base.ToolEffect`, refined per call
(a read-only bash line is ``read-bash``; an edit outside the workspace or in ``.git`` executes)."""


def bypass_armed() -> bool:
    """Whether ``bypass`` may be chosen in this process (``DSH_ALLOW_BYPASS=1``)."""
    return os.environ.get(ARM_VAR, "").strip() == "1"


def parse_mode(value: str, flag: str = "--mode") -> ChosenMode:
    """A mode a person names, checked (``BAD_MODE``); ``bypass`` also needs arming."""
    name = value.strip() if isinstance(value, str) else value
    if name not in MODES:
        raise UserError(f"{flag} {value!r} is not a permission mode; choose one of {', '.join(MODES)}",
                        code="BAD_MODE")
    check_mode(name)  # type: ignore[arg-type]
    return name  # type: ignore[return-value]


def check_mode(mode: PermissionMode) -> None:
    """``BYPASS_NOT_ARMED`` for ``bypass`` unless this process was armed."""
    if mode == "bypass" and not bypass_armed():
        raise UserError("mode bypass runs every call without asking (deny rules aside) and must be armed "
                        f"for the session: start the kernel or command with {ARM_VAR}=1 in its environment, "
                        "or choose another mode (accept-edits, default, dont-ask)", code="BYPASS_NOT_ARMED")


def mode_of_approve(approve: ApprovalMode) -> PermissionMode:
    return LEGACY[approve]


def approve_of_mode(mode: PermissionMode) -> ApprovalMode:
    """The legacy ``approve`` value a mode reads as (``session/info.approve`` and friends)."""
    return "deny" if mode == "dont-ask" else "auto" if mode in ("bypass", "auto") else "ask"


def default_mode(cwd: str) -> PermissionMode:
    """A session's mode when nobody chose one: ``auto`` in a demo-workspace copy, else ``default``."""
    return "auto" if is_demo_copy(cwd) else "default"


def mode_from_log(events: object) -> PermissionMode | None:
    """The mode the last ``mode/changed`` of ``events`` set, else ``None``."""
    for event in reversed(events):  # type: ignore[call-overload]
        if isinstance(event, ModeChanged):
            return event.mode
    return None


class SessionMode:
    """The permission mode of one live session: read by the tool runtime at every call, changed
    only through :meth:`change` (which logs ``mode/changed``). Host loop only."""

    def __init__(self, session: Session | None, initial: PermissionMode) -> None:
        self.session = session
        logged = mode_from_log(session.events) if session is not None else None
        self.current: PermissionMode = logged or initial
        self._listeners: list[Callable[[PermissionMode, PermissionMode], None]] = []

    def change(self, mode: PermissionMode, *, by: str, call_id: str | None = None, reason: str | None = None,
               turn: int | None = None) -> ModeChanged | None:
        """Set ``mode`` (``BYPASS_NOT_ARMED`` …); the logged event, or ``None`` when it already was."""
        if mode != "auto":
            check_mode(mode)
        previous = self.current
        if mode == previous:
            return None
        event = ModeChanged(mode=mode, previous=previous, by=by, call_id=call_id, reason=reason, turn=turn)
        if self.session is not None:
            event = self.session.append(event)
        self.current = mode
        for fn in list(self._listeners):
            fn(mode, previous)
        return event

    def subscribe(self, fn: Callable[[PermissionMode, PermissionMode], None]) -> Callable[[], None]:
        """``fn(mode, previous)`` after every change; returns the unsubscribe function."""
        self._listeners.append(fn)
        return lambda: self._listeners.remove(fn) if fn in self._listeners else None


# --- what a call does ------------------------------------------------------------------------


def bash_is_read_only(command: str, workspace: Path | None = None) -> bool:
    """Whether a bash line only reads, so that it runs as a read in every mode.

    The parser decides (:func:`.grants.is_read_only`): a resolved line without output redirection
    whose every simple command is a read-only name a grant could cover. A line that runs git is
    read-only only when :func:`.git_guard.git_refusal` finds nothing in how it starts git or in
    the repository of ``workspace`` (the repository's configuration may run programs: fsmonitor,
    filters, diff drivers from a ``.git/config`` the agent may have written); without a workspace,
    never. Reads git's files: call it off the host loop."""
    line = parse_line(command.strip())
    if not is_read_only(line):
        return False
    if any("git" in (r[0] for r in cmd.resolved if r) for cmd in line.commands):
        return workspace is not None and git_refusal(line, workspace) is None
    return True


def call_effect(tool: ToolSpec, args: object, workspace: Workspace | None) -> tuple[CallKind | None, str | None]:
    """What this call does for the modes, and a note (why an edit or a bash line counts as it does).

    ``None``: a tool that declares nothing (its ``approval`` default stands: allow runs, ask asks)."""
    effect: ToolEffect | None = tool.effect
    if effect == "bash":
        command = getattr(args, "command", "")
        root = workspace.root if workspace is not None else None
        return ("read-bash", "a read-only command") if bash_is_read_only(str(command), root) else ("execute", None)
    if effect == "edit":
        path = getattr(args, "file_path", None)
        if workspace is None or not isinstance(path, str):
            return "execute", "not a path in the workspace"
        try:
            real = workspace.resolve(path)
        except ToolError:
            return "execute", "a path outside the workspace"
        if ".git" in Path(workspace.relative(real)).parts:
            return "execute", "a path inside .git (it configures programs git runs)"
    return effect, None


# --- the decision ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Decision:
    """What :func:`decide` says: the action, what decided it, why, and how it is logged
    (``by``: ``mode`` or the policy's source; ``rule``: the rule / grant label)."""

    action: Action
    decider: Decider
    reason: str | None = None
    by: str = "mode"
    rule: str | None = None


_ASKS: dict[PermissionMode, frozenset[str]] = {  # what each mode asks for (no rule said otherwise)
    "default": frozenset({"read-bash", "edit", "execute", "notebook"}),
    "accept-edits": frozenset({"execute", "notebook"}),
    "dont-ask": frozenset({"read-bash", "edit", "execute", "notebook"}),
    "auto": frozenset({"notebook"}),
}


def _decider(source: str) -> Decider:
    return "grant" if source == "session" else "rule"


def decide(mode: PermissionMode, verdict: PolicyVerdict, effect: CallKind | None, name: str = "tool") -> Decision:
    """**The** decision function: ``verdict`` is the approval policy's (``source`` ``tool`` when
    no rule, grant, callable or hook said anything), ``effect`` what the call does."""
    explicit = verdict.source != "tool"
    said = Decision(verdict.decision, _decider(verdict.source), verdict.reason, verdict.source, verdict.rule)
    if verdict.decision == "deny":  # deny rules, callables, hooks, disabled tools: every mode
        return said
    if effect == "plan":
        if mode == "plan":
            return Decision("ask", "mode", "the plan needs your approval: continue in accept-edits or default, "
                                           "or keep planning with feedback")
        return Decision("deny", "mode", f"exit_plan_mode ends plan mode, and the session is in {mode} mode: "
                                        "carry on with the task")
    if mode == "bypass":
        return said if explicit and verdict.decision == "allow" else Decision("allow", "mode", "mode bypass")
    if mode == "plan":
        if effect not in ("read", "read-bash"):
            return Decision("deny", "mode", f"plan mode: only reads run ({READS}); finish the plan and present "
                                            "it with exit_plan_mode {plan} — once approved, the work can start")
        return said if explicit else Decision("allow", "mode", "a read")
    if effect == "notebook" and not (explicit and verdict.decision == "ask"):
        said = Decision("ask", "mode", f"{name} writes into the notebook: a person decides in every mode but bypass")
    elif not explicit:
        asks = effect in _ASKS[mode] if effect is not None else verdict.decision == "ask" and mode != "auto"
        said = Decision("ask" if asks else "allow", "mode", verdict.reason if asks else f"mode {mode}")  # why: unresolved …
    elif mode == "auto" and said.action == "ask":  # the legacy auto asked nothing but cells
        said = Decision("allow", "mode", "mode auto")
    if said.action == "ask" and mode == "dont-ask":
        why = f" ({said.rule} says ask)" if said.rule else ""
        return Decision("deny", "mode", f"{name} would need approval{why} and the session's mode is dont-ask: "
                                        "nothing is asked, so it was denied (allow it with a rule, or choose "
                                        "another mode)")
    return said


__all__ = [
    "ARM_VAR", "LEGACY", "MODES", "CallKind", "Decision", "SessionMode", "approve_of_mode", "bash_is_read_only", "bypass_armed",
    "call_effect", "check_mode", "decide", "default_mode", "mode_from_log", "mode_of_approve", "parse_mode",
]  # fmt: skip
