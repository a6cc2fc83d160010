"""``session/info`` (what ``%dsh config`` shows) says what a live session's requests carry: the
output limit, the options, the tools, the timeouts, and the context window with its source —
``server`` when the endpoint reports it (asked once when the session starts), ``flag`` when given,
``catalog`` otherwise. Real Host, real HTTP to a loopback server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dsh_notebook.client.dsh_client import DshClient
from dsh_notebook.config import Settings
from dsh_notebook.launcher import new_host
from dsh_notebook.notebook.magic.subcommands import request_items
from tests.models.test_local_servers import ROUTES, json_server

__all__ = ["json_server"]


@pytest.fixture
def client(tmp_path: Path) -> Any:
    host = new_host(Settings(home=tmp_path / "home"), name="test-window")
    dsh = DshClient(host, caller="test")
    yield dsh
    dsh.close()
    host.shutdown()


def test_the_window_comes_from_the_server_and_the_plan_is_shown(
        client: DshClient, json_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DSH_CONTEXT_WINDOW", raising=False)
    url, routes, _ = json_server
    routes.update(ROUTES["llama.cpp"])
    created = client.create_session(cwd=str(tmp_path), model="m", approve="deny", base_url=url, max_tokens=64,
                                    options={"temperature": 0.2, "seed": 7}, tools="none", idle_timeout=30)
    info = client.info(created.session_id).request
    assert info is not None
    assert (info.context_window, info.window_source) == (4096, "server")
    assert (info.max_tokens, info.options, info.tools) == (64, {"temperature": 0.2, "seed": 7}, "none")
    assert (info.first_byte_timeout, info.idle_timeout) == (600.0, 30.0)  # loopback: a long first byte
    shown = request_items(info)
    assert shown["context window"] == "4096 tokens (from the server)"
    assert shown["request options"].startswith("temperature=0.2, seed=7")
    # later flags change the session from then on: options merge, null removes one
    client.resume(created.session_id, options={"temperature": None, "top_k": 40}, max_tokens=32, tools="read,grep")
    info = client.info(created.session_id).request
    assert info is not None
    assert (info.max_tokens, info.options, info.tools) == (32, {"seed": 7, "top_k": 40}, "read,grep")


def test_a_given_window_is_the_flag_and_an_unknown_server_falls_back_to_the_catalog(
        client: DshClient, json_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    url, _routes, _ = json_server  # answers no probe
    monkeypatch.delenv("DSH_CONTEXT_WINDOW", raising=False)
    known = client.create_session(cwd=str(tmp_path), model="deepseek-chat", approve="deny", base_url=url)
    info = client.info(known.session_id).request
    assert info is not None and info.window_source == "catalog" and info.context_window
    unknown = client.create_session(cwd=str(tmp_path), model="nobody-knows-me", approve="deny", base_url=url)
    info = client.info(unknown.session_id).request
    assert info is not None and (info.context_window, info.window_source) == (None, None)
    assert request_items(info)["context window"].startswith("unknown")
    monkeypatch.setenv("DSH_CONTEXT_WINDOW", "2048")
    info = client.info(unknown.session_id).request
    assert info is not None and (info.context_window, info.window_source) == (2048, "flag")


def test_bad_request_options_are_refused_before_a_session_exists(client: DshClient, tmp_path: Path) -> None:
    from dsh_notebook.errors import DshError

    for bad in ({"max_tokens": 0}, {"options": {"model": "x"}}, {"tools": "all,none"}, {"first_byte_timeout": -1}):
        with pytest.raises(DshError) as info:
            client.create_session(cwd=str(tmp_path), model="script:auto", approve="deny", **bad)
        assert info.value.code == "BAD_CONFIG", bad
    assert not list((tmp_path / "home" / "sessions").glob("*.jsonl"))
