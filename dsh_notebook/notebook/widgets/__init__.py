"""The widgets: :class:`LoopWidget` and :class:`SessionInspector` (:mod:`.loop`), the compare widget
(:mod:`.compare`), their comm transport and argument checks. ``from dsh_notebook.notebook.widgets
import LoopWidget`` keeps working: the names load on first use (anywidget only then)."""

from __future__ import annotations

from typing import Any

__all__ = ["LoopWidget", "SessionInspector"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from . import loop

        return getattr(loop, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
