"""What one Agent sees (seed 001 object 3): the :class:`Scope` of a :class:`HarnessContext`.

A Scope is a cached view over a context's chain (the root first): every contribution of the
context and its ancestors, where a nearer contribution **shadows** a farther one of the same kind
and name; hook listeners accumulate instead (global listeners run first). It is rebuilt only when
the context tree's ``version`` changes. Import it from here or from :mod:`dsh_notebook.context`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .context import Contribution, HarnessContext, Hook


class Scope:
    """What an Agent sees: contributions of its context chain, nearer shadowing farther by name."""

    def __init__(self, ctx: HarnessContext) -> None:
        self.ctx = ctx
        self._seen_version = -1
        self._by_kind: dict[str, list[Contribution]] = {}

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
        return [c.value for c in self._refresh()["hook"] if c.name == hook]

    async def waterfall(self, hook: str, value: Any) -> Any:
        """Run ``hook``'s listeners in order; each may return a replacement value (sync or async)."""
        for fn in self.hooks(hook):
            out = fn(value)
            if inspect.isawaitable(out):
                out = await out
            if out is not None:
                value = out
        return value

    def describe(self) -> dict[str, Any]:
        by_kind = self._refresh()
        return {
            "context": self.ctx.name,
            "services": sorted(self.ctx.services()),
            **{
                f"{kind}s": [{"name": c.name, "order": c.order, "from": c.owner} for c in by_kind.get(kind, [])]
                for kind in ("section", "context", "tool", "variable")
            },
            "hooks": [{"hook": c.name, "from": c.owner} for c in by_kind["hook"]],
        }


__all__ = ["Scope"]
