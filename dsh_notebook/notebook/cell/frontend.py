"""Which kind of Jupyter client runs the cell, so a ``%dsh`` turn's output suits it (``output = "auto"``).

Clients differ in one thing that matters here: whether they draw ``update_display_data`` (a display
output changed in place). JupyterLab, Notebook 7 and VS Code do, live; nbclient (``jupyter
nbconvert --execute``, papermill) applies each update to the saved output, so the ``.ipynb`` holds
the final text/html (inert: :mod:`.inert_html`) and text/plain. Terminal clients (``jupyter console``, qtconsole) draw a
display once and never its updates: they would show the first words of the turn and then only
the ``TurnResult``. So:

- no kernel (terminal IPython) → ``stream``;
- the execute request names its cell (``metadata.cellId``: JupyterLab, Notebook 7) → ``display``;
- the request allows no stdin (``allow_stdin: false``: nbclient, papermill, nbconvert — headless
  executors that keep each display's last state) → ``display``;
- anything else (``jupyter console``, qtconsole, an unknown client that can answer ``input()``)
  → ``stream``: text and tool lines appended as they happen, which every client shows.

``%config DshMagics.output = "display" | "stream"`` overrides the choice.
"""

from __future__ import annotations

from typing import Any, Literal

from ..context.cells import _parent

OutputMode = Literal["display", "stream"]


def choose_output(shell: Any, configured: str = "auto") -> tuple[OutputMode, str]:
    """The output mode for a turn run from ``shell`` now, and why (one short phrase)."""
    if configured in ("display", "stream"):
        return configured, "DshMagics.output"  # type: ignore[return-value]
    if getattr(shell, "kernel", None) is None:
        return "stream", "no kernel (terminal IPython)"
    return mode_for_request(_parent(shell))


def mode_for_request(parent: dict[str, Any]) -> tuple[OutputMode, str]:
    """The output mode for the client that sent ``parent`` (an ``execute_request`` message)."""
    if not parent:
        return "display", "no request known"
    metadata = parent.get("metadata") or {}
    if isinstance(metadata, dict) and metadata.get("cellId"):
        return "display", "a notebook front end (the request names its cell)"
    content = parent.get("content") or {}
    if isinstance(content, dict) and content.get("allow_stdin") is False:
        return "display", "a headless executor (no stdin: nbclient, papermill)"
    return "stream", "a terminal client (no cell id, stdin allowed: jupyter console, qtconsole)"
