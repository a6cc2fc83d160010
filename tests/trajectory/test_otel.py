"""OpenTelemetry export against a REAL OTLP/HTTP receiver on loopback (protobuf decoded with
``opentelemetry-proto``): a live CLI run, ``export-otel`` of its saved log, content opt-in, and
approval waits — turn → step → request / tool spans with the GenAI attributes."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path
from typing import Any

from dsh_notebook.agent.agent import Agent
from dsh_notebook.analysis.stats import session_stats
from dsh_notebook.demo import copy_demo_workspace
from dsh_notebook.models.openai_compat import OpenAICompatAdapter
from dsh_notebook.observe.otel import export_session
from dsh_notebook.session.session import Session
from dsh_notebook.tools.base import ApprovalRequest
from tests.support.cli import dsh
from tests.support.fake_openai import FakeOpenAIServer
from tests.support.fake_openai_chunks import text_reply, tool_call_reply
from tests.support.otlp_receiver import OTLPReceiver, ReceivedSpan

REPO = Path(__file__).resolve().parents[2]
USAGE_1 = {"prompt_tokens": 900, "completion_tokens": 30, "total_tokens": 930}
USAGE_2 = {"prompt_tokens": 1000, "completion_tokens": 12, "total_tokens": 1012}
SECRET_WORD = "marmalade-7731"


def cli(*args: str, home: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    full = {**base, "DSH_HOME": str(home), "PYTHONPATH": str(REPO), "DSH_API_KEY": FakeOpenAIServer.api_key or "",
            "OTEL_BSP_SCHEDULE_DELAY": "100", **env}
    return dsh(*args, env=full, timeout=120)


def tree(spans: list[ReceivedSpan]) -> list[tuple[str, str | None]]:
    by_id = {s.span_id: s for s in spans}
    return sorted((s.name, by_id[s.parent_id].name if s.parent_id in by_id else None) for s in spans)


def comparable(spans: list[ReceivedSpan]) -> list[tuple[Any, ...]]:
    return sorted((s.name, s.start_ns, s.end_ns, tuple(sorted(s.attributes.items()))) for s in spans)


def live_run(tmp_path: Path, receiver: OTLPReceiver) -> tuple[str, Path]:
    ws = copy_demo_workspace(tmp_path / "ws")
    (ws / "notes.txt").write_text(f"the word is {SECRET_WORD}\n")
    with FakeOpenAIServer() as server:
        server.enqueue(
            tool_call_reply([("call_1", "read", json.dumps({"file_path": "notes.txt"}))], usage=USAGE_1),
            text_reply("The notes hold one word.", usage=USAGE_2),
        )
        done = cli("run", "--model", "fake-model", "--base-url", server.base_url, "--cwd", str(ws), "read notes.txt",
                   home=tmp_path / "home", env={"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint})
    assert done.returncode == 0, done.stderr
    last = done.stdout.strip().splitlines()[-1]
    return last.split()[1], Path(last.split(" log: ")[1])


def test_live_run_and_export_otel_send_the_same_span_tree(tmp_path: Path) -> None:
    with OTLPReceiver() as live:
        sid, log = live_run(tmp_path, live)
    spans = live.spans
    assert tree(spans) == sorted([
        ("invoke_agent dsh", None), ("step 1", "invoke_agent dsh"), ("step 2", "invoke_agent dsh"),
        ("chat fake-model", "step 1"), ("execute_tool read", "step 1"), ("chat fake-model", "step 2"),
    ])
    assert len({s.trace_id for s in spans}) == 1
    assert all(s.attributes["gen_ai.conversation.id"] == sid for s in spans)
    chats = sorted((s for s in spans if s.name.startswith("chat")), key=lambda s: s.start_ns)
    assert [(c.attributes["gen_ai.usage.input_tokens"], c.attributes["gen_ai.usage.output_tokens"]) for c in chats] == [
        (900, 30), (1000, 12)]
    assert all(c.attributes["gen_ai.operation.name"] == "chat" and c.attributes["gen_ai.request.model"] == "fake-model"
               and c.attributes["gen_ai.provider.name"] == "openai" for c in chats)
    (tool,) = [s for s in spans if s.name == "execute_tool read"]
    assert tool.attributes["gen_ai.tool.name"] == "read" and tool.attributes["gen_ai.tool.call.id"] == "call_1"
    assert tool.attributes["gen_ai.operation.name"] == "execute_tool"
    (turn,) = [s for s in spans if s.parent_id == b""]
    assert (turn.attributes["gen_ai.usage.input_tokens"], turn.attributes["gen_ai.usage.output_tokens"]) == (1900, 42)
    # span times are the log's times
    events = [json.loads(line) for line in log.read_text().splitlines()[1:]]
    frozen = [e for e in events if e["type"] == "request/frozen"]
    assert [c.start_ns for c in chats] == [e["time"] * 1_000_000 for e in frozen]
    turn_start = next(e for e in events if e["type"] == "turn/start")
    assert turn.start_ns == turn_start["time"] * 1_000_000
    # content only on opt-in; keys never
    flat = json.dumps([s.attributes for s in spans], default=str)
    assert SECRET_WORD not in flat and "gen_ai.input.messages" not in flat
    assert (FakeOpenAIServer.api_key or "sk-") not in flat

    with OTLPReceiver() as saved:
        done = cli("export-otel", sid, home=tmp_path / "home", env={"OTEL_EXPORTER_OTLP_ENDPOINT": saved.endpoint})
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout) == {"sessionId": sid, "spans": 6}
    assert comparable(saved.spans) == comparable(spans) and tree(saved.spans) == tree(spans)

    with OTLPReceiver() as content:
        done = cli("export-otel", str(log), home=tmp_path / "home",
                   env={"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": content.endpoint + "/v1/traces",
                        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true"})
        assert done.returncode == 0, done.stderr
    (tool,) = [s for s in content.spans if s.name == "execute_tool read"]
    assert SECRET_WORD in tool.attributes["gen_ai.tool.call.result"]
    assert json.loads(tool.attributes["gen_ai.tool.call.arguments"]) == {"file_path": "notes.txt"}
    (turn,) = [s for s in content.spans if s.parent_id == b""]
    assert json.loads(turn.attributes["gen_ai.input.messages"])[0]["parts"][0]["content"] == "read notes.txt"


def test_export_otel_without_endpoint_or_to_a_dead_one_is_a_coded_error(tmp_path: Path) -> None:
    with OTLPReceiver() as live:
        sid, _ = live_run(tmp_path, live)
    done = cli("export-otel", sid, home=tmp_path / "home", env={})
    assert done.returncode == 2 and "BAD_CONFIG" in done.stderr
    done = cli("export-otel", sid, "--endpoint", "http://127.0.0.1:9/v1/traces", home=tmp_path / "home",
               env={"OTEL_EXPORTER_OTLP_TIMEOUT": "2"})
    assert done.returncode == 2 and "OTLP_EXPORT_FAILED" in done.stderr


class SlowApprover:
    name = "slow"

    async def decide(self, request: ApprovalRequest) -> str:
        await asyncio.sleep(0.2)
        return "allow"

    def answered_by(self, call_id: str) -> str:
        return self.name

    def granted(self, call_id: str) -> bool:
        return False


async def test_approval_wait_is_in_the_stats_and_on_the_tool_span(
    fake_openai: FakeOpenAIServer, adapter: OpenAICompatAdapter, tmp_path: Path
) -> None:
    fake_openai.enqueue(
        tool_call_reply([("w1", "write", json.dumps({"file_path": "out.txt", "content": "hi"}))], usage=USAGE_1),
        text_reply("written", usage=USAGE_2),
    )
    session = Session("s_approve", cwd=str(tmp_path))
    agent = Agent(session, adapter_for=lambda _m: adapter, model="openai:fake-model",
                  approver=SlowApprover(), policy_mode="ask")  # type: ignore[arg-type]
    agent.followup("write out.txt")
    await agent.wait_idle()
    (tool,) = session_stats(session.events).tools
    assert tool.approval == "allow" and tool.approval_wait_ms is not None and tool.approval_wait_ms >= 200
    assert tool.duration_ms is not None and tool.duration_ms >= tool.approval_wait_ms
    with OTLPReceiver() as receiver:
        n = await asyncio.to_thread(export_session, session.id, list(session.events),
                                    endpoint=receiver.endpoint + "/v1/traces")
    assert n == len(receiver.spans) == 6
    (span,) = [s for s in receiver.spans if s.name == "execute_tool write"]
    assert span.attributes["dsh.approval_wait_ms"] == tool.approval_wait_ms
    assert [name for name, _ in span.events] == ["dsh.approval.asked", "dsh.approval.decided"]
