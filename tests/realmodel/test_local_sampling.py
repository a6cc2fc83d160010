"""Issue 39 item 3 on the real model: on the route the agent builds (``prepare_request``: the card's
sampling first, ``--option`` over it), a plain question to ``local:smollm2`` with no tools and the
default output limit (a quarter of the server's context) completes — at least 4 of 5 answers end
``stop``, not at the limit. The answers' wording is not tested; that they end is.

The same question through a whole turn (the compact prompt of a small model's plain chat turn,
the runtime context in the system message) is ``test_plain_question.py``; the turn's request header
showing the card's sampling is checked there and in ``test_local_private.py``."""

from __future__ import annotations

import pytest

from dsh_notebook.agent.request import prepare_request
from dsh_notebook.config import settings_from_env
from dsh_notebook.models.base import Finish, ModelRequest
from dsh_notebook.models.routing import resolve_adapter
from dsh_notebook.wire.messages import user_text


async def test_a_plain_question_completes_in_at_least_four_of_five_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DSH_LOCAL_THREADS", "1")
    model = resolve_adapter(settings_from_env(), "local:smollm2")
    route = prepare_request("local:smollm2", adapter_for=lambda _id: model, config={})
    assert route.config == {"temperature": 0.2, "top_p": 0.9}
    reasons = []
    try:
        for _ in range(5):
            request = ModelRequest(provider="local", model="smollm2", messages=[user_text("Say hello in five words.")],
                                   config=route.config)
            chunks = [c async for c in model.stream(request)]
            assert isinstance(chunks[-1], Finish)
            reasons.append(chunks[-1].reason)
    finally:
        await model.aclose()
    assert reasons.count("stop") >= 4, reasons
