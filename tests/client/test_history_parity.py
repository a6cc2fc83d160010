"""The history the browser derives equals the Python one (issue 25 item 3): on every recorded real
run (``js/test/fixtures/streams``), for every ``request/frozen``, ``resolveMessageSeqs`` (with and
without its cache, ``js/src/model/diff.ts``) equals :func:`dsh_notebook.session.requests.
resolve_message_seqs`, and ``deriveMessages`` at that seq (``js/src/model/history.ts``) equals the
Session's ``derive_messages()`` over the same events — seqs and messages. (The cost figures are
compared on the same runs by ``test_stats_parity.py``.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dsh_notebook.session.requests import resolve_message_seqs
from dsh_notebook.session.session import Session
from dsh_notebook.wire.base import dump
from dsh_notebook.wire.events import AnyEvent, EventAdapter, RequestFrozen
from tests.client.parity import (
    each_recorded_run,
    first_difference,
    followed_events,
    js_driver,
    run_js,
)
from tests.fixtures.record_streams import load


@pytest.fixture(scope="module")
def js_history(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return js_driver(tmp_path_factory, "history-main.ts")


def python_history(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    parsed: list[AnyEvent] = [EventAdapter.validate_python(e) for e in events]
    out = []
    for ev in parsed:
        if not isinstance(ev, RequestFrozen):
            continue
        upto = [e for e in parsed if e.seq <= ev.seq]
        history = Session.restore("s_parity", upto, cwd="/", mark_seed=False).derive_messages()
        resolved = resolve_message_seqs(parsed, ev.seq)
        derived = [{"seq": s, "message": dump(m)} for s, m in zip(history.seqs, history, strict=True)]
        out.append({"seq": ev.seq, "resolved": resolved, "resolvedCached": resolved, "derived": derived})
    return out


@each_recorded_run
def test_js_history_equals_python_on_recorded_runs(js_history: Path, tmp_path: Path, fixture: Path) -> None:
    events = followed_events(load(fixture))
    assert events and [e["seq"] for e in events] == list(range(len(events))), fixture.name  # the whole log
    js = run_js(js_history, tmp_path, {"events": events})
    py = python_history(events)
    assert py and any(r["derived"] for r in py)
    assert js == py, first_difference(py, js)
