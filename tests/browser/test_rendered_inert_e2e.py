"""Issue 35 finding 4 / item 4, in real JupyterLab and headless Chromium: a model answer made of
remote images (Markdown, raw ``<img>``, ``srcset``, ``<picture>``, ``<iframe>``, ``<link>``,
``<style>`` with ``url()``, SVG, video, object …, each pointing at a loopback listener) loads
nothing — in a saved, executed notebook opened in Lab, in the HTML page nbconvert makes of it, in
the live ``%dsh`` cell and its loop widget, and in the ``export-html`` page.

Every check ends with a control: an image the test itself shows on the same page (or, for the
exported page, whose policy forbids any request, in the same browser) must reach the listener, so
"no request" is measured by a listener that works — then the listener must have seen the control
and nothing else, and the page's own resource timing must name no other listener URL."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from tests.browser.conftest import REPO, Lab, is_done, open_notebook, run_all_cells, wait_until
from tests.hardening.exfil import LEAK, Listener, hostile_answer
from tests.support.cli import dsh
from tests.support.fake_openai import FakeOpenAIServer
from tests.support.fake_openai_chunks import text_reply

pytestmark = [pytest.mark.browser, pytest.mark.slow]

BIN = Path(sys.executable).parent
CELL = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell"
FETCHING = "img, iframe, frame, object, embed, video, audio, picture, source, link, style, script, image, input[type=image]"


def _resources(page: Any, base: str) -> list[str]:
    """The URLs of ``base`` this page asked for (the browser's own record: Resource Timing)."""
    return [str(u) for u in page.evaluate(
        "(base) => performance.getEntriesByType('resource').map(e => e.name).filter(n => n.startsWith(base))", base)]


def _control(page: Any, sink: Listener, name: str) -> None:
    """Show an image of the listener on ``page`` and wait until the listener has it."""
    page.evaluate("(src) => { const i = new Image(); i.src = src; document.body.append(i); }",
                  f"{sink.base}/{name}.gif")
    sink.wait_for(name)


def _env(home: Path, server: FakeOpenAIServer) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("JPY_SESSION_NAME", "DSH_MODEL", "DSH_BASE_URL")}
    env.update({"PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
                "DSH_HOME": str(home), "DSH_API_KEY": server.api_key or ""})
    return env


def test_a_saved_executed_notebook_and_its_nbconvert_page_load_nothing(page: Any, lab: Lab, tmp_path: Path) -> None:
    src, saved = tmp_path / "report.ipynb", lab.root / "report-saved.ipynb"
    with Listener() as sink:
        with FakeOpenAIServer() as server:
            server.enqueue(text_reply(hostile_answer(sink.base), pieces=9))
            nbformat.write(new_notebook(cells=[
                new_code_cell("%load_ext dsh_notebook"),
                new_code_cell(f"%dsh --model openai:fake-model --base-url {server.base_url} --approve deny --no-widget "
                              "summarise the report")],
                metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}), src)
            env = _env(tmp_path / "home", server)
            done = subprocess.run([str(BIN / "papermill"), str(src), str(saved), "--cwd", str(tmp_path),
                                   "--no-progress-bar", "--execution-timeout", "180"],
                                  env=env, capture_output=True, text=True, timeout=300)
            assert done.returncode == 0, done.stderr
        nb = nbformat.read(saved, as_version=4)
        nb.cells.append(new_markdown_cell(f"![control]({sink.base}/control-saved.gif)"))  # Lab loads this one
        nbformat.write(nb, saved)

        open_notebook(page, lab, saved.name)
        answer = page.locator(f"{CELL} .jp-OutputArea .dsh-answer").first
        answer.locator("a.dsh-image-link").first.wait_for(timeout=60_000)
        assert "Here is the summary" in (answer.text_content() or "") and "<img src=" in (answer.text_content() or "")
        sink.wait_for("control-saved")
        assert page.locator(f"{CELL} .jp-OutputArea").locator(FETCHING).count() == 0
        assert sink.paths == ["/control-saved.gif"], sink.paths
        assert _resources(page, sink.base) == [f"{sink.base}/control-saved.gif"]

        html_page = tmp_path / "report-saved.html"
        converted = subprocess.run([str(BIN / "jupyter-nbconvert"), "--to", "html", str(saved), "--output-dir",
                                    str(tmp_path)], env=env, capture_output=True, text=True, timeout=300)
        assert converted.returncode == 0, converted.stderr
        assert LEAK in html_page.read_text(encoding="utf-8")
        page.goto(html_page.as_uri(), wait_until="domcontentloaded")
        wait_until(lambda: sink.paths.count("/control-saved.gif") == 2, timeout=30,
                   what="the nbconvert page loaded its own markdown cell's control image")
        assert page.locator(".jp-OutputArea").locator(FETCHING).count() == 0
        assert set(sink.paths) == {"/control-saved.gif"}, sink.paths


def test_the_live_cell_its_widget_and_the_exported_page_load_nothing(page: Any, lab: Lab, browser: Any,
                                                                       tmp_path: Path) -> None:
    with Listener() as sink, FakeOpenAIServer() as server:
        server.enqueue(text_reply(hostile_answer(sink.base), pieces=9))
        name = lab.write_notebook(
            "live_inert.ipynb",
            f"import os\nos.environ['DSH_API_KEY'] = {server.api_key!r}\n%load_ext dsh_notebook",
            f"%dsh --new --model openai:fake-model --base-url {server.base_url} --approve deny summarise the report",
            "%dsh show")
        open_notebook(page, lab, name)
        run_all_cells(page)
        cells = page.locator(CELL)
        wait_until(lambda: is_done((cells.nth(2).locator(".jp-InputPrompt").text_content() or "").strip()),
                   timeout=120, what="the three cells ran")
        answer = cells.nth(1).locator(".jp-OutputArea .dsh-answer").first
        answer.locator("a.dsh-image-link").first.wait_for(timeout=30_000)
        loop = cells.nth(2).locator(".dsh-loop").first
        loop.wait_for(timeout=60_000)
        loop.locator('.dsh-tab[data-view="history"]').first.click()
        wait_until(lambda: LEAK in (loop.text_content() or ""), timeout=30,
                   what="the widget's history shows the answer (as text)")
        _control(page, sink, "control-live")
        assert page.locator(f"{CELL} .jp-OutputArea .dsh-answer").locator(FETCHING).count() == 0
        assert loop.locator(FETCHING).count() == 0
        assert sink.paths == ["/control-live.gif"], sink.paths
        assert _resources(page, sink.base) == [f"{sink.base}/control-live.gif"]

        sessions = sorted((lab.home / "sessions").glob("*.jsonl"), key=lambda p: p.stat().st_mtime)
        out = tmp_path / "exported.html"
        done = dsh("export-html", str(sessions[-1]), "-o", str(out), env=_env(lab.home, server), timeout=120)
        assert done.returncode == 0, done.stderr
        assert LEAK in out.read_text(encoding="utf-8")
        exported = browser.new_page()
        try:
            exported.goto(out.as_uri())
            insp = exported.locator(".dsh-export .dsh-inspector").first
            rows = insp.locator(".dsh-row").filter(has=exported.locator(".dsh-row-type", has_text="assistant/message"))
            rows.first.wait_for(timeout=30_000)
            rows.first.click()
            wait_until(lambda: LEAK in insp.locator(".dsh-detail").inner_text(), timeout=30,
                       what="the exported page's inspector shows the answer (as text)")
            assert exported.locator(".dsh-export").locator(FETCHING).count() == 0
            assert _resources(exported, sink.base) == []
        finally:
            exported.close()
        control = browser.new_page()  # the exported page's policy forbids any request: the control is beside it
        try:
            control.set_content(f'<img src="{sink.base}/control-export.gif">')
            sink.wait_for("control-export")
        finally:
            control.close()
        assert sink.paths == ["/control-live.gif", "/control-export.gif"], sink.paths
