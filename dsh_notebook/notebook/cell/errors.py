"""An error as a cell shows it: one coded line instead of a traceback.

The magic raises it for every :class:`~dsh_notebook.errors.DshError` of a ``%dsh`` line; a
widget's constructor raises it for a wrong argument (:mod:`dsh_notebook.notebook.widgets.checks`).
IPython calls ``_render_traceback_`` and prints what it returns.
"""

from __future__ import annotations

from ...errors import DshError


class DshMagicError(Exception):
    """A ``DshError`` from the magic, shown by IPython as one line instead of a traceback."""

    def __init__(self, error: DshError) -> None:
        super().__init__(str(error))
        self.error = error

    def _render_traceback_(self) -> list[str]:
        return [f"\x1b[31mdsh [{self.error.code}]\x1b[0m {self.error.message}"]
