"""End to end: the agent kernel "Agent (dsh)" in real JupyterLab and headless Chromium.

The kernelspec is installed into a temporary prefix by the CLI and found through ``JUPYTER_PATH``;
the test picks "Agent (dsh)" from the launcher, types a prompt cell, a ``%%python`` cell and a
prompt with ``{x}``, and checks what the page shows and what the session log recorded —
including the ``cellId`` JupyterLab put in each execute request's metadata.

Run: ``.venv/bin/pytest -m browser tests/browser/test_agent_kernel_e2e.py`` (screenshot:
``tests/browser/artifacts/agent-kernel.png``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .conftest import KERNEL_IDLE_JS, REPO, Lab, _page, launch_lab, shot, skip_reason, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CELL = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell"


@pytest.fixture(scope="module")
def agent_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    reason = skip_reason()
    if reason:
        pytest.skip(reason)
    prefix = tmp_path_factory.mktemp("dsh-prefix")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-m", "dsh_notebook", "install-kernel", "--prefix", str(prefix)],
                          env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("JUPYTER_PATH", str(prefix / "share" / "jupyter"))
        with launch_lab(tmp_path_factory.mktemp("agent-lab")) as lab:
            yield lab


@pytest.fixture
def agent_page(browser: Any, agent_lab: Lab, request: pytest.FixtureRequest) -> Iterator[Any]:
    yield from _page(browser, agent_lab, request)


def cell(page: Any, index: int) -> Any:
    return page.locator(CELL).nth(index)


def output_text(page: Any, index: int) -> str:
    area = cell(page, index).locator(".jp-OutputArea")
    return area.first.inner_text() if area.count() else ""


def run_cell(page: Any, index: int, *lines: str) -> None:
    """Type ``lines`` into cell ``index`` (the active one) and run it with Shift+Enter."""
    editor = cell(page, index).locator(".cm-content")
    editor.click()
    for i, line in enumerate(lines):
        if i:
            page.keyboard.press("Enter")
            page.keyboard.press("Home")
        page.keyboard.type(line)
    page.keyboard.press("Shift+Enter")


def test_agent_kernel_from_the_launcher_runs_prompt_and_python_cells(agent_lab: Lab, agent_page: Any) -> None:
    page = agent_page
    page.goto(f"{agent_lab.url}/lab?token={agent_lab.token}&reset")
    card = page.locator('.jp-LauncherCard[data-category="Notebook"]', has_text="Agent (dsh)")
    card.wait_for(timeout=60_000)
    card.click()
    page.wait_for_selector(f"{CELL} .cm-content", timeout=60_000)
    page.wait_for_function(KERNEL_IDLE_JS, timeout=60_000)
    kernel_name = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Toolbar-kernelName").first
    assert "Agent (dsh)" in (kernel_name.inner_text() or "")

    run_cell(page, 0, "read README.md and summarise")
    # the answer is an HTML output, rendered asynchronously: it can come after the plain-text
    # "✓ completed" line, so the wait is on everything a person reads there
    first_seen = ("✓ completed", "README.md", "demo-math", "from cell [1]")
    wait_until(lambda: all(s in output_text(page, 0) for s in first_seen), timeout=90,
               what="the prompt cell's answer and its completed line")

    run_cell(page, 1, "%%python", "x = 42", "print(x)")
    wait_until(lambda: output_text(page, 1).strip() == "42", timeout=30, what="the %%python cell to print 42")

    run_cell(page, 2, "the value of x is {x}")
    wait_until(lambda: "✓ completed" in output_text(page, 2), timeout=90, what="the {x} prompt to finish")
    page.wait_for_function(KERNEL_IDLE_JS, timeout=30_000)

    run_cell(page, 3, "look around this notebook and use what you find")  # the scripted notebook tour
    # notebook_insert writes into the notebook: a person decides in every mode but bypass, here in
    # the stdin box JupyterLab shows under the cell
    box = cell(page, 3).locator(".jp-Stdin-input")
    box.wait_for(timeout=90_000)
    question = (cell(page, 3).locator(".jp-Stdin-prompt").text_content() or "").strip()
    assert "allow notebook_insert" in question and "print(x)" in question, question
    box.fill("y")
    box.press("Enter")
    tour_seen = ("✓ completed", "notebook_read", "inspect_var", "added checked (int)")
    try:
        wait_until(lambda: all(s in output_text(page, 3) for s in tour_seen), timeout=90,
                   what="the notebook tour's tool lines and its completed line")
    except AssertionError as e:
        raise AssertionError(f"{e}; the cell reads:\n{output_text(page, 3)}") from None
    inserted = wait_until(lambda: "print(x)" in (cell(page, 4).locator(".cm-content").inner_text() or "")
                          and cell(page, 4).locator(".cm-content").inner_text(), timeout=30,
                          what="notebook_insert's cell to appear below")
    assert inserted.splitlines()[0] == "%%python" and "# Show x (proposed by the agent)" in inserted
    page.wait_for_function(KERNEL_IDLE_JS, timeout=30_000)
    shot(page, "agent-kernel")

    [log] = (agent_lab.home / "sessions").glob("*.jsonl")
    users = [json.loads(line)["message"] for line in Path(log).read_text().splitlines()[1:]
             if json.loads(line).get("type") == "user/message"]
    users = [u for u in users if u["source"]["kind"] == "user"]
    assert [u["content"][0]["text"] for u in users] == ["read README.md and summarise", "the value of x is 42",
                                                         "look around this notebook and use what you find"]
    cells = [u["source"]["cell"] for u in users]
    assert [c["executionCount"] for c in cells] == [1, 3, 4]
    assert all(isinstance(c.get("cellId"), str) and c["cellId"] for c in cells)  # JupyterLab's cell ids
    assert cells[0]["cellId"] != cells[1]["cellId"]
    assert page.page_errors == []
