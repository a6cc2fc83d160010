"""The client's prompt typed end to end (issue 40 item 5): one ``PromptCommand``, built once and
checked once, by the same model the host's Gateway binds — so a bad prompt is refused once, with
the host's own code, before anything is recorded or sent."""

from __future__ import annotations

import pytest

from dsh_notebook.client.dsh_client import DshClient
from dsh_notebook.errors import HostError
from dsh_notebook.host.host import Host
from dsh_notebook.wire.base import dump
from dsh_notebook.wire.endpoints import MAX_REQUEST_ID, PromptArgs, PromptCommand, TextPart
from dsh_notebook.wire.events import UserMessageEvent
from tests.host.support import RawConn, events_of, wait_for


def _users(host: Host, sid: str) -> list[UserMessageEvent]:
    return [e for e in events_of(host, sid) if isinstance(e, UserMessageEvent) and e.message.source.kind == "user"]


@pytest.mark.parametrize(("text", "kwargs", "code"), [
    ("   ", {}, "EMPTY_CONTENT"),
    ("", {}, "EMPTY_CONTENT"),
    ("hi", {"mode": "now"}, "BAD_ARGS"),
    ("hi", {"request_id": "r" * (MAX_REQUEST_ID + 1)}, "BAD_ARGS"),
    ("hi", {"cell": {"executionCount": "three"}}, "BAD_ARGS"),
])
def test_a_bad_prompt_is_refused_once_before_anything_is_recorded_or_sent(
    host: Host, client: DshClient, text: str, kwargs: dict[str, object], code: str,
) -> None:
    sid = client.create_session().session_id
    handle = client.follow(sid)
    sent = len(client.connection.exchanges)
    with pytest.raises(HostError) as refused:
        client.prompt(text, sid, **kwargs)  # type: ignore[arg-type]
    assert refused.value.code == code
    assert len(client.connection.exchanges) == sent, "a refused prompt is never sent"
    assert handle.model.submissions == {}, "nor recorded as a submission the host could reject again"
    assert _users(host, sid) == []
    handle.close()


def test_the_client_refuses_with_the_code_and_words_the_host_answers_with(host: Host, client: DshClient) -> None:
    sid = client.create_session().session_id
    raw = RawConn(host)
    for i, text in enumerate(["", "  \n "]):
        reply = raw.call("session/prompt", {"request": {"sessionId": sid, "requestId": f"r{i}", "content": text}},
                         rpc_id=f"r{i}")
        error = reply["result"]["error"]
        with pytest.raises(HostError) as refused:
            client.prompt(text, sid, request_id=f"c{i}")
        assert (refused.value.code, refused.value.message) == (error["code"], error["message"]) == (
            "EMPTY_CONTENT", "the prompt is empty: give some text")
    reply = raw.call("session/prompt", {"request": {"sessionId": sid, "requestId": "img",
                                                    "content": [{"type": "image", "url": "x"}]}}, rpc_id="img")
    assert reply["result"]["error"]["code"] == "UNSUPPORTED_CONTENT"


def test_what_is_sent_is_the_command_as_built(host: Host, client: DshClient) -> None:
    sid = client.create_session().session_id
    receipt = client.prompt("hello", sid, request_id="req_1", cell={"cellId": "c-1", "executionCount": 3})
    assert receipt.accepted
    sent = client.remote.session.prompt.last
    assert sent is not None and sent.rpc_id == receipt.rpc_id
    command = PromptCommand(session_id=sid, request_id="req_1", content=(TextPart(text="hello"),),
                            cell={"cellId": "c-1", "executionCount": 3})  # type: ignore[arg-type]
    assert sent.request["payload"] == {"args": dump(PromptArgs(request=command))}
    (user,) = wait_for(lambda: _users(host, sid))  # the message enters with the turn it starts
    assert user.message.source.cell is not None and user.message.source.cell.execution_count == 3


def test_a_prompt_command_names_its_own_codes() -> None:
    """The model is the one check: its refusals carry the code (wire.base.error_code reads it)."""
    from pydantic import ValidationError

    from dsh_notebook.wire.base import error_code

    cases = [("  ", "EMPTY_CONTENT"), ((), "EMPTY_CONTENT"), (({"type": "image"},), "UNSUPPORTED_CONTENT"),
             (({"type": "text"},), "BAD_ARGS")]
    for content, code in cases:
        with pytest.raises(ValidationError) as bad:
            PromptCommand(session_id="s", request_id="r", content=content)  # type: ignore[arg-type]
        assert error_code(bad.value) is not None and error_code(bad.value)[0] == code, content  # type: ignore[index]
    ok = PromptCommand(session_id="s", request_id="r", content=(TextPart(text="a"), TextPart(text=""), TextPart(text="b")))
    assert [b.text for b in ok.blocks] == ["a", "b"]
