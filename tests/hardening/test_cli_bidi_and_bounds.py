"""Issue 35, two lows, as attacks from outside:

- the CLI printed a right-to-left override (and other bidi controls and invisible characters)
  raw: a file name ``invoice\\u202egnp.exe`` showed as ``invoiceexe.png``; now ``run``, ``show``
  (plain and ``--json``), ``sessions`` and ``sessions --search`` show ``\\u202e`` — and the JSON
  they print still parses to the same strings;
- ``--max-tokens`` with 23 digits was accepted and sent: every numeric flag of ``run`` and
  ``%dsh`` is bounded, refused with a coded error before any request.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.realuse.cli import REPO, session_of
from tests.support.cli import dsh
from tests.support.fake_openai import FakeOpenAIServer
from tests.support.fake_openai_chunks import text_reply, tool_call_reply

RLO, LRI, PDI, ZWSP, BOM, TAG_A = "\u202e", "\u2066", "\u2069", "\u200b", "\ufeff", "\U000e0041"
HIDDEN = (RLO, LRI, PDI, ZWSP, BOM, TAG_A, "\u200f", "\u2028", "\x9b")
NAME = f"invoice{RLO}gnp.exe"


def _cli(home: Path, server: FakeOpenAIServer, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DSH_HOME": str(home), "PYTHONPATH": str(REPO), "DSH_API_KEY": server.api_key or ""}
    return dsh(*args, env=env, timeout=180)


def test_bidi_controls_and_invisible_characters_are_shown_visible_by_every_command(tmp_path: Path) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    ws.mkdir()
    (ws / NAME).write_text("not a picture\n")
    answer = f"The file {NAME} is an image{ZWSP}.{BOM} See {LRI}admin{PDI} and {TAG_A}hidden\x9b."
    with FakeOpenAIServer() as server:
        server.enqueue(tool_call_reply([("c1", "bash", json.dumps({"command": "ls"}))]), text_reply(answer))
        done = _cli(home, server, "run", "--approve", "auto", "--model", "fake-model", "--base-url", server.base_url,
                    "--cwd", str(ws), f"look at {NAME}")
        assert done.returncode == 0, done.stderr
        sid, _log = session_of(done.stdout)
        views = {" ".join(a): _cli(home, server, *a) for a in (
            ("show", sid), ("show", "--json", sid), ("show", "--messages", sid), ("sessions",),
            ("sessions", "--search", "invoice", "--json"), ("show", "--search", "invoice", sid))}
    outputs = {"run": done, **views}
    for name, out in outputs.items():
        assert out.returncode == 0, (name, out.stderr)
        for char in HIDDEN:
            assert char not in out.stdout + out.stderr, (name, repr(char))
    assert "invoice\\u202egnp.exe" in done.stdout and "\\u200b" in done.stdout  # visible, in place
    assert "invoice\\u202egnp.exe" in views["sessions"].stdout  # the title (the prompt)
    assert "invoice\\u202egnp.exe" in views[f"show {sid}"].stdout
    # JSON output: the escapes are JSON's own, so it parses to the very strings
    lines = [json.loads(line) for line in views[f"show --json {sid}"].stdout.splitlines()]
    texts = [b["text"] for e in lines if e.get("type") == "assistant/message" for b in e["message"]["content"]
             if b["type"] == "text"]
    assert answer in texts
    messages = json.loads(views[f"show --messages {sid}"].stdout)
    assert any(m.get("content") == answer for m in messages)


BOUNDS = [("--max-tokens", "12345678901234567890123"), ("--max-tokens", "0"), ("--max-steps", "99999999999999999999"),
          ("--max-time", "1e300"), ("--max-time", "nan"), ("--context-window", "100000000000000000000000"),
          ("--max-repeats", "99999999999"), ("--first-byte-timeout", "1e99"), ("--idle-timeout", "inf")]


@pytest.mark.parametrize(("flag", "value"), BOUNDS)
def test_run_refuses_out_of_range_numbers_with_a_code_before_any_request(flag: str, value: str, tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        done = _cli(tmp_path / "home", server, "run", "--model", "fake-model", "--base-url", server.base_url,
                    "--cwd", str(tmp_path), flag, value, "hello")
        sent = len(server.requests)
    assert done.returncode == 2, done.stdout + done.stderr
    assert any(f"[{code}]" in done.stderr for code in ("BAD_FLAG", "BAD_CONFIG", "BAD_ARGS")), done.stderr
    assert flag in done.stderr and "Traceback" not in done.stderr
    assert sent == 0


@pytest.fixture
def shell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    from IPython.testing.globalipapp import get_ipython

    from dsh_notebook.host.host import Host

    monkeypatch.setenv("DSH_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    ip = get_ipython()
    ip.run_line_magic("load_ext", "dsh_notebook")
    yield ip
    ip.run_line_magic("unload_ext", "dsh_notebook")
    host = Host.current()
    if host is not None:
        host.shutdown()


@pytest.mark.parametrize(("flag", "value"), BOUNDS)
def test_the_magic_refuses_out_of_range_numbers_with_a_code_before_any_request(
        flag: str, value: str, shell: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeOpenAIServer() as server:
        monkeypatch.setenv("DSH_API_KEY", server.api_key or "")
        server.enqueue(text_reply("should not be asked"))
        result = shell.run_cell(f"%dsh --new --model openai:fake-model --base-url {server.base_url} {flag} {value} hello")
        sent = len(server.requests)
    error = getattr(result.error_in_exec, "error", None)
    assert error is not None and error.code in ("BAD_FLAG", "BAD_CONFIG"), result.error_in_exec
    assert flag in error.message
    assert sent == 0
    os.environ.pop("DSH_CONTEXT_WINDOW", None)  # a valid --context-window would have set it
