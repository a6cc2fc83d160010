"""End to end in Notebook 7 (``jupyter notebook``, not JupyterLab): a blocking ``%dsh`` prompt,
then ``LoopWidget`` on that session — the anywidget bundle loads in Notebook 7's widget manager,
draws the six stage cards, walks them live to stage 06 and replays them with play.

Run: ``.venv/bin/pytest tests/browser/test_notebook7_e2e.py -v`` (screenshots in tests/browser/artifacts/).
"""

from __future__ import annotations

from typing import Any

import pytest

from .conftest import Lab, is_done, shot, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CELL = ".jp-Notebook .jp-Cell"
STAGE_TITLES = ["Model response settled", "Tool call registered", "Tool executes",
                "Tool result committed", "Message history derived", "Next request sent"]

# Notebook 7.6's own front end throws this on page load, also for a plain ``1+1`` notebook without
# dsh (its shortcuts plugin reads ``plugins[id].schema`` on ``pluginChanged`` for an unloaded plugin).
NB7_KNOWN_ERRORS = {"Cannot read properties of undefined (reading 'schema')"}

# Notebook 7 has no status bar; its kernel is ready when the session's kernel says so.
KERNEL_READY_JS = """() => {
    const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
    const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
    const ei = document.querySelector('.jp-Notebook-ExecutionIndicator');
    return !!k && k.status === 'idle' && k.connectionStatus === 'connected' && !!ei && ei.dataset.status === 'idle';
}"""


def open_nb7(page: Any, server: Lab, name: str) -> None:
    page.goto(f"{server.url}/notebooks/{name}?token={server.token}")
    page.wait_for_selector(f"{CELL}", timeout=60_000)
    page.wait_for_function(KERNEL_READY_JS, timeout=60_000)


def prompts(page: Any) -> list[str]:
    return [(t or "").strip() for t in page.locator(f"{CELL} .jp-InputPrompt").all_text_contents()]


def current_stage(loop: Any) -> str | None:
    cur = loop.locator(".dsh-stage[data-state=current]")
    return cur.first.get_attribute("data-stage") if cur.count() else None


def stage_walk(samples: list[dict[str, Any]]) -> list[str]:
    walk: list[str] = []
    for s in samples:
        if s["stage"] and (not walk or walk[-1] != s["stage"]):
            walk.append(s["stage"])
    return walk


def test_dsh_then_loop_widget_in_notebook7(nb7: Lab, nb7_page: Any, record: Any) -> None:
    page = nb7_page
    name = nb7.write_notebook(
        "nb7_loop.ipynb",
        "%load_ext dsh_notebook",
        "%dsh read README.md and summarise",
        "r = _\nfrom dsh_notebook.notebook.widgets import LoopWidget\nLoopWidget(r.session_id)",
    )
    open_nb7(page, nb7, name)
    assert "/notebooks/" in page.url and page.locator(".jp-LabShell").count() == 0  # Notebook 7, not JupyterLab
    samples = record(page)
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")

    # the blocking %dsh cell: the streamed view with the read call and the summary
    wait_until(lambda: all(is_done(p) for p in prompts(page)), timeout=90, what="all three cells ran")
    dsh_out = page.locator(CELL).nth(1).locator(".jp-OutputArea").first
    text = dsh_out.inner_text()
    assert "demo-math" in text and "It has 3 sections" in text, text
    tools = dsh_out.locator(".dsh-answer li strong").all_text_contents()
    assert tools[:1] == ["read"], tools
    assert "✓ completed" in text and "1 tool call" in text

    # the widget: six stage cards with their titles, following the same session
    loop = page.locator(".dsh-loop").first
    loop.wait_for(timeout=30_000)
    assert loop.locator(".dsh-stage").count() == 6
    cards = loop.locator(".dsh-stage").all_inner_texts()
    for no, (card, title) in enumerate(zip(cards, STAGE_TITLES, strict=True), start=1):
        assert card.startswith(f"0{no}") and " ".join(title.split()) in " ".join(card.split()), card
    session_id = page.locator(CELL).nth(1).locator(".jp-OutputArea").first.inner_text().split("new session ")[1].split()[0]
    assert session_id in (loop.locator(".dsh-sub").text_content() or "")

    # live, opened on a run that has already ended: the diagram is at 06 at once (it catches up when the
    # run ends instead of walking the stages while the header says idle — issue 11)
    walk = wait_until(lambda: (w := stage_walk(samples())) and w[-1] == "6" and w, timeout=30,
                      what="the live view reached stage 06")  # as the 30 ms recorder saw it
    assert walk == ["6"], walk
    assert current_stage(loop) == "6"
    assert "06 · Next request sent" in (loop.locator(".dsh-explain").text_content() or "")
    shot(page, "nb7-loop-live-stage6", ".dsh-loop")

    # replay: play walks the recorded call again, from stage 01 to 06
    page.evaluate("() => { window.__dsh.length = 0; }")
    loop.locator(".dsh-play").click()
    wait_until(lambda: (loop.locator(".dsh-badge").first.text_content() or "") == "replaying", timeout=5, what="replaying")
    wait_until(lambda: current_stage(loop) == "6" and (loop.locator(".dsh-badge").first.text_content() or "") == "paused",
               timeout=30, what="the replay reached stage 06 and stopped")
    # the recorder's view: 06 (sampled before the click), then the replay from 01 to 06
    walk = wait_until(lambda: (w := stage_walk(samples())) and w[-1] == "6" and len(w) > 1 and w, timeout=5,
                      what="the recorder saw the replay end at 06")
    assert "1" in walk and walk[walk.index("1"):][:6] == ["1", "2", "3", "4", "5", "6"], walk
    assert not [e for e in page.page_errors if e not in NB7_KNOWN_ERRORS], page.page_errors
    shot(page, "nb7-loop-replay-stage6", ".dsh-loop")
    shot(page, "nb7-notebook")
