"""The host is given its observers and its checkpoint store (issue 40 item 4): ``Host(...)`` alone
records nothing but the log; the launcher's host indexes and checkpoints every turn; an observer
handed in sees every event of every live session and is detached when the host shuts down."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dsh_notebook.client.dsh_client import DshClient
from dsh_notebook.config import Settings
from dsh_notebook.errors import DshError
from dsh_notebook.host.host import Host
from dsh_notebook.host.parts import HostParts
from dsh_notebook.observe.indexer import index_writer
from dsh_notebook.observe.search import INDEX_NAME
from dsh_notebook.session.session import Session
from tests.host.support import Models, make_host


def one_turn(host: Host, cwd: Path) -> tuple[DshClient, str, list[str]]:
    """A turn of the offline model on ``host``; the client, the session id and the log's event types."""
    client = DshClient(host)
    out = client.run("hello", model="script:help", cwd=str(cwd))
    assert out.reason is not None and out.reason["kind"] == "completed"
    log = client.info(out.session_id).log_path
    assert log is not None
    return client, out.session_id, [line.split('"type":"', 1)[1].split('"', 1)[0] for line in Path(log).read_text().splitlines()[1:]]


def test_a_host_given_nothing_keeps_the_log_and_nothing_else(tmp_path: Path) -> None:
    home = tmp_path / "home"
    host = Host(Settings(home=home), adapter_factory=Models())
    client, sid, types = one_turn(host, tmp_path)
    try:
        assert "turn/end" in types
        assert not any(t.startswith("checkpoint/") for t in types)  # no checkpoint taken
        log = Path(client.info(sid).log_path or "")
        before = log.read_bytes()
        for call in (lambda: client.rewind(sid, to_turn=1), lambda: client.remote.session.diff(session_id=sid, turn=1)):
            with pytest.raises(DshError) as err:
                call()
            assert err.value.code == "CHECKPOINT_NOT_FOUND"
        assert log.read_bytes() == before  # refused before anything was written
    finally:
        client.close()
        host.shutdown()
    assert index_writer().wait_idle(60)  # (nothing queued for this home: no indexer was attached)
    assert not (home / INDEX_NAME).exists()
    assert not (home / "checkpoints").exists()


def test_the_launchers_host_indexes_and_checkpoints_every_turn(tmp_path: Path) -> None:
    home = tmp_path / "home"
    host = make_host(home)  # tests.host.support builds it through dsh_notebook.launcher.new_host
    client, sid, types = one_turn(host, tmp_path)
    try:
        assert types.count("checkpoint/taken") == 1 and "checkpoint/changes" in types
        assert client.remote.session.diff(session_id=sid, turn=1).files == ()  # the turn changed no file
    finally:
        client.close()
        host.shutdown()
    assert index_writer().wait_idle(60)  # the indexer works off the loop, batched
    assert (home / INDEX_NAME).is_file()
    assert (home / "checkpoints").is_dir()


def test_an_observer_handed_in_sees_every_event_and_is_detached_at_shutdown(tmp_path: Path) -> None:
    seen: list[tuple[str, Any]] = []

    def record(session: Session, *, home: Path, log_path: str) -> Callable[[], None]:
        seen.append(("attached", (session.id, Path(home), Path(log_path).name)))
        undo = session.subscribe(lambda event: seen.append(("event", event.type)))

        def detach() -> None:
            undo()
            seen.append(("detached", session.id))

        return detach

    home = tmp_path / "home"
    host = Host(Settings(home=home), adapter_factory=Models(), parts=HostParts(observers=(record,)))
    client, sid, types = one_turn(host, tmp_path)
    client.close()
    host.shutdown()
    assert seen[0] == ("attached", (sid, home, f"{sid}.jsonl"))
    assert [t for kind, t in seen if kind == "event"] == types  # every event, in order
    assert seen[-1] == ("detached", sid)


def test_a_bare_process_host_gets_the_real_parts_when_the_launcher_comes(tmp_path: Path) -> None:
    """A learner's ``Host.get().describe()`` before the first ``%dsh`` starts the process's host
    without parts; ``%dsh`` (through ``launcher.process_host``) then hands it the real ones, so its
    turns are still checkpointed and indexed — never a host that silently keeps nothing."""
    from dsh_notebook.launcher import process_host

    leftover = Host.current()
    if leftover is not None:
        leftover.shutdown()
    home = tmp_path / "home"
    bare = Host.get(Settings(home=home))
    try:
        assert bare.registry.parts.checkpoints is None
        assert process_host() is bare  # the same host, not a second one
        assert bare.registry.parts.checkpoints is not None and bare.registry.parts.observers
        given = bare.registry.parts
        process_host()
        assert bare.registry.parts is given  # a host that has parts keeps its own
        client, sid, types = one_turn(bare, tmp_path)
        client.close()
        assert types.count("checkpoint/taken") == 1
    finally:
        bare.shutdown()
