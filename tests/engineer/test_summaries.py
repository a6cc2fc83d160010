"""Issue 24's small defects, each a regression test: the python line does not repeat its namespace
change (nor show it as a failure's verdict), inspect_var reads as JSON not "✓ {", counts are
pluralised and carry thousands separators beside the token figures."""

from __future__ import annotations

import json

from dsh_notebook.analysis.stats_view import fmt_tokens
from dsh_notebook.client.summary import tool_outcome
from dsh_notebook.notebook.cell.segments import ToolSeg
from dsh_notebook.notebook.context import nsdiff
from dsh_notebook.notebook.context.python_tool import run_python


def _python(code: str, ns: dict[str, object]) -> tuple[str, bool, dict[str, object]]:
    """What the python tool answers (its text, error flag and meta), on a real namespace."""
    before = nsdiff.snapshot(ns)
    run = run_python(code, ns)
    changes = nsdiff.diff(before, nsdiff.snapshot(ns))
    return f"{run.to_text()}\n[namespace] {nsdiff.short_form(changes)}", run.error is not None, dict(changes)


def _line(name: str, text: str, is_error: bool, meta: dict[str, object] | None = None) -> str:
    outcome = tool_outcome(name, text, is_error=is_error, code="PYTHON_ERROR" if is_error else None)
    seg = ToolSeg("c1", name, done=True, result=None if is_error else outcome.text,
                  error=outcome.text if is_error else None)
    if meta is not None:
        seg.namespace = nsdiff.short_form(meta)  # type: ignore[arg-type]
    return seg.state_line()


def test_the_python_line_says_its_namespace_change_once() -> None:
    ns: dict[str, object] = {}
    text, err, meta = _python("x = 41\nx + 1", ns)
    line = _line("python", text, err, meta)
    assert line == "✓ 42 · added x (int)"
    assert line.count("added x") == 1
    text, err, meta = _python("y = 1", ns)
    assert _line("python", text, err, meta) == "✓ (no output) · added y (int)"


def test_a_python_failure_leads_with_its_verdict_not_the_namespace_line() -> None:
    text, err, meta = _python("1 / 0", {})
    assert err and _line("python", text, err, meta).startswith("✗ PYTHON_ERROR: ZeroDivisionError: division by zero")


def test_inspect_var_reads_as_one_json_line_even_with_a_note_below() -> None:
    text = json.dumps({"name": "df", "type": "DataFrame", "shape": [3, 2]}, indent=2) + "\n[repr shortened]"
    line = _line("inspect_var", text, False)
    assert line == '✓ {"name": "df", "type": "DataFrame", "shape": [3, 2]}'


def test_token_figures_and_event_counts_use_thousands_separators() -> None:
    assert fmt_tokens(2373) == "2,373" and fmt_tokens(999) == "999" and fmt_tokens(12_345) == "12.3k"
