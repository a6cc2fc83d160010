"""Issue 35 finding 4 / item 4: a rendered answer loads nothing — in the cell and in the copies
``jupyter nbconvert --execute`` and papermill save, and in the HTML page nbconvert makes of them.

A real kernel runs ``%dsh`` against the loopback OpenAI-compatible server, whose model answers
with every way of making a renderer fetch a URL (``tests/hardening/exfil.py``), under
``--approve deny``. The saved outputs must hold no ``text/markdown`` that names the listener and
no HTML that could fetch anything; the answer still reads (its text is in ``text/plain`` and the
HTML, images become links). The browser half (real JupyterLab, Chromium, the listener counting
requests) is ``tests/browser/test_rendered_inert_e2e.py``."""

from __future__ import annotations

import os
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from dsh_notebook.notebook.cell.inert_html import inert_html
from dsh_notebook.notebook.cell.segments import NoteSeg, TextSeg, ToolSeg
from dsh_notebook.notebook.cell.sinks import display_bundle
from tests.hardening.exfil import LEAK, check_inert_html, hostile_answer
from tests.support.fake_openai import FakeOpenAIServer
from tests.support.fake_openai_chunks import text_reply

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
BASE = "http://127.0.0.1:9"  # never contacted here: these tests read what was saved
IPC = ("--KernelManager.transport=ipc",)


def test_the_hostile_answer_renders_inert_and_still_reads() -> None:
    answer = hostile_answer(BASE)
    assert check_inert_html(answer) != []  # the checker sees what a raw answer would load
    shown = inert_html(answer)
    assert check_inert_html(shown) == []
    assert "[image: chart]" in shown and "<strong>bold</strong>" in shown and "<code>code</code>" in shown
    assert "&lt;img src=" in shown  # raw HTML shows as the text the model wrote
    bundle = display_bundle([TextSeg("1.1", answer), ToolSeg("c1", "bash", '{"command": "ls"}', done=True, result="ok"),
                             NoteSeg("n1", "<img src=x> note")])
    assert set(bundle) == {"text/html", "text/plain"}  # never text/markdown
    assert check_inert_html(bundle["text/html"]) == []
    assert answer in bundle["text/plain"]  # the readable fallback is the answer as written


def _notebook(path: Path, server: FakeOpenAIServer) -> None:
    cells = [new_code_cell("%load_ext dsh_notebook"),
             new_code_cell(f"%dsh --model openai:fake-model --base-url {server.base_url} --approve deny --no-widget "
                           "summarise the report")]
    nbformat.write(new_notebook(cells=cells, metadata={"kernelspec": {
        "name": "python3", "display_name": "Python 3", "language": "python"}}), path)


def _env(tmp_path: Path, server: FakeOpenAIServer) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("JPY_SESSION_NAME", "DSH_MODEL", "DSH_BASE_URL")}
    path = os.environ.get("PYTHONPATH")
    env.update({"PYTHONPATH": f"{REPO}{os.pathsep}{path}" if path else str(REPO), "DSH_HOME": str(tmp_path / "home"),
                "DSH_API_KEY": server.api_key or "", "IPYTHONDIR": str(tmp_path / "ipython"),
                "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"), "PYDEVD_DISABLE_FILE_VALIDATION": "1"})
    return env


def _problems(nb: Any) -> list[str]:
    out: list[str] = []
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            data = o.get("data", {})
            if BASE in str(data.get("text/markdown", "")):
                out.append(f"text/markdown names the listener: {str(data['text/markdown'])[:120]!r}")
            if "text/html" in data:
                out += check_inert_html(str(data["text/html"]))
    return out


class _Fetchers(HTMLParser):
    """Every tag of a page whose attributes (or whose style/script text) name the listener other
    than as a link's address or title."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []
        self._in: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._in = tag
        for name, value in attrs:
            if BASE in (value or "") and not (tag == "a" and name in ("href", "title")):
                self.found.append(f"<{tag} {name}={value!r}>")

    def handle_data(self, data: str) -> None:
        if self._in in ("style", "script") and BASE in data:
            self.found.append(f"<{self._in}> {data[:80]!r}")


@pytest.mark.parametrize("executor", ["nbconvert", "papermill"])
def test_executed_copies_and_their_html_pages_carry_no_loading_markup(executor: str, tmp_path: Path) -> None:
    src, dst = tmp_path / "report.ipynb", tmp_path / "report-out.ipynb"
    with FakeOpenAIServer() as server:
        server.enqueue(text_reply(hostile_answer(BASE), pieces=9))
        _notebook(src, server)
        env = _env(tmp_path, server)
        if executor == "nbconvert":
            cmd = [str(BIN / "jupyter-nbconvert"), "--to", "notebook", "--execute", str(src), "--output", dst.name,
                   "--ExecutePreprocessor.timeout=180", *IPC]
        else:
            cmd = [str(BIN / "papermill"), str(src), str(dst), "--cwd", str(tmp_path), "--no-progress-bar",
                   "--execution-timeout", "180"]
        done = subprocess.run(cmd, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
    nb = nbformat.read(dst, as_version=4)
    outputs = [o for o in nb.cells[1].outputs if o.get("output_type") == "display_data"]
    assert outputs and "Here is the summary" in str(outputs[-1]["data"].get("text/plain"))  # the turn ran
    assert "[image: chart]" in str(outputs[-1]["data"]["text/html"])  # images became links
    assert _problems(nb) == []
    page = tmp_path / "report-out.html"
    converted = subprocess.run([str(BIN / "jupyter-nbconvert"), "--to", "html", str(dst), "--output", page.name],
                               env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert converted.returncode == 0, converted.stderr
    text = page.read_text(encoding="utf-8")
    assert LEAK in text  # the answer is in the page (as text and links)
    fetchers = _Fetchers()
    fetchers.feed(text)
    assert fetchers.found == []
