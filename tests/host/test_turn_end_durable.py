"""A follower that sees a ``turn/end`` can read it in the log file (host/follow.py): the hub
holds the turn end until the flush that carries it has finished.

The disk is made slow at the storage boundary: the session store's flush (the real write +
fsync) waits, for the flush that carries a turn/end, until the test lets it through. Nothing of
the agent or the hub is replaced. Every flush counts as slow, so each runs on a worker thread
and the host loop stays free (agent/durable.py), as on a real disk.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from dsh_notebook.agent import durable
from dsh_notebook.client.dsh_client import DshClient
from dsh_notebook.errors import LogWriteError
from dsh_notebook.host.host import Host
from dsh_notebook.testing.models import CannedModel, text_chunks
from dsh_notebook.wire.events import TurnEnd

from .support import Models


@dataclass
class SlowDisk:
    """The store's flush, where the flush that carries a turn/end waits for ``release``
    (``fail``: then it raises DISK_FULL instead of writing)."""

    host: Host
    release: threading.Event = field(default_factory=threading.Event)
    holding: threading.Event = field(default_factory=threading.Event)
    fail: bool = False

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        store = self.host.registry.store
        real = store.flush

        def flush(session_id: str) -> None:
            live = self.host.registry.live.get(session_id)
            events = live.session.events if live is not None else []
            if events and isinstance(events[-1], TurnEnd) and store.log(session_id).flushed_seq < events[-1].seq:
                self.holding.set()
                assert self.release.wait(60), "the test never released the disk"
                if self.fail:
                    raise LogWriteError("no space left on device", code="DISK_FULL")
            real(session_id)

        monkeypatch.setattr(store, "flush", flush)
        monkeypatch.setattr(durable, "FAST_FLUSH_S", 0.0)  # a disk: no flush is quick enough to run inline
        monkeypatch.setattr(durable.PROCESS_FLUSH_SPEED, "streak", 0)


@pytest.fixture
def disk(host: Host, models: Models, monkeypatch: pytest.MonkeyPatch) -> Iterator[SlowDisk]:
    models.fakes["m"] = CannedModel(text_chunks("the answer is 42"))
    slow = SlowDisk(host)
    slow.install(monkeypatch)
    yield slow
    slow.release.set()


def turn_ends_on_disk(path: str) -> list[int]:
    lines = Path(path).read_text(encoding="utf-8").splitlines()[1:]
    return [e["seq"] for e in map(json.loads, lines) if e["type"] == "turn/end"]


def test_a_follower_sees_the_turn_end_only_once_it_is_in_the_log_file(client: DshClient, disk: SlowDisk) -> None:
    sid = client.create_session(model="fake:m").session_id
    path = client.info(sid).log_path
    seen_on_disk: list[tuple[int, list[int]]] = []  # (turn/end seq as it arrived, the file's turn ends then)
    seen = threading.Event()

    def on_frame(item: dict[str, Any], _model: Any) -> None:  # on the client's delivery thread
        if item["type"] == "event" and item["event"]["type"] == "turn/end":
            seen_on_disk.append((item["event"]["seq"], turn_ends_on_disk(path)))
            seen.set()

    idle_then: list[list[int]] = []  # the file's turn ends when the control stream said idle
    went_idle = threading.Event()

    def on_control(item: dict[str, Any]) -> None:
        if item["type"] == "status" and item["sessionId"] == sid and item["status"] == "idle":
            idle_then.append(turn_ends_on_disk(path))
            went_idle.set()

    control = client.control(on_control)
    handle = client.follow(sid, on_frame=on_frame)
    handle.wait_snapshot()
    receipt = client.prompt("what is the answer?", sid)
    assert disk.holding.wait(30)  # turn/end is committed; the flush that carries it is on the disk
    # a round trip on the same connection: the client has folded every item sent before the reply
    client.connection.call("session/list", {})
    assert handle.model.turn_ends == [] and seen_on_disk == []
    assert handle.model.status == "running" and idle_then == []  # idle means the turn end is written
    assert turn_ends_on_disk(path) == []  # the disk is slow indeed: not written yet
    info = client.info(sid)
    assert info.status == "idle"  # the turn is over: a command (a rewind) may go ahead
    # the last seq it names is what a follower may see, so a follow from it (the next %dsh cell's
    # "only what comes next") is accepted, and the events page ends there too
    assert info.last_seq == handle.model.cursor
    nxt = client.follow(sid, cursor=info.last_seq)
    nxt.wait_snapshot()
    assert client.remote.session.events(session_id=sid, since_seq=-1).last_seq == info.last_seq
    late = client.follow(sid)  # a follower that comes now gets no turn end in its snapshot either,
    late.wait_snapshot()  # and its live part is the run as it was before the turn end
    assert late.model.turn_ends == [] and late.model.status == "running"
    again = client.follow(sid, cursor=late.model.cursor)  # nor a follower that resumes from there
    again.wait_snapshot()
    assert again.model.turn_ends == [] and again.model.status == "running"
    # nor the session's pages (what a widget holding a window of it reads)
    held = client.remote.session.page(session_id=sid, query={"kind": "rows", "limit": 1000}).page
    assert held.count == late.model.cursor + 1 and "turn/end" not in [r.event.model_dump()["type"] for r in held.rows]

    disk.release.set()
    outcome = handle.wait_turn_end(receipt.request_id, timeout=60)
    assert outcome.completed and outcome.final_answer == "the answer is 42"
    seq = handle.model.turn_ends[0]["seq"]
    assert seen.wait(30)  # on_frame runs after the model folded the item
    assert seen_on_disk == [(seq, [seq])]  # when it arrived, it was in the file
    assert late.wait_turn_end(receipt.request_id, timeout=60).turn == outcome.turn
    assert [e.seq for e in late.model.events] == [e.seq for e in handle.model.events]  # nothing lost, no gap
    handle.wait(lambda m: m.status == "idle", timeout=30)  # the status after it follows it
    assert again.wait(lambda m: m.turn_ends, timeout=60)[0]["seq"] == seq  # from its cursor on, no gap
    assert not again.model.gap
    assert went_idle.wait(30) and idle_then == [[seq]]  # the control stream's idle: after the write too
    written = client.remote.session.page(session_id=sid, query={"kind": "rows", "limit": 1000}).page
    assert [r.event.model_dump()["type"] for r in written.rows][-1] == "turn/end" and written.count == seq + 1
    assert nxt.wait(lambda m: m.turn_ends, timeout=60)[0]["seq"] == seq  # the held turn end reaches it
    for follow in (handle, late, again, nxt):
        follow.close()
    control.close()


def test_a_turn_end_the_disk_refuses_still_reaches_the_follower(client: DshClient, disk: SlowDisk) -> None:
    disk.fail = True
    disk.release.set()
    sid = client.create_session(model="fake:m").session_id
    outcome = client.run("what is the answer?", sid, timeout=60)  # no follower waits on a refusing disk
    assert outcome.completed and outcome.final_answer == "the answer is 42"
    assert turn_ends_on_disk(client.info(sid).log_path) == []  # it was refused: queued for the next flush
