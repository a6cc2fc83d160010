"""``export-html`` writes one self-contained page from a real saved session, with coded errors;
the widgets' outputs carry the same replay as ``text/html`` (what nbconvert shows)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from dsh_notebook.cli import main
from dsh_notebook.client.dsh_client import DshClient
from dsh_notebook.demo import copy_demo_workspace
from dsh_notebook.host.host import Host
from dsh_notebook.models.price_table import pricing_table
from dsh_notebook.notebook.widgets import LoopWidget, SessionInspector
from dsh_notebook.observe import export_html

DEMO = Path(__file__).resolve().parents[2] / "dsh_notebook" / "demo" / "workspace"
# a prompt that tries to end the page's <script> early: it must stay data
PROMPT = "read README.md and summarise </script><script>window.pwned=1</script><!--"


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, Path]:
    base = tmp_path_factory.mktemp("export")
    home, ws = base / "home", base / "ws"
    shutil.copytree(DEMO, ws)
    mp = pytest.MonkeyPatch()
    mp.setenv("DSH_HOME", str(home))
    try:
        assert main(["run", "--cwd", str(ws), "--approve", "auto", PROMPT]) == 0
    finally:
        mp.undo()
    log = next((home / "sessions").glob("*.jsonl"))
    return home, log.stem, log


def embedded_json(page: str) -> dict[str, object]:
    m = re.search(r'<script type="application/vnd.dsh-session\+json" id="[^"]+">(.*?)</script>', page, re.S)
    assert m is not None
    return json.loads(m.group(1))  # type: ignore[no-any-return]


def test_the_cli_writes_one_self_contained_page(saved: tuple[Path, str, Path], tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    home, sid, log = saved
    monkeypatch.setenv("DSH_HOME", str(home))
    out = tmp_path / "run.html"
    assert main(["export-html", sid, "-o", str(out)]) == 0
    assert f"wrote {out}" in capsys.readouterr().out
    page = out.read_text()
    assert page.startswith("<!doctype html>") and "default-src 'none'" in page
    assert not re.search(r"<(script|link|img)[^>]+(src|href)=", page)  # nothing loaded from anywhere
    data = embedded_json(page)
    lines = log.read_text().splitlines()
    assert data["sessionId"] == sid and data["events"] == [json.loads(x) for x in lines[1:]]
    assert data["header"] == json.loads(lines[0]) and data["info"]["sessionId"] == sid  # type: ignore[index]
    # the prompt's "</script>" is still data: one script of each kind, the text intact
    payload = page.split('application/vnd.dsh-session+json"', 1)[1].split("</script>", 1)[0]
    assert "<" not in payload.split(">", 1)[1]  # every "<" of the data is \\u003c: it cannot close the element
    assert page.count("<script>") == 1 and "<script>window.pwned" not in page
    texts = [b["text"] for e in data["events"] if e["type"] == "user/message"  # type: ignore[union-attr, index]
             for b in e["message"]["content"]]  # type: ignore[index]
    assert PROMPT in texts  # the prompt came through intact
    assert f"{len(lines) - 1} events" in page
    # a page to share: any new file's mode (0644 under umask 022) — a web folder can serve it; the
    # session's own log stays 0600
    from dsh_notebook.observe.export_html import _umask

    assert out.stat().st_mode & 0o777 == 0o666 & ~_umask()
    assert out.stat().st_mode & 0o777 != 0o600 or _umask() & 0o066 == 0o066
    assert log.stat().st_mode & 0o777 == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.html"]  # no temp file left beside it
    assert data["pricing"]["models"] == {}  # type: ignore[index]  # script:* is free; no catalog entry is used


def test_an_exported_page_carries_the_prices_of_the_models_it_used() -> None:
    table = pricing_table()
    assert len(table["models"]) > 3  # type: ignore[arg-type]  # the widgets get the whole catalog
    assert list(pricing_table([("deepseek", "deepseek-chat")])["models"]) == ["deepseek:deepseek-chat"]  # type: ignore[arg-type]
    # a dated snapshot and an unknown model: the entry the catalog looks up, nothing for the other
    picked = pricing_table([("openai", "gpt-4o-2024-08-06"), ("openai", "no-such-model")])["models"]
    assert list(picked) == ["openai:gpt-4o"]  # type: ignore[arg-type]


def test_coded_errors_for_a_missing_session_and_an_unwritable_file(saved: tuple[Path, str, Path], tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    home, sid, log = saved
    monkeypatch.setenv("DSH_HOME", str(home))
    assert main(["export-html", "s_000000000000", "-o", str(tmp_path / "a.html")]) == 2
    assert "[LOG_NOT_FOUND]" in capsys.readouterr().err
    assert main(["export-html", str(log), "-o", str(tmp_path)]) == 2
    assert "[OUTPUT_NOT_WRITABLE]" in capsys.readouterr().err
    assert main(["export-html", str(log), "-o", str(tmp_path / "missing" / "a.html")]) == 2
    assert "[OUTPUT_NOT_WRITABLE]" in capsys.readouterr().err
    assert not list(tmp_path.glob("*.html"))


def test_widget_outputs_carry_the_replay_as_html(saved: tuple[Path, str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    _home, sid, log = saved
    data, _meta = LoopWidget(path=log)._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in data
    html = data["text/html"]
    assert 'data-kind="loop"' in html and 'data-kind="inspector"' not in html
    assert embedded_json(html)["sessionId"] == sid
    insp, _ = SessionInspector(str(log))._repr_mimebundle_()
    assert 'data-kind="inspector"' in insp["text/html"]
    # a log too big to copy into every output keeps only the widget view
    monkeypatch.setattr(export_html, "FALLBACK_MAX_EVENTS", 3)
    big, _ = LoopWidget(path=log)._repr_mimebundle_()
    assert "text/html" not in big and "application/vnd.jupyter.widget-view+json" in big


def test_a_live_sessions_widget_carries_its_replay_read_on_the_host_loop(host: Host, tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A session this kernel's host is running: the fallback copies its events on the host loop
    (where the agent appends), not from the notebook's thread; a long one keeps only the widget."""
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "home"))
    ws = copy_demo_workspace(tmp_path / "ws")
    with DshClient(host) as client:
        outcome = client.run("read README.md and summarise", model="script:auto", cwd=str(ws), approve="auto",
                             timeout=60)
    assert outcome.session_id in host.registry.live
    data, _ = LoopWidget(outcome.session_id, host=host)._repr_mimebundle_()
    page = embedded_json(data["text/html"])
    assert page["sessionId"] == outcome.session_id
    events = page["events"]
    assert [e["seq"] for e in events] == list(range(len(events)))  # type: ignore[index]
    assert events[-1]["type"] == "turn/end"  # type: ignore[index]
    monkeypatch.setattr(export_html, "FALLBACK_MAX_EVENTS", 3)
    big, _ = LoopWidget(outcome.session_id, host=host)._repr_mimebundle_()
    assert "text/html" not in big and "application/vnd.jupyter.widget-view+json" in big
