"""A stream that ends cleanly with neither ``finish_reason`` nor ``[DONE]`` is an incomplete
attempt (issue 16, item 7): retried like a cut connection, then a coded error — never a completed
answer. Real SDK, real sockets; the loopback server ends the HTTP body properly, just early."""

from __future__ import annotations

from dsh_notebook.agent.agent import Agent
from dsh_notebook.agent.config import AgentConfig
from dsh_notebook.models.accumulator import StreamCutError
from dsh_notebook.models.base import Finish
from dsh_notebook.models.openai_compat import OpenAICompatAdapter
from dsh_notebook.session.session import Session
from dsh_notebook.tools.registry import ToolRegistry, builtin_tools
from dsh_notebook.wire.events import AssistantAttempt, AssistantMessageEvent, LlmRetry, TurnEnd
from tests.models.streams import collect, request
from tests.models.test_openai_errors import failure
from tests.support.fake_openai import FakeOpenAIServer, text_reply, tool_call_reply


def incomplete(text: str = "The answer is") -> object:
    return text_reply(text, finish=None, done=False, usage=None)


async def test_no_finish_reason_and_no_done_is_stream_incomplete(
        fake_openai: FakeOpenAIServer, adapter: OpenAICompatAdapter) -> None:
    fake_openai.enqueue(incomplete())
    err = await failure(adapter)
    assert isinstance(err, StreamCutError) and err.code == "STREAM_INCOMPLETE" and err.retryable
    assert "neither a finish reason nor [DONE]" in err.message
    assert [b.text for b in err.partial_blocks] == ["The answer is"]  # type: ignore[attr-defined]


async def test_done_without_a_finish_reason_or_a_finish_reason_without_done_is_complete(
        fake_openai: FakeOpenAIServer, adapter: OpenAICompatAdapter) -> None:
    fake_openai.enqueue(text_reply("local server", finish=None), text_reply("no marker", done=False),
                        tool_call_reply([("c1", "read", '{"file_path": "a"}')], finish=None))
    for _ in range(3):
        chunks = await collect(adapter, request())
        assert isinstance(chunks[-1], Finish)


async def test_the_agent_retries_an_incomplete_stream_then_gives_a_coded_error(
        fake_openai: FakeOpenAIServer, adapter: OpenAICompatAdapter) -> None:
    fake_openai.enqueue(incomplete(), text_reply("The answer is 42."))
    agent = Agent(Session("s_inc", cwd="/tmp"), AgentConfig(model="openai:fake-model", retry_base_ms=1, max_retries=1),
                  adapter_for=lambda _m: adapter, tools=ToolRegistry(builtin_tools()))
    agent.followup("what is the answer?")
    await agent.wait_idle()
    s = agent.session
    assert [e.error.code for e in s.events if isinstance(e, AssistantAttempt)] == ["STREAM_INCOMPLETE"]
    assert [e.error.code for e in s.events if isinstance(e, LlmRetry)] == ["STREAM_INCOMPLETE"]
    answers = [e.message.text for e in s.events if isinstance(e, AssistantMessageEvent)]
    assert answers == ["The answer is 42."]  # the cut answer never became a message
    fake_openai.enqueue(incomplete(), incomplete())
    agent.followup("again")
    await agent.wait_idle()
    end = [e for e in s.events if isinstance(e, TurnEnd)][-1]
    assert end.reason.kind == "error" and end.reason.error is not None
    assert end.reason.error.code == "STREAM_INCOMPLETE"
    assert len([e for e in s.events if isinstance(e, AssistantMessageEvent)]) == 1
