"""What tools an agent offers and how its batches run: the offered schemas (``AgentConfig.tools``
filters them: ``None`` every tool, ``()`` none) and the cached :class:`ToolRuntime`.

A call to a tool that was not offered this turn is answered ``UNKNOWN_TOOL`` (the runtime's
registry holds only the offered tools), never run. :func:`check_tool_names` refuses a ``--tools``
name that is no tool here (``BAD_TOOLS``, naming it and the tools there are) before a session is
made or changed: the built-ins, the Scope's tools (a notebook's ``python`` …) and, for a server of
``mcp.json`` not started yet, any ``SERVER__TOOL`` name of it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import UserError
from ..tools.registry import ToolRegistry, builtin_tools
from ..tools.runtime import ToolRuntime
from ..wire.events import ToolSchema

if TYPE_CHECKING:
    from ..context import HarnessContext, Scope
    from ..session.session import Session
    from ..tools.base import ApprovalMode, Approver
    from ..tools.modes import SessionMode
    from ..tools.rules import ApprovalPolicy
    from ..wire.follow import FrameSink
    from .hooks import ToolHookBridge


class ToolsetOwner(Protocol):
    """What a :class:`Toolset` reads of its agent (:class:`~.agent.Agent` is one)."""

    session: Session
    scope: Scope
    context: HarnessContext
    policy_mode: ApprovalMode
    modes: SessionMode
    approver: Approver
    frames: FrameSink | None
    approval_policy: ApprovalPolicy | None
    tool_hooks: ToolHookBridge


class Toolset:
    """The tools of one agent: its registry, the Scope's tools, the turn's filter, the runtime."""

    def __init__(self, agent: ToolsetOwner, registry: ToolRegistry,
                 runtime_factory: Callable[[Any], ToolRuntime] | None = None) -> None:  # called with the agent
        self.agent = agent
        self.registry = registry
        self.runtime_factory = runtime_factory
        self.offered: tuple[str, ...] | None = None  # the running turn's filter (AgentConfig.tools)
        self._cache: tuple[tuple[Any, ...], ToolRuntime] | None = None
        self._schemas: tuple[tuple[Any, ...], tuple[ToolSchema, ...]] | None = None

    def schemas(self, names: tuple[str, ...] | None = None) -> tuple[ToolSchema, ...]:
        """The schemas offered to the model (``names``: the filter, ``None`` for all)."""
        every = self.registry.schemas()
        if names is None:
            return every
        key = (id(every), names)
        if self._schemas is None or self._schemas[0] != key:
            self._schemas = (key, tuple(s for s in every if s.name in names))
        return self._schemas[1]

    def effective(self) -> ToolRegistry:
        """The agent's registry plus the tools its Scope contributes (scope wins by name), less
        the tools this turn does not offer."""
        scoped = self.agent.scope.tools()
        merged = self.registry
        if scoped:
            merged = ToolRegistry(self.registry)
            for tool in scoped:
                merged.register(tool, replace=True)
        if self.offered is None:
            return merged
        return ToolRegistry(t for t in merged if t.name in self.offered)

    def runtime(self) -> ToolRuntime:
        """The ToolRuntime for a batch; rebuilt only when the tools, scope or policy changed."""
        agent = self.agent
        key = (agent.context.version, id(self.registry.schemas()), agent.policy_mode, id(agent.approver),
               id(agent.frames), id(agent.approval_policy), self.offered)
        if self._cache is not None and self._cache[0] == key:
            return self._cache[1]
        runtime = self._new_runtime()
        policy = agent.approval_policy
        if policy is not None and policy.pre_execute not in runtime.pre_execute:
            runtime.pre_execute.insert(0, policy.pre_execute)
        if policy is not None:
            runtime.on_grant = policy.remember  # a grant as given (the log masks a secret in it)
        runtime = agent.tool_hooks.install(runtime)
        self._cache = (key, runtime)
        return runtime

    def _new_runtime(self) -> ToolRuntime:
        agent = self.agent
        if self.runtime_factory is not None:
            return self.runtime_factory(agent)
        return ToolRuntime(self.effective(), workspace=agent.session.cwd or os.getcwd(), approver=agent.approver,
                           session=agent.session, frames=agent.frames, policy_mode=agent.policy_mode,
                           modes=agent.modes)


def offerable_tools(context: HarnessContext, registry: ToolRegistry | None = None) -> tuple[set[str], list[str]]:
    """The tool names a session under ``context`` can be offered (``registry``: the agent's, else
    the built-ins), and the ``SERVER__`` prefixes of the enabled MCP servers (whose tools are known
    only once a step starts them)."""
    names = set((registry if registry is not None else ToolRegistry(builtin_tools())).names)
    names.update(t.name for t in context.scope().tools())
    prefixes: list[str] = []
    try:
        mcp = context.service("mcp")
    except UserError:  # no MCP manager here (an agent built without a host)
        mcp = None
    if mcp is not None:
        from ..tools.mcp.names import SEP

        servers = getattr(mcp, "servers", {})
        prefixes = sorted(p + SEP for name, p in getattr(mcp, "prefixes", {}).items()
                          if name in servers and not servers[name].spec.disabled)
    return names, prefixes


def check_tool_names(tools: tuple[str, ...] | None, context: HarnessContext,
                     registry: ToolRegistry | None = None) -> None:
    """``BAD_TOOLS`` when a name of ``tools`` (the parsed ``--tools``) is no tool here."""
    if not tools:
        return
    known, prefixes = offerable_tools(context, registry)
    bad = [n for n in tools if n not in known and not any(n.startswith(p) and len(n) > len(p) for p in prefixes)]
    if not bad:
        return
    mcp = f"; MCP tools as {' or '.join(p + 'TOOL' for p in prefixes)}" if prefixes else ""
    what = f"{'an unknown tool' if len(bad) == 1 else 'unknown tools'} {', '.join(repr(b) for b in bad)}"
    raise UserError(f"--tools names {what}; the tools here: {', '.join(sorted(known))}{mcp} "
                    "(or none, or all)", code="BAD_TOOLS")


__all__ = ["Toolset", "check_tool_names", "offerable_tools"]
