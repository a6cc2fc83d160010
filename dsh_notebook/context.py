"""A small Cordis equivalent (seed 001 objects 1–3): Context, Services, Scope, hooks, disposal.

A :class:`HarnessContext` is a node in a tree: the host owns the root (global) context, each
Agent gets a child. Through a context, components

- **provide services** by name (``provide("model", svc)``; looked up with ``service(name)``,
  nearer contexts first), each with a lifecycle: ``active`` until disposed;
- **contribute** prompt sections, runtime contexts, tools and variables (``section``,
  ``context``, ``tool``, ``variable``);
- **listen to hooks**: waterfalls such as ``agent/pre-step`` where each listener may return a
  new value (``None`` keeps the current one).

A :class:`Scope` is what one Agent sees: the contributions of its context and all its
ancestors, where a nearer contribution **shadows** a farther one with the same kind and name.
Every registration returns a :class:`Disposable`; disposing a context disposes its children,
its contributions and its services (newest first). ``describe()`` shows it all to a learner.
A :class:`Scope` is a cached view, rebuilt only when the tree's ``version`` changes; hook
listeners accumulate instead of shadowing (global listeners run first).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, TypedDict

from pydantic import JsonValue

from .errors import UserError

HOOKS = ("agent/pre-step", "agent/turn-stopping", "tools/pre-execute", "tools/post-execute", "agent/prepare-tools",
         "agent/turn-end")
Kind = Literal["section", "context", "tool", "variable", "hook"]
Hook = Callable[[Any], Any]


class Disposable:
    """Undo one registration. Idempotent; also usable as a context manager."""

    __slots__ = ("_fn", "disposed")

    def __init__(self, fn: Callable[[], None]) -> None:
        self._fn, self.disposed = fn, False

    def __call__(self) -> None:
        if not self.disposed:
            self.disposed = True
            self._fn()

    def __enter__(self) -> Disposable:
        return self

    def __exit__(self, *exc: object) -> None:
        self()


@dataclass(frozen=True)
class Contribution:
    """One registered thing: a section/context (text or ``fn(env) -> str``), tool, variable, hook."""

    kind: Kind
    name: str
    value: Any
    order: int = 0
    owner: str = ""


@dataclass
class _Service:
    name: str
    value: Any
    dispose: Callable[[], None] | None
    state: Literal["active", "disposed"] = "active"


class HarnessContext:
    """The runtime entry: services, contributions, hooks, children; all disposed with it."""

    def __init__(self, name: str = "root", *, parent: HarnessContext | None = None) -> None:
        self.name, self.parent = name, parent
        self.children: list[HarnessContext] = []
        self._services: dict[str, _Service] = {}
        self._items: list[Contribution] = []
        self._root: HarnessContext = parent._root if parent else self
        self._version = 0  # meaningful on the root only: bumped by any change in the tree
        self.disposed = False

    # -- services -----------------------------------------------------------------------------
    def provide(self, name: str, service: Any, *, dispose: Callable[[], None] | None = None) -> Disposable:
        """Register ``service`` under ``name`` here (shadowing an ancestor's service of that name)."""
        self._check_live()
        if name in self._services:
            raise UserError(f"service {name!r} is already provided in {self.name!r}", code="SERVICE_EXISTS")
        entry = _Service(name, service, dispose)
        self._services[name] = entry
        self._bump()
        return Disposable(lambda: self._drop_service(entry))

    def _drop_service(self, entry: _Service) -> None:
        if self._services.get(entry.name) is entry:
            del self._services[entry.name]
        entry.state = "disposed"
        if entry.dispose is not None:
            entry.dispose()
        self._bump()

    def service(self, name: str) -> Any:
        ctx: HarnessContext | None = self
        while ctx is not None:
            if name in ctx._services:
                return ctx._services[name].value
            ctx = ctx.parent
        raise UserError(f"no service named {name!r} in context {self.name!r}", code="UNKNOWN_SERVICE")

    def services(self) -> dict[str, object]:
        """Every service visible from here, nearer ones shadowing farther ones."""
        out: dict[str, object] = {}
        for ctx in self._chain():
            out.update({k: s.value for k, s in ctx._services.items()})
        return out

    # -- contributions and hooks --------------------------------------------------------------
    def section(self, name: str, order: int = 0, text: str | Callable[[Any], str] = "") -> Disposable:
        """A system-prompt section (``text`` may contain ``{{variables}}``; or ``fn(env) -> str``)."""
        return self._add(Contribution("section", name, text, order, self.name))

    def context(self, name: str, order: int = 0, text: str | Callable[[Any], str] = "") -> Disposable:
        """A runtime-context section: not in the system prompt, in the runtime-context message."""
        return self._add(Contribution("context", name, text, order, self.name))

    def tool(self, tool: Any) -> Disposable:
        """A tool (``dsh_notebook.tools.base.Tool``) the agents of this scope can call."""
        return self._add(Contribution("tool", tool.name, tool, 0, self.name))

    def variable(self, name: str, fn: Callable[[Any], str | None]) -> Disposable:
        """A prompt variable ``{{name}}``: ``fn(env)`` gives its value (``None`` = undefined)."""
        return self._add(Contribution("variable", name, fn, 0, self.name))

    def on(self, hook: str, fn: Hook) -> Disposable:
        """Listen to a waterfall hook: ``fn(value)`` returns a new value, or ``None`` to keep it."""
        if hook not in HOOKS:
            raise UserError(f"unknown hook {hook!r}; known: {', '.join(HOOKS)}", code="UNKNOWN_HOOK")
        return self._add(Contribution("hook", hook, fn, 0, self.name))

    def _add(self, item: Contribution) -> Disposable:
        self._check_live()
        self._items.append(item)
        self._bump()

        def remove() -> None:
            if item in self._items:
                self._items.remove(item)
                self._bump()

        return Disposable(remove)

    # -- tree, scope, lifecycle ---------------------------------------------------------------
    def child(self, name: str) -> HarnessContext:
        """A child context (e.g. per agent); it is disposed with this one."""
        self._check_live()
        ctx = HarnessContext(name, parent=self)
        self.children.append(ctx)
        return ctx

    def scope(self) -> Scope:
        return Scope(self)

    @property
    def version(self) -> int:
        """Changes whenever anything in this context tree changes (for caches)."""
        return self._root._version

    def dispose(self) -> None:
        """Dispose children, then contributions, then services (newest first). Idempotent."""
        if self.disposed:
            return
        for child in reversed(list(self.children)):
            child.dispose()
        self._items.clear()
        for entry in reversed(list(self._services.values())):
            self._drop_service(entry)
        self.disposed = True
        if self.parent is not None and self in self.parent.children:
            self.parent.children.remove(self)
        self._bump()

    def describe(self) -> dict[str, JsonValue]:
        """Services (with owner and state) and contributions of this context and its children."""
        return {
            "name": self.name,
            "disposed": self.disposed,
            "services": [
                {"name": s.name, "type": type(s.value).__name__, "state": s.state}
                for s in self._services.values()
            ],
            "contributions": [
                {"kind": c.kind, "name": c.name, "order": c.order} for c in self._items
            ],
            "children": [c.describe() for c in self.children],
        }

    def _chain(self) -> list[HarnessContext]:
        chain: list[HarnessContext] = []
        ctx: HarnessContext | None = self
        while ctx is not None:
            chain.append(ctx)
            ctx = ctx.parent
        return chain[::-1]  # root first

    def _bump(self) -> None:
        self._root._version += 1

    def _check_live(self) -> None:
        if self.disposed:
            raise UserError(f"context {self.name!r} is disposed", code="CONTEXT_DISPOSED")

    def __repr__(self) -> str:
        return f"<HarnessContext {self.name!r} {len(self._services)} services {len(self._items)} items>"


# --- what one Agent sees (seed 001 object 3) -------------------------------------------------


ContributionView = TypedDict("ContributionView", {"name": str, "order": int, "from": str})
HookView = TypedDict("HookView", {"hook": str, "from": str})


class ScopeView(TypedDict):
    """``Scope.describe()``: the context, its services, and every contribution by kind."""

    context: str
    services: list[str]
    sections: list[ContributionView]
    contexts: list[ContributionView]
    tools: list[ContributionView]
    variables: list[ContributionView]
    hooks: list[HookView]


class Scope:
    """What an Agent sees: contributions of its context chain, nearer shadowing farther by name."""

    def __init__(self, ctx: HarnessContext) -> None:
        self.ctx = ctx
        self._seen_version = -1
        self._by_kind: dict[str, list[Contribution]] = {}
        self._by_hook: dict[str, list[Hook]] = {}  # a hook's listeners, as of ``_seen_version``

    def _refresh(self) -> dict[str, list[Contribution]]:
        if self._seen_version != self.ctx.version:
            visible: dict[tuple[str, str], Contribution] = {}
            hooks: list[Contribution] = []
            for ctx in self.ctx._chain():
                for item in ctx._items:
                    if item.kind == "hook":
                        hooks.append(item)  # hooks accumulate: global listeners run first
                    else:
                        visible.pop((item.kind, item.name), None)
                        visible[(item.kind, item.name)] = item
            by_kind: dict[str, list[Contribution]] = {"hook": hooks}
            for item in visible.values():
                by_kind.setdefault(item.kind, []).append(item)
            for kind in ("section", "context"):
                by_kind.setdefault(kind, []).sort(key=lambda c: (c.order, c.name))
            self._by_kind, self._seen_version = by_kind, self.ctx.version
            self._by_hook = {}
        return self._by_kind

    def sections(self) -> list[Contribution]:
        return self._refresh().get("section", [])

    def contexts(self) -> list[Contribution]:
        return self._refresh().get("context", [])

    def tools(self) -> list[Any]:
        return [c.value for c in self._refresh().get("tool", [])]

    def variables(self) -> dict[str, Callable[[Any], str | None]]:
        return {c.name: c.value for c in self._refresh().get("variable", [])}

    def hooks(self, hook: str) -> list[Hook]:
        """``hook``'s listeners in order (a copy: worked out once per change of the chain)."""
        contributions = self._refresh()["hook"]
        found = self._by_hook.get(hook)
        if found is None:
            found = self._by_hook[hook] = [c.value for c in contributions if c.name == hook]
        return list(found)

    async def waterfall(self, hook: str, value: Any) -> Any:
        """Run ``hook``'s listeners in order; each may return a replacement value (sync or async)."""
        for fn in self.hooks(hook):
            out = fn(value)
            if inspect.isawaitable(out):
                out = await out
            if out is not None:
                value = out
        return value

    def describe(self) -> ScopeView:
        by_kind = self._refresh()

        def named(kind: str) -> list[ContributionView]:
            return [{"name": c.name, "order": c.order, "from": c.owner} for c in by_kind.get(kind, [])]

        return {
            "context": self.ctx.name,
            "services": sorted(self.ctx.services()),
            "sections": named("section"),
            "contexts": named("context"),
            "tools": named("tool"),
            "variables": named("variable"),
            "hooks": [{"hook": c.name, "from": c.owner} for c in by_kind["hook"]],
        }

__all__ = ["Scope"]


__all__ = ["HOOKS", "Contribution", "Disposable", "HarnessContext", "Scope"]
