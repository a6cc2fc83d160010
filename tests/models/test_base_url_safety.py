"""Base URLs (issue 16, low items): credentials in them are never logged or printed, and a
malformed one (or one with a NUL) is a coded ``BAD_BASE_URL``, never ``INTERNAL``."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import pytest

from dsh_notebook.config import check_base_url, redact_url
from dsh_notebook.errors import UserError
from tests.host.support import RawConn, make_host
from tests.support.cli import dsh

REPO = Path(__file__).resolve().parents[2]
PASSWORD = "hunter2-very-secret"
TOKEN = "tok-0123456789abcdef"


@pytest.mark.parametrize(("url", "shown"), [
    ("http://bob:pw@host:8000/v1", "http://bob:***@host:8000/v1"),
    ("https://ghp_abcdefgh@host/v1", "https://***@host/v1"),
    ("http://h/v1?token=abc&model=x&api_key=k&key=z", "http://h/v1?token=***&model=x&api_key=***&key=***"),
    ("http://localhost:11434/v1", "http://localhost:11434/v1"),
    ("http://[::1/v1?token=abc", "http://[::1/v1?***"),
])
def test_redact_url(url: str, shown: str) -> None:
    assert redact_url(url) == shown


@pytest.mark.parametrize("url", ["http://[::1/v1", "ftp://host/v1", "localhost:8000", "http://h\x00ost/v1",
                                 "http://host:99999/v1", "http://host\n/v1", ""])
def test_bad_base_urls_are_coded(url: str) -> None:
    with pytest.raises(UserError) as err:
        check_base_url(url)
    assert err.value.code == "BAD_BASE_URL"
    assert "\x00" not in err.value.message


def test_credentials_in_the_base_url_reach_no_output_and_no_log(tmp_path: Path) -> None:
    with socket.socket() as s:  # a port with nobody listening: every attempt fails CONNECTION
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://bob:{PASSWORD}@127.0.0.1:{port}/v1?api_key={TOKEN}"
    home = tmp_path / "home"
    env = {**os.environ, "DSH_HOME": str(home), "PYTHONPATH": str(REPO), "DSH_TIMEOUT": "1"}
    done = dsh("run", "--model", "m", "--base-url", url, "--cwd", str(tmp_path), "hi", env=env, timeout=120)
    assert done.returncode == 1, done.stderr
    assert "CONNECTION" in done.stderr and "bob:***@127.0.0.1" in done.stderr
    logs = list((home / "sessions").glob("*.jsonl"))
    text = done.stdout + done.stderr + "".join(p.read_text() for p in logs)
    assert PASSWORD not in text and TOKEN not in text
    header = next(json.loads(line) for line in logs[0].read_text().splitlines() if '"request/header"' in line)
    assert header["endpoint"] == f"http://bob:***@127.0.0.1:{port}/v1?api_key=***"
    # resuming without the URL: it is needed again, and said so (nothing sent to a masked URL)
    again = dsh("run", "--session", logs[0].stem, "hi", env=env, timeout=120)
    assert again.returncode != 0 and "BASE_URL_NEEDED" in again.stderr


def test_a_malformed_base_url_on_the_cli_is_coded(tmp_path: Path) -> None:
    env = {**os.environ, "DSH_HOME": str(tmp_path / "home"), "PYTHONPATH": str(REPO)}
    done = dsh("run", "--model", "m", "--base-url", "http://[::1/v1", "--cwd", str(tmp_path), "hi", env=env, timeout=120)
    assert done.returncode == 2 and "BAD_BASE_URL" in done.stderr and "Traceback" not in done.stderr


def test_a_nul_in_base_url_on_the_wire_is_coded(tmp_path: Path) -> None:
    host = make_host(tmp_path / "home")
    try:
        conn = RawConn(host)
        reply = conn.call("session/create", {"model": "m", "baseUrl": "http://local\x00host/v1"})
        assert reply["result"]["ok"] is False and reply["result"]["error"]["code"] == "BAD_BASE_URL"
        assert conn.call("session/list", {}, rpc_id="r2")["result"]["ok"] is True
    finally:
        host.shutdown()


def test_config_shows_the_base_url_masked_and_errors_never_quote_its_secrets() -> None:
    from dsh_notebook.config import Settings, settings_from_env
    from dsh_notebook.errors import redact

    url = f"http://bob:{PASSWORD}@h:1/v1?token={TOKEN}"
    settings = settings_from_env({"DSH_BASE_URL": url, "DSH_HOME": "/tmp/x"})
    assert settings.describe()["base_url"] == "http://bob:***@h:1/v1?token=***"
    assert PASSWORD not in redact(f"connect to {url} failed: {PASSWORD} {TOKEN}")
    assert TOKEN not in redact(f"echo {TOKEN}")
    assert Settings(base_url="http://[::1").describe()["base_url"] == "http://[::1"
