"""End to end in real JupyterLab and headless Chromium: "Run to…" in the loop widget (a stage select
and a call select, by keyboard) pauses a live scripted run exactly at stage 04 of c3; a target the
turn never reaches is said when it ends. And a walkthrough notebook opens unmodified.
Screenshots ``run-to-*.png`` in tests/browser/artifacts/ (copied to /work/shots/debugger/ by hand)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from .conftest import Lab, loop_widget, open_notebook, shot, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
# dirty once the kernel's info (language_info, the kernelspec) has reached the document
DIRTY_JS = """async () => {
  const w = window.jupyterapp.shell.currentWidget;
  await w.sessionContext.ready;
  await w.sessionContext.session.kernel.info;
  await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
  return w.context.model.dirty;
}"""


def test_run_to_stage_04_of_c3_from_a_pause_by_keyboard(lab: Lab, page: Any) -> None:
    loop = loop_widget(lab, page, "run_to.ipynb", "script:fix-tests")
    loop.locator('.dsh-break[data-stage="2"]').click()  # pause at 02 (c1 first)
    loop.locator(".dsh-prompt-input").fill("run the tests; if they fail, fix src/math.ts; tell me the result")
    loop.locator(".dsh-send").click()
    label = loop.locator(".dsh-debug-label")
    loop.locator(".dsh-debug-bar").wait_for(state="visible", timeout=90_000)
    assert label.text_content() == "paused at 02 · c1 (bash)"
    loop.locator('.dsh-break[data-stage="2"]').click()  # no breakpoint on the way: only the target pauses

    run = loop.locator(".dsh-debug-runto")
    run.focus()
    page.keyboard.press("Enter")
    form = loop.locator(".dsh-debug-runto-form")
    form.wait_for(state="visible", timeout=5000)
    assert page.evaluate("() => document.activeElement.classList.contains('dsh-debug-runto-stage')")
    calls = loop.locator(".dsh-debug-runto-call option").all_text_contents()
    assert calls[0] == "c1 · bash" and "c3 · not made yet" in calls
    loop.locator(".dsh-debug-runto-stage").select_option("04")
    page.keyboard.press("Tab")
    assert page.evaluate("() => document.activeElement.classList.contains('dsh-debug-runto-call')")
    loop.locator(".dsh-debug-runto-call").select_option("c3")
    shot(page, "run-to-form", ".dsh-loop")
    page.keyboard.press("Enter")
    wait_until(lambda: label.text_content() == "paused at 04 · c3 (edit)", timeout=60, what="paused at 04 of c3")
    assert loop.locator(".dsh-stage[data-state=current]").get_attribute("data-stage") == "4"
    shot(page, "run-to-paused-04-c3", ".dsh-loop")

    # a target the turn never reaches: the run goes on, and its end says so (no hang)
    run.click()
    loop.locator(".dsh-debug-runto-stage").select_option("01")
    loop.locator(".dsh-debug-runto-call").select_option(loop.locator(".dsh-debug-runto-call option").last.get_attribute("value"))
    target = loop.locator(".dsh-debug-runto-call").input_value()
    loop.locator(".dsh-debug-runto-go").click()
    status = loop.locator(".dsh-debug-status")
    wait_until(lambda: "not reached" in (status.text_content() or ""), timeout=90, what="the missed run-to said")
    assert (status.text_content() or "") == (
        f"run to stage 01 of {target}: not reached — the turn ended before stage 01 of {target} (4 tool calls made)")
    assert loop.locator(".dsh-debug-bar").is_hidden()
    shot(page, "run-to-missed", ".dsh-loop")


@pytest.mark.parametrize("notebook", ["06-debugger.ipynb", "01-tool-feedback-loop.ipynb"])
def test_a_walkthrough_notebook_opens_unmodified(lab: Lab, page: Any, notebook: str) -> None:
    shutil.copy(REPO / "notebooks" / notebook, lab.root / notebook)
    open_notebook(page, lab, notebook)
    assert page.evaluate(DIRTY_JS) is False
    assert page.locator(".jp-mod-dirty").count() == 0
