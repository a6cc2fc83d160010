"""prepare_request / build_request: header on change, frozen messageSeqs (delta chain), flush."""

from __future__ import annotations

from dsh_notebook.agent.request import RequestBuilder, prepare_request
from dsh_notebook.session.requests import resolve_message_seqs
from dsh_notebook.session.session import Session
from dsh_notebook.wire.events import (
    AssistantMessageEvent,
    RequestFrozen,
    RequestHeader,
    ToolCall,
    ToolSchema,
    UserMessageEvent,
)
from dsh_notebook.wire.messages import AssistantMessage, ToolCallBlock, user_text

from .fakes import ChunkModel, calls, echo_tool, make_agent, reload, text

TOOLS = (ToolSchema(name="t", description="d", parameters={"type": "object"}),)


def test_prepare_request_routes_provider_and_model() -> None:
    seen: list[str] = []
    model = ChunkModel()
    prepared = prepare_request("deepseek:deepseek-chat", adapter_for=lambda m: seen.append(m) or model,
                               config={"max_tokens": 100})
    assert (prepared.provider, prepared.model, prepared.adapter) == ("deepseek", "deepseek-chat", model)
    assert seen == ["deepseek:deepseek-chat"] and prepared.header_config()["max_tokens"] == 100


def test_header_initial_change_and_resume() -> None:
    session = Session("s")
    builder = RequestBuilder(session)
    prepared = prepare_request("fake:a", adapter_for=lambda m: ChunkModel())
    builder.build_request(prepared, tools=TOOLS, turn=1, step=1, entered=[user_text("hi")])
    builder.build_request(prepared, tools=TOOLS, turn=1, step=2)
    builder.build_request(prepare_request("fake:b", adapter_for=lambda m: ChunkModel()), tools=TOOLS, turn=1, step=3)
    headers = [e for e in session.events if isinstance(e, RequestHeader)]
    assert [h.reason for h in headers] == ["initial", "change"] and headers[1].config["model"] == "b"
    resumed = reload(session)
    RequestBuilder(resumed).build_request(prepared, tools=TOOLS, turn=2, step=1)
    assert [e for e in resumed.events if isinstance(e, RequestHeader)][-1].reason == "resume"


def test_entered_messages_only_on_first_attempt_and_flush_per_request() -> None:
    session = Session("s")
    flushes: list[int] = []
    builder = RequestBuilder(session, flush=lambda: flushes.append(session.last_seq))
    prepared = prepare_request("fake:a", adapter_for=lambda m: ChunkModel())
    for attempt in (1, 2):
        builder.build_request(prepared, tools=(), turn=1, step=1, attempt=attempt, entered=[user_text("once")])
    assert sum(isinstance(e, UserMessageEvent) for e in session.events) == 1
    frozen = [e.seq for e in session.events if isinstance(e, RequestFrozen)]
    assert flushes == frozen  # flushed right after each request/frozen, before the adapter


def test_message_seqs_are_a_delta_chain_that_resolves_to_the_full_history() -> None:
    session = Session("s")
    builder = RequestBuilder(session)
    prepared = prepare_request("fake:a", adapter_for=lambda m: ChunkModel())
    r1 = builder.build_request(prepared, tools=(), turn=1, step=1, entered=[user_text("a")])
    session.append(AssistantMessageEvent(turn=1, step=1, message=AssistantMessage(content=())))
    session.append(UserMessageEvent(message=user_text("b")))
    builder.build_request(prepared, tools=(), turn=1, step=2)
    f1, f2 = [e for e in session.events if isinstance(e, RequestFrozen)]
    assert f1.base_request_seq is None and f2.base_request_seq == f1.seq
    assert len(f2.message_seqs) == 1  # only what was added (the empty assistant is not a message)
    assert resolve_message_seqs(session.events, f2.seq) == session.derive_messages().seqs
    assert len(r1.messages) == 1
    # after a replace the history no longer extends the previous one: the full list again
    first_user = f1.message_seqs[0]
    session.append(UserMessageEvent(message=user_text("summary"), surface_op={"start_seq": first_user, "end_seq": first_user},
                                    source_event_seqs=(first_user,)))
    builder.build_request(prepared, tools=(), turn=1, step=3)
    f3 = [e for e in session.events if isinstance(e, RequestFrozen)][-1]
    assert f3.base_request_seq is None and list(f3.message_seqs) == session.derive_messages().seqs


def test_pairing_is_repaired_at_the_boundary_and_logged() -> None:
    session = Session("s")
    session.append(UserMessageEvent(message=user_text("go")))
    call = ToolCallBlock(id="c9", name="read", arguments="{}")
    session.append(AssistantMessageEvent(turn=1, step=1, message=AssistantMessage(content=(call,))))
    session.append(ToolCall(turn=1, step=1, call_id="c9", name="read", arguments="{}"))
    builder = RequestBuilder(session)
    request = builder.build_request(prepare_request("fake:a", adapter_for=lambda m: ChunkModel()), tools=(), turn=1, step=2)
    frozen = builder.last_frozen
    assert frozen is not None and frozen.repairs and frozen.repairs[0].kind == "synthetic-result"
    assert request.messages[-1].role == "tool" and request.messages[-1].is_error


async def test_agent_requests_log_header_once_and_tools_sorted() -> None:
    model = ChunkModel(calls(("c1", "echo", '{"text":"x"}')), text("ok"))
    agent = make_agent(model, echo_tool())
    agent.followup("go")
    await agent.wait_idle()
    headers = [e for e in agent.session.events if isinstance(e, RequestHeader)]
    assert len(headers) == 1 and [t.name for t in headers[0].tools] == ["echo"]
    assert [t.name for t in model.requests[0].tools] == ["echo"]
    assert model.requests[0].messages[0].role == "system"


def test_first_request_after_resume_extends_the_logged_one() -> None:
    session = Session("s")
    prepared = prepare_request("fake:a", adapter_for=lambda m: ChunkModel())
    RequestBuilder(session).build_request(prepared, tools=(), turn=1, step=1, entered=[user_text("a")])
    resumed = reload(session)
    resumed.append(UserMessageEvent(message=user_text("b")))
    builder = RequestBuilder(resumed)
    builder.build_request(prepared, tools=(), turn=2, step=1)
    f1, f2 = [e for e in resumed.events if isinstance(e, RequestFrozen)]
    assert f2.base_request_seq == f1.seq and len(f2.message_seqs) == 1
    assert resolve_message_seqs(resumed.events, f2.seq) == resumed.derive_messages().seqs
