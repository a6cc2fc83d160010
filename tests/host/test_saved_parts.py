"""A large saved log replayed read-only (a widget's ``LoopWidget(path=…)``): read by its frames
only (``read_saved_fast``), sent as consecutive snapshot parts that fold, client side, into the
whole log; each part validated before it goes, so a bad line far down is still a coded
``LOG_CORRUPT`` — after the first rows, and nothing past it is sent."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from dsh_notebook.client.model import ClientSessionModel
from dsh_notebook.host.saved import FIRST_PART, PART, ReadOnlyController
from dsh_notebook.session.saved import FAST_MIN_EVENTS, read_saved, read_saved_fast
from dsh_notebook.wire.endpoints import FollowArgs
from dsh_notebook.wire.follow import FollowItemAdapter
from tests.benchmarks._widget_logs import write_log


class Sink:
    """Collects the stream's items; ``done`` is set at ``until`` events, an error or the end."""

    def __init__(self, until: int) -> None:
        self.items: list[Any] = []
        self.errors: list[BaseException] = []
        self.done = asyncio.Event()
        self.closed = False
        self.until = until

    def item(self, value: Any) -> None:
        self.items.append(json.loads(value.json))
        if sum(len(i["events"]) for i in self.items) >= self.until:
            self.done.set()

    def error(self, error: BaseException) -> None:
        self.errors.append(error)
        self.done.set()

    def end(self) -> None:
        self.done.set()


class Inv:
    def note(self, *_: Any) -> None:
        pass


async def follow(saved: Any, until: int) -> Sink:
    """Follow the saved log until ``until`` events arrived or the stream failed."""
    sink = Sink(until)
    ctl = ReadOnlyController.of_log(saved)
    close = await ctl.follow(FollowArgs(session_id=saved.session_id), Inv(), sink)  # type: ignore[arg-type]
    await sink.done.wait()
    close()
    return sink


@pytest.mark.scale
def test_a_large_log_arrives_in_parts_that_fold_into_the_whole_log(tmp_path: Path) -> None:
    n = FIRST_PART + PART + 500
    path = write_log(tmp_path / "big.jsonl", n, chained=True)
    fast, full = read_saved_fast(path), read_saved(path)
    assert not fast.checked and fast.lines == full.lines and fast.model == full.model == "script:bench"
    sink = asyncio.run(follow(fast, n))
    assert [len(i["events"]) for i in sink.items] == [FIRST_PART, PART, 500]
    assert [i["cursor"] for i in sink.items] == [FIRST_PART - 1, FIRST_PART + PART - 1, n - 1]
    model = ClientSessionModel()
    for item in sink.items:
        model.apply(FollowItemAdapter.validate_python(item))
    assert model.cursor == n - 1 and len(model.events) == n and not model.gap


def test_a_bad_line_far_down_is_a_coded_error_after_the_first_rows(tmp_path: Path) -> None:
    n = FIRST_PART + 3000
    path = write_log(tmp_path / "bad.jsonl", n, chained=True)
    lines = path.read_text().split("\n")
    bad = FIRST_PART + 1000  # an event line (line bad + 2 of the file): a frame that is not an event
    lines[bad + 1] = f'{{"seq":{bad},"time":1,"type":"no/such-event"}}'
    path.write_text("\n".join(lines))
    saved = read_saved_fast(path)
    assert not saved.checked  # the frames are fine; the event is not
    sink = asyncio.run(follow(saved, n))
    assert [len(i["events"]) for i in sink.items] == [FIRST_PART]
    assert len(sink.errors) == 1
    err = sink.errors[0]
    assert getattr(err, "code", None) == "LOG_CORRUPT" and f"line {bad + 2}" in str(err), err


def test_small_or_torn_logs_are_read_whole_as_before(tmp_path: Path) -> None:
    small = write_log(tmp_path / "small.jsonl", 100)
    assert read_saved_fast(small).checked
    torn = write_log(tmp_path / "torn.jsonl", FAST_MIN_EVENTS + 100, chained=True)
    torn.write_bytes(torn.read_bytes() + b'{"seq":')  # a crash mid-write
    saved = read_saved_fast(torn)
    assert saved.checked and saved.warnings and len(saved.lines) == FAST_MIN_EVENTS + 100
