"""Workspace confinement, the scrubbed environment and output caps — on a real filesystem."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dsh_notebook.errors import ToolError
from dsh_notebook.tools.sandbox import HeadTail, Workspace, cap_middle, scrubbed_env


def test_resolve_inside_relative_and_absolute(ws: Path) -> None:
    (ws / "src").mkdir()
    (ws / "src" / "a.txt").write_text("x")
    w = Workspace(ws)
    assert w.resolve("src/a.txt") == (ws / "src" / "a.txt").resolve()
    assert w.resolve(str(ws / "src" / "a.txt")) == (ws / "src" / "a.txt").resolve()
    assert w.resolve("src/../src/a.txt") == (ws / "src" / "a.txt").resolve()
    assert w.resolve(".") == w.root
    assert w.resolve("new/dir/file.txt") == w.root / "new" / "dir" / "file.txt"


@pytest.mark.parametrize("path", ["../outside.txt", "src/../../outside.txt", "/etc/passwd", "/"])
def test_resolve_refuses_escapes(ws: Path, path: str) -> None:
    (ws / "src").mkdir()
    with pytest.raises(ToolError) as info:
        Workspace(ws).resolve(path)
    assert info.value.code == "OUTSIDE_WORKSPACE"
    assert "outside the workspace" in info.value.message


def test_resolve_refuses_symlinks_out(ws: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("top secret")
    outside_dir = tmp_path / "outside"
    outside_dir.mkdir()
    (ws / "link.txt").symlink_to(secret)
    (ws / "linkdir").symlink_to(outside_dir)
    (ws / "dangling").symlink_to(tmp_path / "not-yet-there.txt")
    w = Workspace(ws)
    for path in ("link.txt", "linkdir", "linkdir/new.txt", "dangling"):
        with pytest.raises(ToolError) as info:
            w.resolve(path)
        assert info.value.code == "OUTSIDE_WORKSPACE", path


def test_symlink_inside_workspace_is_fine(ws: Path) -> None:
    (ws / "real.txt").write_text("ok")
    (ws / "alias.txt").symlink_to(ws / "real.txt")
    assert Workspace(ws).resolve("alias.txt") == (ws / "real.txt").resolve()


def test_workspace_root_given_through_a_symlink(ws: Path, tmp_path: Path) -> None:
    (tmp_path / "ws-link").symlink_to(ws)
    (ws / "a.txt").write_text("a")
    w = Workspace(tmp_path / "ws-link")
    assert w.resolve("a.txt") == (ws / "a.txt").resolve()
    assert w.resolve(str(tmp_path / "ws-link" / "a.txt")) == (ws / "a.txt").resolve()


def test_null_byte_path_is_a_coded_error(ws: Path) -> None:
    with pytest.raises(ToolError) as info:
        Workspace(ws).resolve("a\0b")
    assert info.value.code == "INVALID_PATH"


def test_scrubbed_env_removes_secrets_keeps_basics() -> None:
    base = {
        "PATH": "/usr/bin",
        "HOME": "/home/u",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TERM": "xterm",
        "OPENAI_API_KEY": "sk-1",
        "DEEPSEEK_API_KEY": "sk-2",
        "DSH_API_KEY": "sk-3",
        "GITHUB_TOKEN": "t",
        "HF_TOKEN": "t",
        "AWS_SECRET_ACCESS_KEY": "s",
        "AWS_ACCESS_KEY_ID": "a",
        "client_secret": "s",
        "DB_PASSWORD": "p",
        "ANTHROPIC_APIKEY": "k",
    }
    env = scrubbed_env(base)
    for kept in ("PATH", "HOME", "LANG", "LC_ALL", "TERM"):
        assert env[kept] == base[kept]
    leaked = [k for k in base if k in env and k not in ("PATH", "HOME", "LANG", "LC_ALL", "TERM")]
    assert leaked == []
    assert env["PAGER"] == "cat"


def test_scrubbed_env_defaults_to_process_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOME_SERVICE_API_KEY", "sk-abc")
    monkeypatch.setenv("DSH_TEST_PLAIN", "visible")
    env = scrubbed_env()
    assert "SOME_SERVICE_API_KEY" not in env
    assert env["DSH_TEST_PLAIN"] == "visible"
    assert env["PATH"] == os.environ["PATH"]


def test_cap_middle_keeps_head_and_tail() -> None:
    text = "HEAD" + "x" * 1000 + "TAIL"
    capped = cap_middle(text, 100)
    assert capped.startswith("HEAD") and capped.endswith("TAIL")
    assert "elided" in capped and len(capped) < 200
    assert cap_middle("short", 100) == "short"


def test_head_tail_buffer_bounds_memory_and_marks_the_gap() -> None:
    sink = HeadTail(head=10, tail=10)
    sink.write(b"0123456789")
    for _ in range(1000):
        sink.write(b"middle")
    sink.write(b"abcdefghij")
    assert sink.total == 10 + 6000 + 10
    assert len(sink._tail) <= 20
    text = sink.text()
    assert text.startswith("0123456789") and text.endswith("abcdefghij")
    assert "[... 6000 bytes elided" in text
    small = HeadTail(head=10, tail=10)
    small.write(b"hello world, fits")
    assert small.text() == "hello world, fits"
