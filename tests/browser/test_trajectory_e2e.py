"""End to end in real JupyterLab and headless Chromium: the ``%dsh`` summary line shows the
turn's duration, tokens and cost; ``%dsh show --stats`` and ``%dsh sessions --search`` render
in the page (a real kernel, the real Host and the embedded scripted model).

Run: ``.venv/bin/pytest tests/browser/test_trajectory_e2e.py -v`` (screenshots in tests/browser/artifacts/).
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from .conftest import Lab, is_done, open_notebook, run_all_cells, shot, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CELL = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell"


def cell(page: Any, index: int) -> Any:
    return page.locator(CELL).nth(index)


def prompt_of(page: Any, index: int) -> str:
    return (cell(page, index).locator(".jp-InputPrompt").text_content() or "").strip()


def output_text(page: Any, index: int) -> str:
    return cell(page, index).locator(".jp-OutputArea").first.inner_text()


def test_summary_line_stats_and_search_in_the_page(lab: Lab, page: Any) -> None:
    name = lab.write_notebook(
        "trajectory.ipynb", "%load_ext dsh_notebook", "r = %dsh run the tests; if they fail fix src/math.ts\nr",
        "%dsh show --stats", "%dsh sessions --search math.ts",
        "print(r.duration_ms > 0, r.usage.output_tokens > 0, r.cost_usd)")
    open_notebook(page, lab, name)
    run_all_cells(page)
    wait_until(lambda: is_done(prompt_of(page, 4)), timeout=120, what="all cells finished")
    summary = output_text(page, 1)
    # the summary line: how it ended, then duration, tokens and cost (the scripted model is free)
    assert re.search(r"✓ completed · session s_[0-9a-f]{12} · turn 1 · 4 tool calls · "
                     r"[\d.]+ (ms|s) · [\d,.k]+ in / [\d,.k]+ out tokens · \$0\.0000 · [\d,]+ events", summary), summary
    stats = output_text(page, 2)
    assert "requests" in stats and "TTFT" in stats and "script:auto" in stats and "total:" in stats, stats
    search = output_text(page, 3)
    assert "tool/call" in search or "tool/result" in search, search
    assert "src/[math].[ts]" in search  # the matched words are marked in the snippet
    assert output_text(page, 4).strip() == "True True 0.0"
    assert not page.page_errors, page.page_errors
    shot(page, "trajectory-summary-line", f"{CELL} >> nth=1")
