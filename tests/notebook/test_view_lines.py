"""The view-lines transformer in IPython's own shell (``InteractiveShell``): what it shows under each
``ast_node_interactivity``, and what it leaves alone (the real kernels: tests/kernel/test_view_lines.py).

``%dsh config`` is the view here (it needs no session). A ``display()`` is a captured output; what
IPython's displayhook shows is the cell's ``result`` and an ``Out[`` line on stdout."""

from __future__ import annotations

from typing import Any

import pytest
from IPython.utils.capture import capture_output

from dsh_notebook.notebook.magic.view_lines import ViewLines
from dsh_notebook.notebook.magic.views import ConfigView

TWO_VIEWS = "%dsh config\n%dsh config"


def run(shell: Any, cell: str, **kw: Any) -> tuple[int, Any, int]:
    """(views displayed, the cell's value, ``Out`` lines the displayhook wrote)."""
    with capture_output() as captured:
        result = shell.run_cell(cell, **kw)
    assert result.success, result.error_in_exec or result.error_before_exec
    shown = [o for o in captured.outputs if "base URL" in o.data.get("text/plain", "")]
    assert len(shown) == len(captured.outputs), captured.outputs  # nothing else was displayed
    return len(shown), result.result, captured.stdout.count("Out[")


@pytest.fixture
def interactivity(shell: Any) -> Any:
    before = shell.ast_node_interactivity
    yield lambda mode: setattr(shell, "ast_node_interactivity", mode)
    shell.ast_node_interactivity = before


def test_a_view_that_is_not_the_last_line_is_displayed_and_the_last_is_the_value(shell: Any) -> None:
    shown, value, outs = run(shell, TWO_VIEWS)
    assert (shown, type(value), outs) == (1, ConfigView, 1)
    assert run(shell, "%dsh config\n1 + 1")[:2] == (1, 2)
    assert run(shell, "x = %dsh config")[:3] == (0, None, 0) and isinstance(shell.user_ns["x"], ConfigView)
    assert run(shell, "1\n%dsh config;")[:3] == (0, None, 0)  # the `;` silences it; `1` stays silent
    assert run(shell, "%dsh config;\n2")[:2] == (0, 2)


@pytest.mark.parametrize(("mode", "expected"), [
    ("all", (0, ConfigView, 2)),  # IPython shows both itself: nothing twice
    ("last", (1, ConfigView, 1)),
    ("last_expr_or_assign", (1, ConfigView, 1)),
    ("none", (2, type(None), 0)),  # IPython shows neither: the lines still show theirs
])
def test_each_interactivity_shows_every_view_exactly_once(shell: Any, interactivity: Any, mode: str,
                                                          expected: tuple[int, type, int]) -> None:
    interactivity(mode)
    shown, value, outs = run(shell, TWO_VIEWS)
    assert (shown, type(value), outs) == expected


def test_an_assignment_shown_by_last_expr_or_assign_is_not_shown_twice(shell: Any, interactivity: Any) -> None:
    interactivity("last_expr_or_assign")
    shown, value, outs = run(shell, "x = %dsh config")
    assert (shown, type(value), outs) == (0, ConfigView, 1)


def test_view_lines_in_loops_and_functions_show_each_time_they_run(shell: Any, interactivity: Any) -> None:
    assert run(shell, "for _ in range(3):\n    %dsh config")[:2] == (3, None)
    assert run(shell, "def f():\n    %dsh config\nf()\nf()")[:2] == (2, None)  # at each call, where it stands
    interactivity("last")  # a last compound statement runs interactively: its lines still show once
    assert run(shell, "for _ in range(2):\n    %dsh config")[:3] == (2, None, 0)
    shell.run_line_magic("reset", "-f")  # the wrapped line names nothing of the namespace
    assert run(shell, TWO_VIEWS)[0] == 1


def test_silent_runs_and_code_timed_inside_a_cell_are_left_alone(shell: Any) -> None:
    assert run(shell, TWO_VIEWS, silent=True)[:3] == (0, None, 0)
    assert run(shell, "%time %dsh config\n1")[:2] == (0, 1)  # %time's own tree is not the cell's
    assert run(shell, "%timeit -n1 -r1 %dsh config\n1")[:2] == (0, 1)


def test_only_dsh_lines_are_touched(shell: Any) -> None:
    shell.user_ns["seen"] = []
    assert run(shell, "seen.append(1)\n%config DshMagics.output\n%dsh config\n3")[:2] == (1, 3)
    assert shell.user_ns["seen"] == [1]
    assert run(shell, "get_ipython().run_line_magic('config', 'DshMagics.output')\n4")[:2] == (0, 4)


def test_unloading_removes_the_transformer_and_its_hooks(shell: Any) -> None:
    def ours() -> list[Any]:
        hooks = shell.events.callbacks["pre_run_cell"] + shell.events.callbacks["post_run_cell"]
        return [t for t in shell.ast_transformers if isinstance(t, ViewLines)] + [
            h for h in hooks if isinstance(getattr(h, "__self__", None), ViewLines)]

    assert len(ours()) == 3
    shell.run_line_magic("unload_ext", "dsh_notebook")
    assert ours() == []
    shell.run_line_magic("load_ext", "dsh_notebook")
    shell.run_line_magic("reload_ext", "dsh_notebook")
    assert len(ours()) == 3
