"""Predict, then reveal never shows the answer next to the question (issue 37 items 3, 4): a real
``script:fix-tests`` run (four tool calls, twelve questions) replayed in a LoopWidget in
presenter mode, in real JupyterLab + Chromium at 1024×768.

For every question, before its reveal, the widget's text as a person sees it (``innerText``, with
the three views opened one after the other) holds none of the values the question asks about:
the call's arguments (the issue's caption ``c1 · {"command": "node test/run.mjs"}``), the
tool/result's sourceEventSeqs (``#11 cites [10]``, ``cited by #11``) or the messages the request
carries. After the reveal the real value is there. "Not sure" counts as asked and not right; a
class vote marked "the class got it ✓" shows ✓ on every row of its reveal, none ✗.

Screenshots: tests/browser/artifacts/predict-*.png.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from .conftest import ARTIFACTS, Lab, is_done, open_notebook, run_all_cells, shot, wait_until
from .projector import key, settled

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PROMPT = "run the tests; if they fail, fix src/math.ts; tell me the result"
LOOP = ".dsh-loop"
TEXT_JS = "(root) => root.innerText"


@pytest.fixture(scope="module")
def replay(browser: Any, lab: Lab) -> Iterator[tuple[Any, list[dict[str, Any]]]]:
    """A replayed fix-tests run in presenter mode at 1024×768, and its log's events."""
    ARTIFACTS.mkdir(exist_ok=True)
    name = lab.write_notebook(
        "predict.ipynb",
        "%load_ext dsh_notebook",
        f"%dsh --model script:fix-tests --approve auto --no-widget {PROMPT}",
        "import glob, os\nfrom dsh_notebook.notebook.widgets import LoopWidget\n"
        "path = max(glob.glob(os.environ['DSH_HOME'] + '/sessions/*.jsonl'), key=os.path.getmtime)\n"
        "LoopWidget(path=path, present=True)",
    )
    pg = browser.new_page(viewport={"width": 1024, "height": 768})
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    open_notebook(pg, lab, name)
    run_all_cells(pg)
    wait_until(lambda: all(is_done(p) for p in pg.locator(".jp-Notebook .jp-Cell .jp-InputPrompt").all_text_contents()),
               timeout=120, what="every cell ran")
    pg.locator(f"{LOOP} .dsh-stage[aria-current=step]").first.wait_for(timeout=60_000)
    log = max((lab.home / "sessions").glob("*.jsonl"), key=lambda p: p.stat().st_mtime)
    events = [json.loads(line) for line in log.read_text().splitlines()[1:] if line.strip()]
    pg.page_errors = errors
    yield pg, events
    pg.close()
    lab.shutdown_sessions()


def texts(loop: Any) -> str:
    """What the widget shows, with each of its three views opened in turn."""
    toggle = loop.locator(".dsh-views-toggle")
    if toggle.get_attribute("aria-expanded") != "true":
        toggle.click()
    out = []
    for view in ("history", "payloads", "roles"):
        loop.locator(f'.dsh-tab[data-view="{view}"]').click()
        wait_until(lambda v=view: loop.locator(f'.dsh-tab[data-view="{v}"]').get_attribute("aria-selected") == "true",
                   timeout=10, what=f"the {view} view")
        out.append(loop.evaluate(TEXT_JS))
    return "\n".join(out)


def earlier_text(events: list[dict[str, Any]], before: int) -> str:
    """Every text a person could already read before event ``before``: prompts, tool output and
    the arguments of earlier calls (c4 reruns c1's command, revealed three calls before)."""
    out = []
    for ev in events[:before]:
        msg = ev.get("message") or {}
        for block in msg.get("content") or []:
            out.append(str(block.get("text", "")) + str(block.get("arguments", "")))
    return "\n".join(out)


def asked_values(kind: str, call_id: str, real: str, events: list[dict[str, Any]]) -> list[str]:
    """The strings a question's answer would show (that were not on screen before its call)."""
    if kind == "arguments":
        asked = next(ev for ev in events if ev["type"] == "assistant/message"
                     and any(b.get("id") == call_id for b in ev["message"].get("content") or []))
        seen_before = earlier_text(events, asked["seq"])
        values = [real] + [v for v in json.loads(real).values() if isinstance(v, str)]
        return [v for v in values if v and v not in seen_before]
    return [real]


def test_no_value_a_question_asks_is_on_screen_before_its_reveal(replay: tuple[Any, list[dict[str, Any]]]) -> None:
    page, events = replay
    loop = page.locator(LOOP).first
    loop.locator(".dsh-stage[data-stage='1'] .dsh-stage-no").click()
    wait_until(lambda: loop.get_attribute("data-step-index") == "0", timeout=10, what="the first stage")
    loop.locator(".dsh-predict-toggle").check()
    asked: list[tuple[str, str]] = []
    for n in range(12):
        wait_until(lambda: loop.get_attribute("data-asking"), timeout=10, what=f"question {n + 1}")
        kind = loop.get_attribute("data-asking") or ""
        title = loop.locator(".dsh-predict-ask .dsh-predict-title").inner_text()  # Predict · bash · c1
        call_id = title.rsplit("·", 1)[-1].strip()
        before = texts(loop)
        if n < 3:
            shot(page, f"predict-asked-{kind}")
        loop.locator(".dsh-predict-skip").click()  # not sure
        reveal = loop.locator(".dsh-predict-reveal")
        reveal.wait_for(timeout=10_000)
        real = loop.locator(".dsh-predict-real").inner_text()
        values = asked_values(kind, call_id, real, events)
        print(f"{call_id} {kind}: real {real!r}; checked absent before the reveal: {values}")
        for v in values:
            assert v not in before, (call_id, kind, v)
        if kind == "sources":
            seqs = json.loads(real)
            assert not re.search(r"cites \[" + re.escape(", ".join(map(str, seqs))) + r"\]", before), (call_id, before)
            result_seq = next(ev["seq"] for ev in events if ev["type"] == "tool/result" and ev["message"].get("toolCallId") == call_id)
            assert f"cited by #{result_seq}" not in before, call_id
        if kind == "messages":
            assert not re.search(r"froze \d+ messages|carries messageSeqs|in this request", before), call_id
        after = texts(loop)
        assert real in after  # the reveal shows it
        asked.append((call_id, kind))
        score = loop.locator(".dsh-predict-score").inner_text()
        assert score == f"score: 0 / {n + 1} right", score  # "not sure": asked, not right
        loop.locator(".dsh-predict-next").click()
        if n < 11:
            # on to the next question: the clicker's PageDown from the stage, once the widget is still
            # (a PageDown on an open question would reveal it)
            def next_question() -> bool:
                if settled(loop)["asking"]:
                    return True
                loop.locator('.dsh-stage[aria-current="step"]').focus()
                key(page, loop, "PageDown")
                return bool(settled(loop)["asking"])
            wait_until(next_question, timeout=60, every=0.2, what="the next question")
    assert [k for _, k in asked] == ["arguments", "sources", "messages"] * 4, asked
    assert not page.page_errors, page.page_errors


def test_class_vote_marks_follow_the_presenter(replay: tuple[Any, list[dict[str, Any]]]) -> None:
    page, _ = replay
    # a new widget (the first test answered every question of this one): the last cell run again
    old = page.locator(LOOP).first.element_handle()
    page.evaluate("""() => { const nb = window.jupyterapp.shell.currentWidget.content;
      nb.activeCellIndex = nb.widgets.length - 1; window.jupyterapp.commands.execute('notebook:run-cell'); }""")
    wait_until(lambda: not old.evaluate("e => e.isConnected"), timeout=120, what="the widget drawn again")
    loop = page.locator(LOOP).first
    loop.locator(".dsh-stage[aria-current=step]").wait_for(timeout=60_000)
    loop.locator(".dsh-predict-toggle").check()
    wait_until(lambda: loop.get_attribute("data-asking") == "arguments", timeout=10, what="the first question")
    loop.locator(".dsh-predict-vote").check()
    wait_until(lambda: loop.locator('.dsh-predict-ask[data-vote="true"]').count() == 1, timeout=10, what="a class vote")
    loop.locator(".dsh-predict-submit").click()
    reveal = loop.locator(".dsh-predict-reveal")
    reveal.wait_for(timeout=10_000)
    assert reveal.get_attribute("data-match") == "pending"
    assert reveal.locator(".dsh-mismatch").count() == 0 and reveal.locator(".dsh-unmarked").count() >= 2
    shot(page, "predict-vote-pending")
    loop.locator('.dsh-predict-judge[data-right="true"]').click()
    wait_until(lambda: reveal.get_attribute("data-match") == "true", timeout=10, what="marked right")
    # a mark is an SVG symbol named by its aria-label (match / mismatch / not marked yet)
    marks = reveal.locator(".dsh-mark").evaluate_all("els => els.map((e) => e.getAttribute('aria-label'))")
    print("marks after 'the class got it ✓':", marks)
    assert len(marks) >= 3 and set(marks) == {"match"}, marks  # the title and every row
    assert reveal.locator(".dsh-mark.dsh-match svg").count() == len(marks)  # each one drawn
    assert loop.locator(".dsh-predict-score").inner_text() == "score: 1 / 1 right"
    shot(page, "predict-vote-marked")
    assert not page.page_errors, page.page_errors
