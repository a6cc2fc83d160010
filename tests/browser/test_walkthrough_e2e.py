"""End to end: the README's promise — a fresh clone, ``make demo`` and a browser show walkthrough
notebook 01 (and 02) working on the embedded default (``script:auto``).

The shipped notebook is copied, unchanged, into the lab's root dir, opened in real JupyterLab in
headless Chromium and run with *Run All Cells*. Then, from the page: every code cell ran, no cell
shows an error or anything on stderr, the ``%dsh`` cell shows the streamed answer with its tool
lines, the ``LoopWidget`` draws its six stage cards and its payload view shows the ``tool/result``
citing its ``tool/call``, and the plain-Python cells printed the event payloads.

Run: ``.venv/bin/pytest -m browser tests/browser/test_walkthrough_e2e.py -v``
(screenshots ``walkthrough01-*.png`` / ``walkthrough02-*.png`` in tests/browser/artifacts/).
"""

from __future__ import annotations

import re
import shutil
from typing import Any

import pytest

from .conftest import (
    REPO,
    Lab,
    click_until,
    is_done,
    open_notebook,
    run_all_cells,
    settle,
    shot,
    wait_until,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CELL = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell"
STAGE_TITLES = ["Model response settled", "Tool call registered", "Tool executes",
                "Tool result committed", "Message history derived", "Next request sent"]

# The open notebook's model: per code cell its index, execution count and outputs (nbformat JSON).
# Read from the model, so it does not depend on which cells the windowed notebook has rendered.
MODEL_JS = """() => {
  const cells = window.jupyterapp.shell.currentWidget.content.model.cells;
  const out = [];
  for (let i = 0; i < cells.length; i++) {
    const c = cells.get(i);
    if (c.type !== 'code') continue;
    const outputs = [];
    for (let j = 0; j < c.outputs.length; j++) outputs.push(c.outputs.get(j).toJSON());
    out.push({index: i, count: c.executionCount, outputs});
  }
  return out;
}"""


def copy_walkthrough(lab: Lab, stem: str) -> str:
    """The shipped notebook and what sits next to it (``img/``), as a fresh clone has them."""
    name = f"{stem}.ipynb"
    shutil.copy(REPO / "notebooks" / name, lab.root / name)
    if (REPO / "notebooks" / "img").is_dir():
        shutil.copytree(REPO / "notebooks" / "img", lab.root / "img", dirs_exist_ok=True)
    return name


def code_cells(page: Any) -> list[dict[str, Any]]:
    return list(page.evaluate(MODEL_JS))


def all_ran(page: Any) -> bool:
    """Every code cell has an execution count, no prompt shows ``[*]`` and the kernel is idle."""
    cells = code_cells(page)
    prompts = [(t or "").strip() for t in page.locator(f"{CELL}.jp-CodeCell .jp-InputPrompt").all_text_contents()]
    indicator = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook-ExecutionIndicator").first
    return (all(c["count"] is not None for c in cells) and len(prompts) == len(cells)
            and all(is_done(p) for p in prompts) and indicator.get_attribute("data-status") == "idle")


def stream_text(cell: dict[str, Any], name: str = "stdout") -> str:
    return "".join("".join(o["text"]) if isinstance(o["text"], list) else o["text"]
                   for o in cell["outputs"] if o["output_type"] == "stream" and o["name"] == name)


def assert_no_errors(page: Any) -> list[dict[str, Any]]:
    """No error output in the model, nothing on stderr in the page; returns the code cells."""
    cells = code_cells(page)
    errors = [(c["index"], o.get("ename"), o.get("evalue")) for c in cells for o in c["outputs"]
              if o["output_type"] == "error"]
    assert not errors, errors
    stderr_model = [(c["index"], stream_text(c, "stderr")) for c in cells if stream_text(c, "stderr")]
    assert not stderr_model, stderr_model
    stderr_dom = page.locator(f'{CELL} .jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')
    assert stderr_dom.count() == 0, stderr_dom.all_text_contents()
    tracebacks = [t for t in page.locator(f"{CELL} .jp-OutputArea").all_text_contents() if "Traceback" in t]
    assert not tracebacks, tracebacks
    assert not page.page_errors, page.page_errors
    return cells


def by_index(cells: list[dict[str, Any]], index: int) -> dict[str, Any]:
    return next(c for c in cells if c["index"] == index)


def cell(page: Any, index: int) -> Any:
    return page.locator(CELL).nth(index)


def scroll_to(page: Any, index: int, align: str = "start") -> None:
    """Scroll the (windowed) notebook to a cell with its own API, then let it paint: the cell is
    visible and the notebook's scroller at rest."""
    page.evaluate("([i, a]) => window.jupyterapp.shell.currentWidget.content.scrollToItem(i, a)", [index, align])
    wait_until(lambda: cell(page, index).is_visible(), timeout=10, what=f"cell {index} painted")
    settle(page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-WindowedPanel-outer"))


def dsh_view(page: Any, index: int) -> tuple[str, list[str]]:
    """The %dsh cell's streamed view (the answer rendered inert) and the tool names of its tool lines
    (``name args — ✓ summary``; the answer's own bullet lists have no ``—`` state)."""
    view = cell(page, index).locator(".jp-OutputArea .dsh-answer").first
    lines = [re.match(r"(\w+) .* — [✓✗]", t) for t in view.locator("li").all_text_contents()]
    return view.text_content() or "", [m.group(1) for m in lines if m]


def assert_loop_widget(page: Any, index: int) -> Any:
    """The cell's LoopWidget: six stage cards, and at stage 04 its payload view shows the
    committed ``tool/result`` whose seq link points at its ``tool/call``."""
    loop = cell(page, index).locator(".dsh-loop").first
    loop.wait_for(timeout=30_000)
    loop.scroll_into_view_if_needed()
    cards = loop.locator(".dsh-stage").all_text_contents()
    assert len(cards) == 6, cards
    for no, (card, title) in enumerate(zip(cards, STAGE_TITLES, strict=True), start=1):
        assert card.startswith(f"0{no}") and title in " ".join(card.split()), card
    scrub = loop.locator(".dsh-scrubber").first
    if scrub.count() and scrub.is_enabled():
        scrub.fill("0")  # the first tool call
    explain = loop.locator(".dsh-explain").first

    click_until(loop.locator('.dsh-stage[data-stage="4"]'), lambda: (explain.text_content() or "").startswith("04"),
                "stage 04 explained")
    loop.locator('.dsh-tab[data-view="payloads"]').first.click()
    call = loop.locator('.dsh-card[data-type="tool/call"]').first
    call.wait_for(timeout=5000)
    call_seq = call.get_attribute("data-seq")
    result = loop.locator('.dsh-card[data-type="tool/result"]').first
    assert "committed" in (result.locator(".dsh-badge").text_content() or "")
    assert result.locator(f'.dsh-seqlink[data-seq="{call_seq}"]').count() == 1
    assert f"cited by #{result.get_attribute('data-seq')}" in (call.locator(".dsh-citedby").text_content() or "")
    return loop


def test_notebook_01_runs_all_cells_on_the_embedded_default(lab: Lab, page: Any) -> None:
    name = copy_walkthrough(lab, "01-tool-feedback-loop")
    open_notebook(page, lab, name)
    run_all_cells(page)
    wait_until(lambda: all_ran(page), timeout=90, what="every cell of notebook 01 ran")
    cells = assert_no_errors(page)
    assert page.locator(CELL).count() == 29  # every cell in the DOM: nth(i) is notebook cell i
    assert len(cells) == 14 and [c["count"] for c in cells] == list(range(1, 15))

    # the %dsh cell (3): the streamed answer with the read tool line, and the TurnResult
    view, tools = dsh_view(page, 3)
    assert tools == ["read"], tools
    assert "I'll read README.md first." in view and "demo-math" in view and "It has 3 sections" in view, view
    session_id = re.search(r"new session (s_[0-9a-f]{12}) · script:auto", stream_text(by_index(cells, 3))).group(1)  # type: ignore[union-attr]
    result_text = cell(page, 3).locator(".jp-OutputArea").first.text_content() or ""
    assert f"✓ completed · session {session_id} · turn 1 · 1 tool call" in result_text, result_text
    scroll_to(page, 0)
    shot(page, "walkthrough01-top")

    # the LoopWidget (cell 5) of that session
    scroll_to(page, 5)
    loop = assert_loop_widget(page, 5)
    assert session_id in (loop.locator(".dsh-sub").text_content() or "")
    scroll_to(page, 5)
    shot(page, "walkthrough01-widget")
    loop.locator('.dsh-card[data-type="tool/result"]').first.scroll_into_view_if_needed()
    shot(page, "walkthrough01-payloads")

    # the plain-Python cells printed the event payloads
    out = {i: stream_text(by_index(cells, i)) for i in (7, 9, 11, 13, 15, 21, 25)}
    assert f"sessions/{session_id}.jsonl" in out[7] and "tool/result" in out[7] and "request/frozen" in out[7]
    assert re.search(r'call id c1 · tool read · arguments \{"file_path": "README.md"\}', out[9]), out[9]
    assert '"type": "assistant/message"' in out[9] and '"type": "tool-call"' in out[9]
    call_seq = int(re.search(r"tool/call seq: (\d+)", out[11]).group(1))  # type: ignore[union-attr]
    assert '"type": "tool/call"' in out[11] and '"callId": "c1"' in out[11]
    assert "turn ended: completed" in out[13] and re.search(r"c1\s+read\s+execute\s+done", out[13]), out[13]
    assert f"sourceEventSeqs: [{call_seq}] · cites the tool/call: True" in out[15], out[15]
    assert '"toolCallId": "c1"' in out[15]
    assert '"type": "request/frozen"' in out[21] and "has the same seqs: True" in out[21], out[21]
    assert "describes **demo-math**" in out[25]
    scroll_to(page, 21)
    shot(page, "walkthrough01-end")


def test_notebook_02_runs_all_cells_with_queue_and_steer(lab: Lab, page: Any) -> None:
    name = copy_walkthrough(lab, "02-from-prompt-to-tools")
    open_notebook(page, lab, name)
    run_all_cells(page)
    wait_until(lambda: all_ran(page), timeout=120, what="every cell of notebook 02 ran")
    cells = assert_no_errors(page)
    assert page.locator(CELL).count() == 63  # every cell in the DOM: nth(i) is notebook cell i
    assert [c["count"] for c in cells] == list(range(1, len(cells) + 1))

    # the %dsh cell (3): run tests (fail) → read → edit → run tests (pass), streamed
    view, tools = dsh_view(page, 3)
    assert tools == ["bash", "read", "edit", "bash"], tools
    printed = stream_text(by_index(cells, 3))
    assert "2 of 6 tests failed · [exit code: 1]" in printed and "all 6 tests passed · [exit code: 0]" in printed, printed
    assert "the tests pass now" in stream_text(by_index(cells, 5))
    scroll_to(page, 0)
    shot(page, "walkthrough02-top")

    # the LoopWidget of the session prompted by hand (cell 55)
    scroll_to(page, 55)
    loop = assert_loop_widget(page, 55)
    scroll_to(page, 55)
    shot(page, "walkthrough02-widget")
    loop.locator('.dsh-card[data-type="tool/result"]').first.scroll_into_view_if_needed()
    shot(page, "walkthrough02-payloads")

    # queue vs steer (cells 57, 59): both accepted while running; steer joined turn 1, queue ran turn 2
    out57, out59 = stream_text(by_index(cells, 57)), stream_text(by_index(cells, 59))
    assert "while running: True True" in out57 and "turn 1 completed · turn 2 completed" in out57, out57
    assert re.search(r"req_steer\s+entered as user/message seq\s+\d+ · turn 1 step [2-9]", out59), out59
    assert re.search(r"req_queue\s+entered as user/message seq\s+\d+ · turn 2 step 1", out59), out59
    assert "('steering', 'req_steer')" in out59 and "('queued', 'req_queue')" in out59
    scroll_to(page, 56)
    shot(page, "walkthrough02-end")
