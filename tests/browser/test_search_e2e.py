"""The inspector's search in real JupyterLab: a field query over a real run (the scripted model's
fix-the-tests task: its first ``node test/run.mjs`` exits 1), the hits <mark>ed in each row's
snippet, the listed rows downloaded as JSONL and CSV, the Request diff tab only on requests."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest

from .conftest import Lab, is_done, open_notebook, run_all_cells, shot, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CELL = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell"
TASK = "run the tests; if they fail fix src/math.ts; tell me the result"


def test_field_query_highlights_and_exports(lab: Lab, page: Any, tmp_path: Path) -> None:
    name = lab.write_notebook("search.ipynb", "%load_ext dsh_notebook", f"%dsh --new --approve auto {TASK}",
                              "%dsh show --inspect")
    open_notebook(page, lab, name)
    run_all_cells(page)
    wait_until(lambda: is_done((page.locator(CELL).nth(2).locator(".jp-InputPrompt").text_content() or "").strip()),
               timeout=120, what="all cells finished")
    insp = page.locator(".dsh-inspector").first
    insp.locator(".dsh-row").first.wait_for(timeout=60_000)
    count = insp.locator(".dsh-f-count")

    insp.locator(".dsh-f-text").fill('type:tool/result exit:1 "tests failed"')
    wait_until(lambda: (count.text_content() or "").startswith("1 of"), what="one failing result listed")
    marks = insp.locator(".dsh-row .dsh-row-snip mark").all_text_contents()
    assert marks == ["tests failed"], marks
    shot(page, "inspector-search-highlight", ".dsh-inspector")

    with page.expect_download() as got:
        insp.locator(".dsh-f-export-jsonl").click()
    path = tmp_path / "rows.jsonl"
    got.value.save_as(str(path))
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert got.value.suggested_filename.endswith("-events.jsonl")
    assert [(r["type"], r["meta"]["exitCode"]) for r in rows] == [("tool/result", 1)]

    insp.locator(".dsh-f-text").fill("name:bash")
    # every call has its approval decision (the mode decided it), named by the call's tool
    wait_until(lambda: (count.text_content() or "").startswith("6 of"), what="bash calls, decisions and results listed")
    with page.expect_download() as got:
        insp.locator(".dsh-f-export-csv").click()
    table = list(csv.DictReader(io.StringIO(Path(got.value.path()).read_text())))
    assert [(r["type"], r["name"], r["exit"]) for r in table] == [
        ("tool/call", "bash", ""), ("approval/decided", "bash", ""), ("tool/result", "bash", "1"),
        ("tool/call", "bash", ""), ("approval/decided", "bash", ""), ("tool/result", "bash", "0")]

    insp.locator(".dsh-f-text").fill("turn:x")
    wait_until(lambda: "BAD_QUERY" in (count.text_content() or ""), what="a coded error for a bad value")

    # detail tabs fit the event: the request diff only on a request
    insp.locator(".dsh-f-text").fill("type:request/frozen")
    wait_until(lambda: " of " in (count.text_content() or "") and not (count.text_content() or "").startswith("0 "),
               what="requests listed")
    insp.locator(".dsh-row").first.click()
    tabs = insp.locator(".dsh-tab")
    wait_until(lambda: tabs.count() == 3, what="three tabs on a request")
    insp.locator('.dsh-tab[data-detail="diff"]').click()
    insp.locator(".dsh-diff").wait_for(timeout=10_000)
    insp.locator(".dsh-f-text").fill("type:tool/result")
    wait_until(lambda: insp.locator(".dsh-row.dsh-t-tool-result").count() > 0, what="results listed")
    insp.locator(".dsh-row.dsh-t-tool-result").first.click()
    wait_until(lambda: tabs.count() == 2, what="no diff tab on a tool result")
    assert insp.locator(".dsh-diff").count() == 0
    assert page.page_errors == [], page.page_errors
