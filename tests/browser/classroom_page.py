"""The page the classroom browser test works on (tests/browser/test_classroom_e2e.py): a notebook
that ran a real ``script:fix-tests`` session and shows it in a replayed LoopWidget and a
SessionInspector, plus a live LoopWidget with its prompt box; and the moves a lesson makes on it
(go to a stage, switch a view, switch the JupyterLab theme, press the notebook's shortcut keys),
with the audit of both widgets in the states a lesson walks through.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from .a11y_audit import audit, summary, violations
from .conftest import (
    ARTIFACTS,
    Lab,
    click_until,
    frames,
    is_done,
    open_notebook,
    run_all_cells,
    set_theme,
    settle,
    shot,
    wait_until,
)

PROMPT = "run the tests; if they fail, fix src/math.ts; tell me the result"
LOOP = ".dsh-loop[data-kind=replay]"
INSP = ".dsh-inspector"
# The open notebook: how many cells, which is active, which mode (read from JupyterLab's model).
NB_JS = """() => { const nb = window.jupyterapp.shell.currentWidget.content;
  return {cells: nb.widgets.length, active: nb.activeCellIndex, sources: nb.widgets.map(w => w.model.sharedModel.getSource())}; }"""


@pytest.fixture(scope="module")
def nb(browser: Any, lab: Lab) -> Iterator[Any]:
    """One page with the run done and three widgets: a replay LoopWidget, the inspector, a live one."""
    ARTIFACTS.mkdir(exist_ok=True)
    name = lab.write_notebook(
        "classroom.ipynb",
        "%load_ext dsh_notebook",
        f"%dsh --model script:fix-tests --approve auto --no-widget {PROMPT}",
        "import glob, os\nfrom dsh_notebook.notebook.widgets import LoopWidget, SessionInspector\n"
        "path = max(glob.glob(os.environ['DSH_HOME'] + '/sessions/*.jsonl'), key=os.path.getmtime)\n"
        "LoopWidget(path=path)",
        "SessionInspector(path)",
        "LoopWidget(model='script:readme')",
    )
    pg = browser.new_page(viewport={"width": 1280, "height": 1500})
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    open_notebook(pg, lab, name)
    run_all_cells(pg)
    pg.wait_for_selector(".dsh-inspector .dsh-row", timeout=120_000)
    pg.wait_for_selector(".dsh-loop .dsh-prompt-input", timeout=60_000)
    wait_until(lambda: all(is_done(p) for p in pg.evaluate(
        "() => [...document.querySelectorAll('.jp-Notebook .jp-Cell .jp-InputPrompt')].map(e => e.textContent.trim())")),
        timeout=60, what="every cell ran")
    # mark the replay widget (it has no prompt box) so selectors find it whatever the order
    pg.evaluate("() => { for (const r of document.querySelectorAll('.dsh-loop')) r.dataset.kind = r.querySelector('.dsh-prompt') ? 'live' : 'replay'; }")
    pg.page_errors = errors
    yield pg
    pg.close()
    lab.shutdown_sessions()


def stage_now(page: Any) -> str | None:
    return page.locator(f"{LOOP} .dsh-stage[aria-current=step]").first.get_attribute("data-stage")


def go_stage(page: Any, n: int, call: int = 0) -> None:
    page.locator(f"{LOOP} .dsh-scrubber").first.fill(str(call))
    click_until(page.locator(f'{LOOP} .dsh-stage[data-stage="{n}"]'), lambda: stage_now(page) == str(n), f"stage 0{n}")


def view(page: Any, name: str) -> None:
    page.locator(f'{LOOP} .dsh-tab[data-view="{name}"]').first.click()
    page.locator(f'{LOOP} .dsh-tab[data-view="{name}"][aria-selected="true"]').first.wait_for(timeout=10_000)
    settle(page.locator(LOOP))


def theme(page: Any, name: str) -> None:
    set_theme(page, name)


def audit_states(page: Any, tag: str) -> tuple[list[str], dict[str, float]]:
    """Audit both widgets in the states a lesson walks through (a screenshot of each); return
    the violations and the figures."""
    found: list[dict[str, Any]] = []
    bad: list[str] = []

    def check(where: str, sel: str) -> None:
        shot(page, f"classroom-{tag}-{where.replace(' ', '-').replace('/', '-').replace(',', '')}", sel)
        items = audit(page, sel)
        assert items, f"no visible text found in {where}"
        found.extend(items)
        bad.extend(f"[{where}] {v}" for v in violations(items))

    for n, v in ((1, "history"), (1, "payloads"), (3, "roles"), (4, "payloads"), (6, "history")):
        go_stage(page, n)
        view(page, v)
        check(f"loop stage 0{n} {v}", LOOP)
    go_stage(page, 4, call=3)
    view(page, "payloads")
    check("loop call 4 stage 04 payloads", LOOP)
    insp = page.locator(INSP).first
    insp.locator(".dsh-f-type").select_option("tool/result")
    insp.locator(".dsh-row").first.click()
    check("inspector tool/result", INSP)
    insp.locator('.dsh-tab[data-detail="messages"]').click()
    check("inspector messages", INSP)
    insp.locator(".dsh-f-type").select_option("request/frozen")  # the Request diff tab is a request's
    insp.locator(".dsh-row").first.click()
    insp.locator('.dsh-tab[data-detail="diff"]').click()
    check("inspector diff", INSP)
    insp.locator(".dsh-f-type").select_option("")
    check("live loop, no session yet", ".dsh-loop[data-kind=live]")
    return bad, summary(found)


def nb_state(page: Any) -> dict[str, Any]:
    return dict(page.evaluate(NB_JS))


def press_notebook_keys(page: Any) -> None:
    for k in ("b", "a", "d", "d", "ArrowDown", "ArrowUp", "Shift+Enter", "m"):
        page.keyboard.press(k)
        frames(page, 1)  # drawn before the next key, as a person types
