"""Share a run without a kernel: the page ``python -m dsh_notebook export-html`` writes, opened
from a file in headless Chromium with every request that is not ``file://`` aborted — and the
``text/html`` fallback of the widgets in ``jupyter nbconvert --to html`` of an executed notebook.

The session is real: ``python -m dsh_notebook run`` of seed 001's fix-the-tests task on a copy of
the demo workspace (the embedded scripted model drives the real tools: bash, read, edit, bash).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from .conftest import ARTIFACTS, REPO, settle, shot, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.slow]

TASK = "run the tests; if they fail fix src/math.ts; tell me the result"
STAGE_TITLES = ["Model response settled", "Tool call registered", "Tool executes", "Tool result committed",
                "Message history derived", "Next request sent"]


def cli(home: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DSH_HOME": str(home), "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "dsh_notebook", *args], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=180)


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, Path]:
    base = tmp_path_factory.mktemp("export")
    home, ws = base / "home", base / "demo"
    shutil.copytree(REPO / "dsh_notebook" / "demo" / "workspace", ws)
    run = cli(home, "run", "--cwd", str(ws), "--approve", "auto", TASK)
    assert run.returncode == 0, run.stderr
    sid = re.search(r"session: (s_\w+)", run.stdout).group(1)  # type: ignore[union-attr]
    return home, sid, home / "sessions" / f"{sid}.jsonl"


def offline_page(browser: Any) -> tuple[Any, Any, list[str]]:
    """A page whose every request but file:// is aborted (and recorded)."""
    blocked: list[str] = []
    context = browser.new_context(viewport={"width": 1280, "height": 1400})

    def route(r: Any) -> None:
        if r.request.url.startswith("file://"):
            r.continue_()
        else:
            blocked.append(r.request.url)
            r.abort()

    context.route("**/*", route)
    page = context.new_page()
    page.page_errors = []
    page.on("pageerror", lambda e: page.page_errors.append(str(e)))
    return context, page, blocked


def current_stage(loop: Any) -> int:
    return int(loop.locator(".dsh-stage[data-state=current]").first.get_attribute("data-stage") or 0)


def test_export_html_replays_the_loop_and_the_inspector_offline(browser: Any, session: tuple[Path, str, Path], tmp_path: Path) -> None:
    home, sid, log = session
    events = len(log.read_text().splitlines()) - 1  # the header line is not an event
    out = tmp_path / "run.html"
    done = cli(home, "export-html", sid, "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert f"wrote {out}" in done.stdout and out.stat().st_size > 50_000
    html = out.read_text()
    assert "<script src" not in html and "<link" not in html and "default-src 'none'" in html

    context, page, blocked = offline_page(browser)
    try:
        page.goto(out.as_uri())
        loop = page.locator(".dsh-loop")
        page.wait_for_selector(".dsh-loop .dsh-stage[data-state=current]", timeout=20_000)
        titles = [t.strip() for t in loop.locator(".dsh-stage-title").all_text_contents()]
        assert titles == STAGE_TITLES
        for title in loop.locator(".dsh-stage").all():
            assert title.is_visible() and title.bounding_box()["width"] > 60  # type: ignore[index]
        # the header counts what the log holds, like every other view
        assert f"{sid}" in loop.locator(".dsh-sub").inner_text() and f" {events} events" in loop.locator(".dsh-sub").inner_text()
        assert loop.locator(".dsh-prompt").count() == 0  # a replay: no prompt box
        assert "call 1/4: bash" in loop.locator(".dsh-scrub-label").inner_text()
        start = current_stage(loop)
        shot(page, "export-html-loop-start", ".dsh-loop")
        # playback advances through the stages to 06
        loop.locator(".dsh-play").click()
        seen = {start}

        def reached_six() -> bool:
            seen.add(current_stage(loop))
            return 6 in seen

        wait_until(reached_six, timeout=20, every=0.02, what="playback reached stage 06")
        assert len(seen) >= 3, seen  # it walked, it did not jump
        settle(loop)
        shot(page, "export-html-loop-played", ".dsh-loop")

        # the inspector lists the events, every one of them
        insp = page.locator(".dsh-inspector")
        wait_until(lambda: insp.locator(".dsh-row").count() > 5, timeout=10, what="inspector rows")
        assert insp.locator(".dsh-f-count").inner_text() == f"{events} of {events} events"
        types = insp.locator(".dsh-row-type").all_text_contents()
        assert "tool/call" in types and "tool/result" in types
        # the first tool/result (its seq depends on what the turn logged before it: checkpoints …)
        result_row = insp.locator(".dsh-row").filter(has=page.locator(".dsh-row-type", has_text="tool/result")).first
        call_seq = int(insp.locator(".dsh-row").filter(has=page.locator(".dsh-row-type", has_text="tool/call")).first.get_attribute("data-seq") or -1)
        result_row.click()
        detail = insp.locator(".dsh-detail").inner_text()
        assert "tool/result" in detail
        assert f"cites: #{call_seq}" in detail and "\"exitCode\": 1" in detail
        # a kernel call (approve, prompt) would be READ_ONLY: there is no prompt box to make one
        shot(page, "export-html-inspector", ".dsh-inspector")

        # the glossary opens from the header, offline
        loop.locator(".dsh-glossary-btn").click()
        panel = loop.locator(".dsh-glossary")
        assert panel.is_visible() and panel.locator("dt").count() > 30
        panel.locator(".dsh-glossary-search").fill("sourceEventSeqs")
        found = panel.locator("dt").all_text_contents()
        assert "sourceEventSeqs" in found and len(found) <= 3, found  # the term, and the stage that names it
        shot(page, "export-html-glossary", ".dsh-loop")
        page.keyboard.press("Escape")
        assert not panel.is_visible()
        assert blocked == [], blocked  # nothing asked the network
        assert page.page_errors == [], page.page_errors
    finally:
        context.close()


def test_export_html_dark_theme_and_coded_errors(browser: Any, session: tuple[Path, str, Path], tmp_path: Path) -> None:
    home, sid, log = session
    out = tmp_path / "dark.html"
    assert cli(home, "export-html", str(log), "-o", str(out), "--theme", "dark").returncode == 0
    context, page, blocked = offline_page(browser)
    try:
        page.goto(out.as_uri())
        page.wait_for_selector(".dsh-loop .dsh-stage[data-state=current]", timeout=20_000)
        bg = page.evaluate("() => getComputedStyle(document.querySelector('.dsh-root')).backgroundColor")
        fg = page.evaluate("() => getComputedStyle(document.querySelector('.dsh-root')).color")
        assert bg == "rgb(17, 17, 17)" and fg == "rgb(242, 242, 242)", (bg, fg)
        shot(page, "export-html-dark", ".dsh-loop")
        assert blocked == [] and page.page_errors == []
    finally:
        context.close()
    missing = cli(home, "export-html", "s_000000000000", "-o", str(tmp_path / "x.html"))
    assert missing.returncode == 2 and "[LOG_NOT_FOUND]" in missing.stderr
    unwritable = cli(home, "export-html", sid, "-o", str(tmp_path / "no-such-dir" / "x.html"))
    assert unwritable.returncode == 2 and "[OUTPUT_NOT_WRITABLE]" in unwritable.stderr


def test_nbconvert_html_of_an_executed_notebook_shows_the_stages(browser: Any, tmp_path: Path) -> None:
    """A notebook executed headless (no widget state saved, as JupyterLab and the walkthrough
    executor save it) → nbconvert HTML → the widgets' text/html fallback replays the run in a page
    with no kernel and no network."""
    nbformat = pytest.importorskip("nbformat")
    from nbclient import NotebookClient

    home = tmp_path / "home"
    ws = tmp_path / "demo"
    shutil.copytree(REPO / "dsh_notebook" / "demo" / "workspace", ws)
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("%load_ext dsh_notebook"),
        nbformat.v4.new_code_cell(f"%dsh --new --approve auto --cwd {ws} {TASK}"),
        nbformat.v4.new_code_cell("%dsh show"),
        nbformat.v4.new_code_cell("%dsh show --inspect"),
    ], metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})
    env_before = {k: os.environ.get(k) for k in ("DSH_HOME", "PYTHONPATH")}
    os.environ.update(DSH_HOME=str(home), PYTHONPATH=str(REPO))
    try:
        # saved as JupyterLab saves it by default and as `make demo-headless` does: no widget state
        NotebookClient(nb, timeout=180, kernel_name="python3", store_widget_state=False,
                       resources={"metadata": {"path": str(tmp_path)}}).execute()
    finally:
        for k, v in env_before.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    shown = [o for o in nb.cells[2].outputs if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
    assert shown and "text/html" in shown[0]["data"]
    nb_path = tmp_path / "run.ipynb"
    nbformat.write(nb, nb_path)
    convert = subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "html", str(nb_path)],
                             capture_output=True, text=True, timeout=120)
    assert convert.returncode == 0, convert.stderr
    page_html = tmp_path / "run.html"
    context, page, blocked = offline_page(browser)
    try:
        page.goto(page_html.as_uri())
        page.wait_for_selector(".dsh-loop .dsh-stage[data-state=current]", timeout=20_000)
        loop = page.locator(".dsh-loop").first
        assert [t.strip() for t in loop.locator(".dsh-stage-title").all_text_contents()] == STAGE_TITLES
        loop.locator(".dsh-play").click()
        wait_until(lambda: current_stage(loop) == 6, timeout=20, what="nbconvert replay reached stage 06")
        assert page.locator(".dsh-inspector .dsh-row").count() > 5
        loop.scroll_into_view_if_needed()
        shot(page, "nbconvert-loop-stage6", ".dsh-loop")
        assert page.page_errors == [], page.page_errors
        # nbconvert's own page asks CDNs for require.js / MathJax; the replay needs none of them
        assert all("dsh" not in url for url in blocked), blocked
    finally:
        context.close()
    (ARTIFACTS / "nbconvert-run.json").write_text(json.dumps({"blocked": blocked}))
