"""A live lesson shows where the run is (issue 37 item 6), in real JupyterLab + Chromium: a live
LoopWidget in presenter mode on the scripted model at a slow model's pace (``DSH_SCRIPT_PACE=1.5``:
each chunk, the first included, comes 1.5 s after the one before, as a local model on a CPU takes
seconds to answer), prompts sent from its prompt box.

- While the model has sent nothing yet, the widget says "waiting for the model · N s" (the words
  of the cell's and the console's line), in its narration and on stage 01 of a new turn.
- A new turn shows its stage 01 waiting — not the last call of the turn before (the issue: the
  previous turn's "03 · Tool executes" for 14 s while the model worked on the new one).
- One current card at a time, whatever was clicked.

Every state the widget draws is recorded in the page (a MutationObserver), and the test reads
the recording: no sleeps. Screenshots: tests/browser/artifacts/live-*.png.
"""

from __future__ import annotations

from typing import Any

import pytest

from .conftest import Lab, open_notebook, run_all_cells, shot, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PACE = "1.5"
PROMPT = "read README.md and summarise"
LOOP = ".dsh-loop"
# every state the live widget draws: the current stage(s), stage 01's value, the narration's
# title, the waiting line, the position label
RECORD_JS = """(root) => {
  window.__live = [];
  let last = '';
  const note = () => {
    const cur = [...root.querySelectorAll('.dsh-stage[aria-current="step"]')].map(e => e.dataset.stage);
    const s = {current: cur, one: (root.querySelector('.dsh-stage[data-stage="1"] .dsh-stage-value') || {}).textContent || '',
      title: (root.querySelector('.dsh-explain-title') || {}).textContent || '', waiting: root.dataset.waiting || '',
      label: (root.querySelector('.dsh-scrub-label') || {}).textContent || '', status: (root.querySelector('.dsh-sub') || {}).textContent || '',
      focused: document.activeElement && document.activeElement.classList.contains('dsh-stage') ? document.activeElement.dataset.stage : null};
    const key = JSON.stringify(s);
    if (key !== last) { last = key; window.__live.push(s); }
  };
  note();
  new MutationObserver(note).observe(root, {subtree: true, childList: true, characterData: true, attributes: true});
}"""


def states(page: Any) -> list[dict[str, Any]]:
    return list(page.evaluate("() => window.__live"))


def send(loop: Any, text: str) -> None:
    loop.locator(".dsh-prompt-input").fill(text)
    loop.locator(".dsh-send").click()


def stop(loop: Any) -> None:
    """Stop the turn (session/cancel) and wait until the run is idle."""
    loop.locator(".dsh-stop").click()
    wait_until(lambda: (loop.locator(".dsh-sub").text_content() or "").endswith("idle"), timeout=60, what="the run stopped")


def test_a_live_turn_shows_the_wait_and_a_new_turn_its_01(page: Any, lab: Lab) -> None:
    open_notebook(page, lab, lab.write_notebook(
        "live-lesson.ipynb",
        f"import os; os.environ['DSH_SCRIPT_PACE'] = '{PACE}'",
        "%load_ext dsh_notebook",
        "from dsh_notebook.notebook.widgets import LoopWidget\nw = LoopWidget(model='script:readme', approve='auto', present=True)\nw"))
    page.set_viewport_size({"width": 1024, "height": 768})
    run_all_cells(page)
    loop = page.locator(LOOP).first
    loop.locator(".dsh-prompt-input").wait_for(timeout=60_000)
    loop.evaluate(RECORD_JS)

    # turn 1: the model is asked; nothing has come back yet
    send(loop, PROMPT)
    wait_until(lambda: any(s["waiting"] and "turn 1" in s["label"] for s in states(page)), timeout=60, every=0.1,
               what="turn 1 waiting for the model")
    waiting = next(s for s in states(page) if s["waiting"] and "turn 1" in s["label"])
    print("turn 1, before the first chunk:", waiting)
    assert waiting["waiting"].startswith("waiting for the model · ")
    seconds = waiting["waiting"].rsplit("· ", 1)[-1]
    assert waiting["current"] == ["1"] and waiting["one"] == f"waiting · {seconds}"  # stage 01's own line
    assert "Turn 1: waiting for the model" in waiting["title"]
    # a click on stage 01's card (the replay there), then L back to live: the focus stays on a card
    loop.locator('.dsh-stage[data-stage="1"] .dsh-stage-no').click()
    page.keyboard.press("l")
    wait_until(lambda: loop.locator(".dsh-live-on").count() == 1, timeout=10, what="live again")
    # its tool call runs; the next request waits for the model again: the line in the narration, the
    # diagram on the call (at reading pace it walks the call's stages one reading time each)
    wait_until(lambda: any("call 1/1" in s["label"] and s["waiting"] for s in states(page)),
               timeout=90, every=0.2, what="the next request waiting, the call shown")
    print("the next request waiting:", next(s for s in states(page) if "call 1/1" in s["label"] and s["waiting"]))
    shot(page, "live-waiting-next-request")
    stop(loop)

    # turn 2: its 01 waits, not turn 1's call
    mark = len(states(page))
    send(loop, PROMPT)
    wait_until(lambda: any("turn 2" in s["label"] and s["waiting"] for s in states(page)[mark:]), timeout=60, every=0.1,
               what="turn 2 waiting for the model")
    shot(page, "live-turn2-waiting")
    later = states(page)[mark:]
    first = next(i for i, s in enumerate(later) if "turn 2" in s["label"])
    print("turn 2 states:", later[first:first + 4])
    new_turn = [s for s in later[first:] if "turn 2" in s["label"]]
    assert all(s["current"] == ["1"] for s in new_turn), new_turn
    assert any(s["one"].startswith("waiting · ") and "Turn 2: waiting for the model" in s["title"] for s in new_turn)
    # from the turn's start on, the old call is never the current one again until the new call comes
    until_call = later[first:next((i for i, s in enumerate(later) if i > first and "call 2/" in s["label"]), len(later))]
    assert not any("call 1/1" in s["label"] for s in until_call), until_call
    # one current card at a time in every state drawn: a focused card is the current one
    odd = [s for s in states(page) if len(s["current"]) > 1 or (s["focused"] and s["current"] and [s["focused"]] != s["current"])]
    assert not odd, odd
    assert any(s["focused"] for s in states(page))  # the focus was on a card while the stages moved
    stop(loop)
    assert not page.page_errors, page.page_errors
