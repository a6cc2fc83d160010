"""End to end: checkpoints in real JupyterLab and headless Chromium. A scripted turn changes the
demo workspace with write, edit and bash; the loop widget's header shows its ``+a ~m -d``; in the
inspector the turn's ``checkpoint/changes`` lists each file with Diff / Keep / Revert — Diff (by
keyboard) shows the file's unified diff with its removed and added lines, coloured at >= 4.5:1 in
JupyterLab Light and Dark; Revert puts that file alone back (on disk), Keep leaves it. Screenshot
``checkpoints-inspector.png``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .conftest import Lab, open_notebook, run_all_cells, set_theme, shot, wait_until
from .test_debugger_e2e import CONTRAST_JS

pytestmark = [pytest.mark.browser]
DEMO = Path(__file__).resolve().parents[2] / "dsh_notebook" / "demo" / "workspace"


def newest_workspace(home: Path) -> Path:
    log = max((home / "sessions").glob("*.jsonl"), key=lambda p: p.stat().st_mtime)
    return Path(json.loads(log.read_text().splitlines()[0])["cwd"])


def test_keep_and_revert_per_file_in_the_inspector(lab: Lab, page: Any) -> None:
    name = lab.write_notebook(
        "checkpoints.ipynb",
        "%load_ext dsh_notebook",
        "r = %dsh --model script:auto --no-widget make a checkpoint demo",
        "from dsh_notebook.notebook.widgets import LoopWidget, SessionInspector\nLoopWidget(r.session_id)",
        "SessionInspector(r.session_id)",
    )
    open_notebook(page, lab, name)
    run_all_cells(page)
    page.wait_for_selector(".dsh-inspector .dsh-row", timeout=120_000)
    badge = page.locator(".dsh-loop .dsh-header .dsh-changes").first
    wait_until(lambda: badge.count() == 1 and badge.text_content() == "+3 ~1 -2", timeout=60, what="the header's +a ~m -d")
    insp = page.locator(".dsh-inspector").first
    insp.locator(".dsh-f-type").select_option("checkpoint/changes")
    insp.locator(".dsh-row").first.click()
    review = insp.locator(".dsh-detail .dsh-changes-review")
    wait_until(lambda: review.count() == 1, timeout=20, what="the changes review")
    paths = [review.locator(".dsh-change-path").nth(i).text_content() for i in range(review.locator("li").count())]
    assert paths == ["NOTES.md", "build/out.txt", "test/run.mjs → test/run-renamed.mjs", "src/math.ts", "package.json"]
    ws = newest_workspace(lab.home)
    edited = (ws / "src" / "math.ts").read_text()
    assert edited.startswith("// edited by the agent\n")
    # the diffs: Diff reached and pressed by keyboard, the panel read line by line
    math = review.locator('li[data-path="src/math.ts"]')
    math.locator(".dsh-diff-toggle").focus()
    page.keyboard.press("Enter")
    wait_until(lambda: math.locator(".dsh-dl-add").count() >= 1, timeout=30, what="the diff of src/math.ts")
    assert math.locator(".dsh-diff-toggle").get_attribute("aria-expanded") == "true"
    assert math.locator(".dsh-dl-add").all_text_contents() == ["+// edited by the agent"]
    assert math.locator(".dsh-dl-del").count() == 0
    assert math.locator(".dsh-dl-head").all_text_contents() == ["--- a/src/math.ts", "+++ b/src/math.ts"]
    pkg = review.locator('li[data-path="package.json"]')
    pkg.locator(".dsh-diff-toggle").click()
    wait_until(lambda: pkg.locator(".dsh-dl-del").count() >= 1, timeout=30, what="the diff of package.json")
    removed = [t[1:] for t in pkg.locator(".dsh-dl-del").all_text_contents()]
    assert removed == (DEMO / "package.json").read_text().splitlines() and pkg.locator(".dsh-dl-add").count() == 0
    for theme in ("JupyterLab Light", "JupyterLab Dark"):
        set_theme(page, theme)
        for sel in ('li[data-path="src/math.ts"] .dsh-dl-add', 'li[data-path="package.json"] .dsh-dl-del'):
            c = review.locator(sel).first.evaluate(CONTRAST_JS)
            assert c["ratio"] >= 4.5 and c["fontSize"] >= 12, (theme, sel, c)
    set_theme(page, "JupyterLab Light")
    review.locator('li[data-path="src/math.ts"] .dsh-revert').click()
    review.locator('li[data-path="NOTES.md"] .dsh-keep').click()
    status = review.locator('li[data-path="src/math.ts"] .dsh-change-status')
    wait_until(lambda: status.text_content() == "reverted", timeout=30, what="the revert's answer")
    kept = review.locator('li[data-path="NOTES.md"] .dsh-change-status')
    wait_until(lambda: kept.text_content() == "kept", timeout=30, what="the keep's answer")
    assert (ws / "src" / "math.ts").read_text() == edited.removeprefix("// edited by the agent\n")
    assert (ws / "NOTES.md").exists() and not (ws / "package.json").exists()  # the other files as the agent left them
    assert math.locator(".dsh-dl-add").count() == 1  # the diff stays open (the turn's diff, not the disk's)
    shot(page, "checkpoints-inspector", ".dsh-inspector")
