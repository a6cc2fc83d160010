"""Tool definitions, the per-call context, outcomes and the approval protocol (seed 001 L7).

A :class:`Tool` is data: a name, a description, a pydantic model for its arguments, an async
``execute`` and the facts policy and the modes read — what it does (``effect``, from which
``read_only`` follows), what a rule's pattern is matched against (``subject``), its default
``approval``, ``concurrency_safe``. A :class:`ToolSpec` is the same declaration without the body:
a tool whose body lives in a higher layer (the notebook's tools, :mod:`.kernel_tools`) is declared
here so that policy, the modes and ``policy check`` know it, and bound to its body there
(:meth:`ToolSpec.bind`). The pipeline in :mod:`.runtime` runs it; the scheduler in
:mod:`.scheduler` orders calls and commits results. Every built-in tool passes one conformance
test (``tests/tools/test_tool_table.py``).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import BaseModel, JsonValue

from ..wire.codes import ErrorCode
from ..wire.events import PermissionMode, ToolSchema

PolicyDecision = Literal["allow", "deny", "ask"]
ApprovalDecision = Literal["allow", "deny", "cancelled"]
ApprovalMode = Literal["auto", "ask", "deny"]
"""The legacy ``--approve`` values; :mod:`.modes` maps each onto a :data:`PermissionMode`."""
ToolEffect = Literal["read", "edit", "bash", "execute", "notebook", "plan"]
"""What a call does, as the permission modes see it (:mod:`.modes`): ``read`` (runs in every
mode), ``edit`` (a file write or edit in the workspace: runs in accept-edits), ``bash`` (read-only
commands are reads, the rest executes), ``execute`` (code: asks unless bypass), ``notebook`` (a
cell inserted into the notebook: asks in every mode but bypass), ``plan`` (``exit_plan_mode``)."""


@dataclass(frozen=True)
class ToolOutput:
    """What a tool body returns: text for the model, whether it is an error, optional UI meta."""

    text: str
    is_error: bool = False
    code: ErrorCode | None = None
    meta: dict[str, JsonValue] | None = None


@dataclass
class ToolContext:
    """What a running tool may use: its workspace, identity, progress and deferred context."""

    cwd: Path
    call_id: str
    tool_name: str
    session_id: str | None = None
    progress: Callable[[str], None] = lambda _text: None
    deferred_contexts: list[str] = field(default_factory=list)
    main_thread: Any = None  # a MainThreadRunner for notebook-native tools (python)
    env: dict[str, str] | None = None
    concludes: bool = False
    mode: PermissionMode | None = None  # the session's permission mode when the call runs

    def defer_context(self, text: str) -> None:
        """Queue a context message for the next step (appended only after the whole batch)."""
        self.deferred_contexts.append(text)

    def conclude_turn(self) -> None:
        """Ask the agent to end the turn after this batch instead of calling the model again."""
        self.concludes = True


ToolFunction = Callable[[Any, ToolContext], Awaitable[ToolOutput]]
Subject = Callable[[Mapping[str, Any]], "str | None"]
"""A tool's rule subject: the string a rule's ``pattern`` is matched against, from the call's
parsed arguments (``None``: the raw arguments JSON)."""


def argument(key: str) -> Subject:
    """The subject is the argument ``key`` when it is a string (``bash``: ``command``)."""

    def subject(args: Mapping[str, Any]) -> str | None:
        value = args.get(key)
        return value if isinstance(value, str) else None

    subject.__qualname__ = f"argument({key!r})"
    subject.__doc__ = f"`{key}`"  # what the reference (docs/gen.py) shows
    return subject


def whole_arguments(args: Mapping[str, Any]) -> None:
    """the arguments' JSON

    The subject is the call's raw arguments (a tool without one argument that says it all)."""
    return None


@dataclass(frozen=True)
class ToolSpec:
    """What a tool is, apart from its body: what the model sees (``name``, ``description``, the
    arguments' model) and what policy reads. ``effect`` (:data:`ToolEffect`; ``None``: ``read`` if
    ``approval`` is allow, else ``execute`` — custom tools may leave it out, built-ins declare it)
    says what a call does; ``subject`` what a rule matches (``None``: the raw arguments)."""

    name: str
    description: str
    args_model: type[BaseModel]
    _: KW_ONLY
    concurrency_safe: bool | Callable[[Any], bool] = False
    approval: PolicyDecision = "allow"  # default pre-execute policy: allow, ask or deny
    timeout_s: float | None = 120.0
    origin: tuple[str, str] | None = None  # (server, remote tool name) for tools of an MCP server
    effect: ToolEffect | None = None
    subject: Subject | None = None

    @property
    def read_only(self) -> bool:
        """Whether every call only reads: it runs in every mode, plan included, and leaves the
        workspace as it was (a tool that declares no ``effect`` is not known to)."""
        return self.effect == "read"

    def rule_subject(self, arguments: str) -> str:
        """The string a rule's ``pattern`` is matched against for a call with ``arguments``."""
        try:
            parsed = json.loads(arguments) if arguments else {}
        except ValueError:
            return arguments
        if not isinstance(parsed, dict) or self.subject is None:
            return arguments
        try:
            value = self.subject(parsed)
        except Exception:  # a broken subject function: the raw arguments (rules still match them)
            value = None
        return value if isinstance(value, str) else arguments

    def schema(self) -> ToolSchema:
        params = self.args_model.model_json_schema()
        params.pop("title", None)
        for prop in params.get("properties", {}).values():
            if isinstance(prop, dict):
                prop.pop("title", None)
        return ToolSchema(name=self.name, description=self.description, parameters=params)

    def bind(self, execute: ToolFunction) -> Tool:
        """The tool this declares, running ``execute``."""
        return Tool(self.name, self.description, self.args_model, execute, concurrency_safe=self.concurrency_safe,
                    approval=self.approval, timeout_s=self.timeout_s, origin=self.origin, effect=self.effect,
                    subject=self.subject)


@dataclass(frozen=True)
class Tool(ToolSpec):
    """A tool the model can call: a :class:`ToolSpec` and its body."""

    execute: ToolFunction

    def is_concurrency_safe(self, args: Any) -> bool:
        flag = self.concurrency_safe
        try:
            return bool(flag(args)) if callable(flag) else bool(flag)
        except Exception:
            return False


@dataclass(frozen=True)
class ApprovalRequest:
    session_id: str | None
    call_id: str
    tool_name: str
    arguments: str
    reason: str | None = None
    mode: PermissionMode | None = None


@dataclass(frozen=True)
class PlanAnswer:
    """A person's answer to ``exit_plan_mode`` beyond allow / deny: the mode the work continues
    in (with allow) or the feedback that sends the plan back (with deny)."""

    mode: PermissionMode | None = None
    feedback: str | None = None


class Approver(Protocol):
    """Decides ``ask`` policies: auto, deny, stdin, widget — pluggable per session."""

    name: str

    async def decide(self, request: ApprovalRequest) -> ApprovalDecision: ...

    def answered_by(self, call_id: str) -> str:
        """Who decided ``call_id`` (logged as ``approval/decided.by``). An approver that relays
        decisions from clients (the host's pending approvals) names the client that answered."""
        return self.name

    def granted(self, call_id: str) -> bool:
        """Whether the *allow* for ``call_id`` was "for the rest of the session" (the runtime
        then logs a grant on ``approval/decided``; see :mod:`dsh_notebook.tools.rules`)."""
        return False

    def plan_answer(self, call_id: str) -> PlanAnswer | None:
        """For ``exit_plan_mode``: the mode chosen or the feedback given with the answer."""
        return None


class AutoApprover(Approver):
    name = "auto"

    async def decide(self, request: ApprovalRequest) -> ApprovalDecision:
        return "allow"


class DenyApprover(Approver):
    name = "deny"

    async def decide(self, request: ApprovalRequest) -> ApprovalDecision:
        return "deny"
