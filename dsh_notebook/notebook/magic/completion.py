"""Tab completion of ``%dsh`` lines and ``%%dsh`` cells in any IPython (a Python kernel too).

An IPython *context matcher* over the same logic as the agent kernel (:mod:`dsh_notebook.notebook.
complete`): on a ``%dsh`` line it offers flags, subcommands and flag values (``--approve``,
``--model``, ``--session``, ``resume``/``show`` ids), and ``{variables}`` in the prompt text; in a
``%%dsh`` cell's body, ``{variables}``. Anywhere else it stays silent and IPython's completers answer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any


def install_completer(shell: Any, sessions: Callable[[], Iterable[str]]) -> Callable[[], None]:
    """Register the matcher on ``shell``; returns its remover."""
    from IPython.core.completer import SimpleCompletion, context_matcher

    from .complete import complete

    @context_matcher()  # type: ignore[misc]
    def dsh_matcher(context: Any) -> dict[str, Any]:
        before = context.text_until_cursor
        line = before.rsplit("\n", 1)[-1].lstrip()
        if not (line.startswith("%dsh") or context.full_text.lstrip().startswith("%%dsh")):
            return {"completions": [], "suppress": False}
        got = complete(context.full_text, len(before), lambda: list(shell.user_ns), sessions)
        if got is None or not got[0]:
            return {"completions": [], "suppress": False}
        matches, start, _end = got
        return {"completions": [SimpleCompletion(m, type="dsh") for m in matches], "suppress": True,
                "matched_fragment": before[start:]}

    matchers = shell.Completer.custom_matchers
    matchers.append(dsh_matcher)

    def remove() -> None:
        if dsh_matcher in matchers:
            matchers.remove(dsh_matcher)

    return remove
