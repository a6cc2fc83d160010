"""Every ``%dsh`` view line shows its output where it stands in the cell — once.

IPython shows a value only for the statement its ``ast_node_interactivity`` runs interactively (by
default the cell's last expression), so of a cell ``%dsh sessions`` / ``%dsh show`` only the second
would show. :class:`ViewLines` is an IPython AST transformer (``shell.ast_transformers``): in the
cell being run, each expression statement that is a ``%dsh`` / ``%%dsh`` call —
``get_ipython().run_line_magic('dsh', …)``, as IPython's own input transformers write it — and that
IPython will not display itself has its value passed to :func:`show_view`, which displays it (a
``display_data`` output, where the line stands). The line IPython displays (the last one, by
default) stays untouched: it is the cell's ``Out[n]`` and ``_``. Nothing else in the cell changes:
an assignment (``x = %dsh sessions``) keeps the object without showing it, a trailing ``;`` still
silences a line (``@output_can_be_silenced``), other code runs as IPython would run it.

A prompt's :class:`~..cell.result.TurnResult` (or ``--bg`` handle) is not shown again by
:func:`show_view`: the turn rendered itself live. Only the cell's own tree is transformed: the
transformer is armed by ``pre_run_cell`` (so never in a silent execution) and disarmed by the first
tree it sees, so code that ``%time`` / ``%timeit`` parse on their own is left alone.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

_MODULE = __name__
_MAGIC_CALLS = frozenset({"run_line_magic", "run_cell_magic"})


def show_view(value: Any) -> None:
    """Display what a ``%dsh`` line returned; nothing for ``None`` and for a prompt's result or handle.
    Returns ``None``: a statement IPython compiles interactively shows nothing more."""
    from ..cell.result import TurnResult
    from ..cell.turn import CellTurn

    if value is None or isinstance(value, (TurnResult, CellTurn)):
        return
    from IPython.display import display

    display(value)


def is_dsh_call(node: ast.AST) -> bool:
    """``get_ipython().run_line_magic('dsh', …)`` / ``run_cell_magic('dsh', …)``."""
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _MAGIC_CALLS
            and isinstance(node.func.value, ast.Call) and isinstance(node.func.value.func, ast.Name)
            and node.func.value.func.id == "get_ipython" and bool(node.args)
            and isinstance(node.args[0], ast.Constant) and node.args[0].value == "dsh")


def displayed_by_ipython(body: list[ast.stmt], interactivity: str) -> list[ast.stmt]:
    """The top-level statements IPython runs interactively (``InteractiveShell.run_ast_nodes``)."""
    if interactivity == "all":
        return list(body)
    if interactivity in ("last", "last_expr", "last_expr_or_assign") and body and isinstance(body[-1], ast.Expr):
        return [body[-1]]
    return []


def _wrapped(value: ast.expr) -> ast.expr:
    """``__import__('<this module>', fromlist=['show_view']).show_view(value)``: no name of the
    user's namespace is needed (nor can ``%reset`` remove one)."""
    module = ast.Call(func=ast.Name("__import__", ast.Load()), args=[ast.Constant(_MODULE)],
                      keywords=[ast.keyword("fromlist", ast.List([ast.Constant("show_view")], ast.Load()))])
    call = ast.Call(func=ast.Attribute(module, "show_view", ast.Load()), args=[value], keywords=[])
    return ast.fix_missing_locations(ast.copy_location(call, value))


class ViewLines:
    """The AST transformer (IPython calls :meth:`visit` with the cell's ``ast.Module``)."""

    def __init__(self, shell: Any) -> None:
        self.shell = shell
        self.armed = False

    def arm(self, _info: Any = None) -> None:
        self.armed = True

    def disarm(self, _result: Any = None) -> None:
        self.armed = False

    def visit(self, node: ast.AST) -> ast.AST:
        if not self.armed or not isinstance(node, ast.Module):
            return node
        self.armed = False  # the cell's own tree only
        shown = {id(s) for s in displayed_by_ipython(node.body, str(self.shell.ast_node_interactivity))}
        for stmt in ast.walk(node):
            if isinstance(stmt, ast.Expr) and id(stmt) not in shown and is_dsh_call(stmt.value):
                stmt.value = _wrapped(stmt.value)
        return node


def install_view_lines(shell: Any) -> Callable[[], None]:
    """Register :class:`ViewLines` on ``shell``; returns its remover."""
    lines = ViewLines(shell)
    shell.ast_transformers.append(lines)
    shell.events.register("pre_run_cell", lines.arm)
    shell.events.register("post_run_cell", lines.disarm)

    def remove() -> None:
        if lines in shell.ast_transformers:
            shell.ast_transformers.remove(lines)
        for event, callback in (("pre_run_cell", lines.arm), ("post_run_cell", lines.disarm)):
            try:
                shell.events.unregister(event, callback)
            except ValueError:
                pass

    return remove
