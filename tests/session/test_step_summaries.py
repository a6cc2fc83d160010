"""The compare widget's per-step summaries in one pass (session/request_index.step_summaries) say
what the materialising path says — per (turn, step) the last request attempt, how many messages it
carried and the last of them — on flat and chained logs written through the real Session."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dsh_notebook.analysis.compare import steps_of
from dsh_notebook.errors import SessionError
from dsh_notebook.session.persistence import load_log
from dsh_notebook.session.request_index import step_summaries
from dsh_notebook.wire.events import RequestFrozen
from tests.benchmarks._widget_logs import write_log


def _exact(events: list[Any]) -> dict[Any, Any]:
    return {(p.turn, p.step): (p.seq, p.model_id, len(p.messages), p.messages[-1] if p.messages else None,
                               p.response_seq) for p in steps_of(events)}


def _linear(events: list[Any]) -> dict[Any, Any]:
    return {k: (s.ref.seq, s.ref.model_id, s.messages, s.last, s.ref.response_seq)
            for k, s in step_summaries(events).items()}


@pytest.mark.parametrize("chained", [False, True])
def test_one_pass_equals_the_materialised_requests(tmp_path: Path, chained: bool) -> None:
    events = list(load_log(write_log(tmp_path / "s_steps.jsonl", 600, chained=chained)).events)
    exact = _exact(events)
    assert len(exact) > 50 and max(v[2] for v in exact.values()) > 20  # real turns, long requests
    assert _linear(events) == exact


def test_a_bad_base_request_is_a_coded_error(tmp_path: Path) -> None:
    events = list(load_log(write_log(tmp_path / "s_bad.jsonl", 200, chained=True)).events)
    i = next(i for i, e in enumerate(events) if isinstance(e, RequestFrozen) and e.base_request_seq is not None)
    events[i] = events[i].model_copy(update={"base_request_seq": i + 1})
    with pytest.raises(SessionError) as err:
        step_summaries(events)
    assert err.value.code == "BAD_BASE_REQUEST"
