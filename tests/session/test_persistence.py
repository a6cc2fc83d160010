"""JSONL logs: format, commit vs flush, permissions, torn tails and coded errors."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from dsh_notebook.errors import LogFormatError, SessionError
from dsh_notebook.session import Session, SessionLog, load_log
from dsh_notebook.wire.events import TurnStart
from tests.session.helpers import RawLog, new_session, tool_turn


def written(tmp_path: Path) -> tuple[Session, SessionLog, Path]:
    s = new_session("s_abc")
    path = tmp_path / "sessions" / "s_abc.jsonl"
    log = SessionLog(s, path)
    tool_turn(s, 1, ["c1", "c2"])
    log.flush()
    return s, log, path


def test_header_then_one_event_per_line(tmp_path: Path) -> None:
    s, log, path = written(tmp_path)
    lines = path.read_text().splitlines()
    assert json.loads(lines[0]) == {
        "type": "session", "version": 1, "id": "s_abc", "cwd": "/ws", "createdAt": 1_700_000_000_000,
    }  # fmt: skip
    assert lines[1:] == [s.line(k) for k in range(len(s))]
    assert [json.loads(x)["seq"] for x in lines[1:]] == list(range(len(s)))
    log.close()


def test_files_are_private(tmp_path: Path) -> None:
    _, log, path = written(tmp_path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    log.close()


def test_commit_is_in_memory_and_flush_makes_it_durable(tmp_path: Path) -> None:
    s, log, path = written(tmp_path)
    before = path.read_bytes()
    s.append(TurnStart(turn=2))
    assert path.read_bytes() == before and log.pending == 1
    log.flush()
    assert path.read_text().splitlines()[-1] == s.line(s.last_seq) and log.pending == 0
    assert log.flushed_seq == s.last_seq
    log.close()
    s.append(TurnStart(turn=3))  # after close the log no longer observes
    assert len(path.read_text().splitlines()) == len(s)  # header + all but the last


def test_round_trip_is_identity(tmp_path: Path) -> None:
    s, log, path = written(tmp_path)
    log.close()
    loaded = load_log(path)
    assert loaded.events == list(s.events)
    assert loaded.lines == [s.line(k) for k in range(len(s))]
    assert not loaded.torn_tail and loaded.warnings == []
    restored = Session.restore(loaded.id, loaded.events, lines=loaded.lines, mark_seed=False)
    assert list(restored.derive_messages()) == list(s.derive_messages())


def test_torn_last_line_is_dropped_and_reported(tmp_path: Path) -> None:
    s, log, path = written(tmp_path)
    log.close()
    good = path.read_bytes()
    path.write_bytes(good + b'{"seq":13,"time":17000000')
    loaded = load_log(path)
    assert loaded.torn_tail and len(loaded.events) == len(s) and loaded.good_bytes == len(good)
    assert "torn" in loaded.warnings[0]
    reopened = SessionLog.reopen(Session.restore("s_abc", loaded.events, mark_seed=False), loaded)
    reopened.session.append(TurnStart(turn=9))
    reopened.close()
    again = load_log(path)
    assert not again.torn_tail and len(again.events) == len(s) + 1


def test_complete_last_line_without_newline_is_kept(tmp_path: Path) -> None:
    s, log, path = written(tmp_path)
    log.close()
    path.write_bytes(path.read_bytes().rstrip(b"\n"))
    loaded = load_log(path)
    assert not loaded.torn_tail and len(loaded.events) == len(s) and not loaded.ends_with_newline
    log2 = SessionLog.reopen(Session.restore("s_abc", loaded.events, mark_seed=False), loaded)
    log2.session.append(TurnStart(turn=9))
    log2.close()
    assert len(load_log(path).events) == len(s) + 1


def _code(path: Path) -> LogFormatError:
    with pytest.raises(LogFormatError) as err:
        load_log(path)
    return err.value


def test_unknown_version_is_a_coded_error(tmp_path: Path) -> None:
    raw = RawLog()
    raw.header["version"] = 7
    raw.user("hi")
    assert _code(raw.write(tmp_path / "v.jsonl")).code == "LOG_VERSION"


def test_corrupt_middle_line_names_its_line(tmp_path: Path) -> None:
    raw = RawLog()
    for k in range(4):
        raw.user(f"m{k}")
    lines = raw.text().decode().splitlines()
    lines[2] = lines[2][:20]
    path = tmp_path / "c.jsonl"
    path.write_text("\n".join(lines) + "\n")
    err = _code(path)
    assert err.code == "LOG_CORRUPT" and "line 3" in err.message and err.details["line"] == 3


def test_seq_gap_is_corrupt(tmp_path: Path) -> None:
    raw = RawLog()
    raw.user("a")
    raw.user("b")
    raw.user("c")
    raw.events[1]["seq"] = 5
    err = _code(raw.write(tmp_path / "g.jsonl"))
    assert err.code == "LOG_CORRUPT" and "line 3" in err.message


@pytest.mark.parametrize(
    "content", [b"", b"\n", b'{"type":"sess', b'{"seq":0,"time":1,"type":"turn/start","turn":1}\n',
                b'{"type":"session","version":1}\n'],
    ids=["empty", "blank", "torn header", "no header", "no id"],
)  # fmt: skip
def test_missing_or_bad_header(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "h.jsonl"
    path.write_bytes(content)
    assert _code(path).code == "LOG_HEADER"


def test_missing_file(tmp_path: Path) -> None:
    assert _code(tmp_path / "nope.jsonl").code == "LOG_NOT_FOUND"


def test_unknown_event_type_in_the_middle_is_corrupt(tmp_path: Path) -> None:
    raw = RawLog()
    raw.user("a")
    raw.add("mystery/event", x=1)
    raw.user("b")
    err = _code(raw.write(tmp_path / "u.jsonl"))
    assert err.code == "LOG_CORRUPT" and "line 3" in err.message


def test_a_new_log_is_never_appended_to_a_file_that_holds_one(tmp_path: Path) -> None:
    """A second new session written to the path of a log (a test's file name reused, an id that
    collides) is refused: its seqs after another's would make the file unreadable past the first."""
    s, log, path = written(tmp_path)
    log.close()
    before = path.read_bytes()
    with pytest.raises(SessionError) as err:
        SessionLog(new_session("s_other"), path)
    assert err.value.code == "SESSION_EXISTS" and str(path) in err.value.message
    assert path.read_bytes() == before
    assert len(load_log(path).events) == len(s)
    # the lock was let go: the log is still resumable (`reopen` continues it)
    SessionLog.reopen(Session.restore(s.id, load_log(path).events, cwd="/ws"), load_log(path)).close()
