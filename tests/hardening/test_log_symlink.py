"""Issue 21 (low): a session log that is a symbolic link (or a hard link) was followed: its
target's mode changed and lines were appended outside ``$DSH_HOME``. Now ``LOG_NOT_REGULAR``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dsh_notebook.errors import SessionError
from dsh_notebook.session.store import SessionStore


def saved_log(home: Path) -> Path:
    store = SessionStore(home)
    store.create(session_id="s_victim")
    store.close_all()
    path = home / "sessions" / "s_victim.jsonl"
    path.chmod(0o644)
    return path


def test_resuming_a_symlinked_log_is_refused_and_its_target_untouched(tmp_path: Path) -> None:
    target = saved_log(tmp_path / "elsewhere")
    before = target.read_bytes()
    home = tmp_path / "home"
    (home / "sessions").mkdir(parents=True)
    (home / "sessions" / "s_link.jsonl").symlink_to(target)
    with pytest.raises(SessionError) as err:
        SessionStore(home).resume("s_link")
    assert err.value.code == "LOG_NOT_REGULAR" and "symbolic link" in err.value.message
    assert target.read_bytes() == before and (target.stat().st_mode & 0o777) == 0o644


def test_creating_a_session_through_a_dangling_symlink_writes_nothing_outside(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "sessions").mkdir(parents=True)
    outside = tmp_path / "outside.jsonl"
    (home / "sessions" / "s_new.jsonl").symlink_to(outside)
    with pytest.raises(SessionError) as err:
        SessionStore(home).create(session_id="s_new")
    assert err.value.code == "LOG_NOT_REGULAR"
    assert not outside.exists()


def test_a_hard_linked_log_is_refused(tmp_path: Path) -> None:
    target = saved_log(tmp_path / "elsewhere")
    home = tmp_path / "home"
    (home / "sessions").mkdir(parents=True)
    os.link(target, home / "sessions" / "s_hard.jsonl")
    before = target.read_bytes()
    with pytest.raises(SessionError) as err:
        SessionStore(home).resume("s_hard")
    assert err.value.code == "LOG_NOT_REGULAR" and "hard links" in err.value.message
    assert target.read_bytes() == before
