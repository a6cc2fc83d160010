"""The embedded teaching model (``script:<scenario>``): deterministic, offline, honest.

It is not an LLM. Each call *reads the request it is given* — the messages since the latest
user prompt, above all the real tool results — and decides the next action from them, then
streams it with realistic pacing in the same chunk vocabulary as a real adapter. So it drives
real tools on the demo workspace (:func:`dsh_notebook.demo.copy_demo_workspace`) and reports what
they really returned:

- ``readme`` (seed 000): ``read {"file_path":"README.md"}`` (call ``c1``), then a summary built
  from the file text the tool returned;
- ``fix-tests`` (seed 001): ``bash`` runs ``node test/run.mjs``; on a failure
  ``src/math.ts:<line> expected X received Y`` it ``read``s the file, ``edit``s the faulty line
  (an off-by-one it can recognise), reruns the tests and reports the real result;
- ``notebook``: a tour of the notebook tools (``notebook_read``, ``inspect_var``, ``python``,
  ``notebook_insert``; :mod:`.scripted_notebook`), when the prompt mentions the notebook;
- ``modes`` / ``plan`` (issue 36, :mod:`.scripted_modes`): one call of each kind under the
  session's permission mode; plan first (``exit_plan_mode``), then carry the plan out;
- ``explore``: questions about the demo workspace — its files, what a file holds, where a word
  is used — answered from real ``glob`` / ``read`` / ``grep`` results (:mod:`.scripted_explore`);
- ``help`` (and anything else): says it is the offline demo model and how to use a real one;
- a context-compaction request (``dsh/compaction``) gets a summary built from its transcript:
  the user's requests, the tool calls, the assistant's last words.

``auto`` picks by the latest user text (English or Chinese keywords). Tool errors (denied,
missing ``node``, a failed edit) end the scenario with an honest account.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass

from ..errors import UserError
from ..wire.events import Usage
from ..wire.messages import (
    AnyMessage,
    AssistantMessage,
    TextBlock,
    ToolCallBlock,
    ToolMessage,
    UserMessage,
)
from .base import (
    BlockEnd,
    BlockStart,
    Finish,
    ModelAdapter,
    ModelRequest,
    StreamChunk,
    TextDelta,
    ToolCallDelta,
    UsageChunk,
)
from .scripted_explore import explore, might_explore
from .scripted_files import KEYWORDS as FILES_KEYWORDS
from .scripted_files import change_files
from .scripted_modes import KEYWORDS_MODES, KEYWORDS_PLAN, modes_tour, plan_then_work
from .scripted_notebook import KEYWORDS as _NOTEBOOK
from .scripted_notebook import notebook_tour
from .scripted_scenarios import TurnCall, fix_tests, help_reply, readme

SCENARIOS = ("auto", "readme", "fix-tests", "notebook", "explore", "files", "modes", "plan", "help")
COMPACTION = "dsh/compaction"  # a summarisation request of context compaction (agent.compaction)


def summarise_transcript(text: str) -> str:
    """An honest, deterministic summary of a compaction transcript: the user's requests, the
    tool calls made, and the last thing the assistant said."""
    requests: list[str] = []
    calls: list[str] = []
    said = ""
    for part in text.split("\n\n["):
        head, _, body = part.partition("]\n")
        head = head.lstrip("[")
        if head == "user":
            requests.append(body.strip().splitlines()[0][:160] if body.strip() else "")
        elif head == "assistant":
            lines = body.splitlines()
            calls += [ln.removeprefix("called ")[:160] for ln in lines if ln.startswith("called ")]
            spoken = [ln for ln in lines if not ln.startswith("called ") and ln.strip()]
            said = " ".join(spoken)[:300] or said
    out = ["The user asked: " + ("; ".join(r for r in requests if r) or "(nothing yet)") + "."]
    if calls:
        out.append(f"Tool calls made ({len(calls)}): " + "; ".join(calls[-8:]) + ".")
    if said:
        out.append("The assistant last said: " + said)
    return "\n".join(out)
_FIX = ("test", "测试", "修复", "fix")
_README = ("readme", "summar", "总结", "摘要", "概括", "介绍")


@dataclass(frozen=True)
class Reply:
    """The model's decision for one call: text to say, and at most one tool call."""

    text: str
    tool: str | None = None
    args: dict[str, object] | None = None


def pick_scenario(prompt: str) -> str:
    low = prompt.lower()
    if any(k in low for k in KEYWORDS_MODES):
        return "modes"
    if any(k in low for k in KEYWORDS_PLAN):
        return "plan"
    if any(k in low for k in FILES_KEYWORDS):
        return "files"
    if any(k in low for k in _FIX):
        return "fix-tests"
    if any(k in low for k in _README):
        return "readme"
    if any(k in low for k in _NOTEBOOK):
        return "notebook"
    if might_explore(prompt):
        return "explore"
    return "help"


def current_turn(messages: Sequence[AnyMessage]) -> tuple[str, list[TurnCall], set[str]]:
    """The latest person's prompt, the tool exchanges after it, and every call id in use."""
    start, prompt = 0, ""
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if isinstance(m, UserMessage) and m.source.kind == "user":
            start, prompt = i, "".join(b.text for b in m.content)
            break
    ids: set[str] = set()
    calls: list[ToolCallBlock] = []
    results: dict[str, ToolMessage] = {}
    for i, m in enumerate(messages):
        if isinstance(m, AssistantMessage):
            for call in m.tool_calls:
                ids.add(call.id)
                if i > start:
                    calls.append(call)
        elif isinstance(m, ToolMessage) and i > start:
            results[m.tool_call_id] = m
    return prompt, [TurnCall(c, results.get(c.id)) for c in calls], ids


class ScriptedModel(ModelAdapter):
    """A deterministic offline model that decides from the request's history (``provider = script``)."""

    provider = "script"

    def __init__(self, scenario: str = "auto", pace: float = 0.02) -> None:
        if scenario not in SCENARIOS:
            raise UserError(
                f"unknown scripted scenario {scenario!r}; use one of: {', '.join(SCENARIOS)}",
                code="UNKNOWN_SCENARIO",
            )
        self.scenario = scenario
        self.pace = pace

    def decide(self, messages: Sequence[AnyMessage], tools: Sequence[str] = ()) -> tuple[Reply, str]:
        """The reply for this request and the call id a tool call would get (``tools``: the names
        the request offers; the ``modes`` tour skips the notebook's where they are not)."""
        if messages and isinstance(messages[-1], UserMessage) and messages[-1].source.plugin == COMPACTION:
            return Reply(summarise_transcript("".join(b.text for b in messages[-1].content))), "c1"
        prompt, exchanges, ids = current_turn(messages)
        scenario = self.scenario if self.scenario != "auto" else pick_scenario(prompt)
        if scenario == "readme":
            reply = readme(exchanges)
        elif scenario == "fix-tests":
            reply = fix_tests(exchanges)
        elif scenario == "notebook":
            reply = notebook_tour(exchanges)
        elif scenario == "explore":
            reply = explore(prompt, exchanges) or help_reply(prompt)
        elif scenario == "files":
            reply = change_files(exchanges)
        elif scenario == "modes":
            reply = modes_tour(exchanges, frozenset(tools))
        elif scenario == "plan":
            reply = plan_then_work(exchanges, frozenset(tools))
        else:
            reply = help_reply(prompt)
        n = 1
        while f"c{n}" in ids:
            n += 1
        return Reply(*reply), f"c{n}"

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamChunk]:
        reply, call_id = self.decide(request.messages, [t.name for t in request.tools])
        for chunk in self.chunks(reply, call_id, request.messages):
            if self.pace:
                await asyncio.sleep(self.pace)
            yield chunk

    def chunks(self, reply: Reply, call_id: str, messages: Sequence[AnyMessage] = ()) -> list[StreamChunk]:
        out: list[StreamChunk] = []
        index = 0
        if reply.text:
            out.append(BlockStart(0, "text"))
            words = re.findall(r"\S+\s*|\s+", reply.text)
            out += [TextDelta(0, "".join(words[i : i + 2])) for i in range(0, len(words), 2)]
            out.append(BlockEnd(0, TextBlock(text=reply.text)))
            index = 1
        if reply.tool is not None:
            args = json.dumps(reply.args or {}, ensure_ascii=False)
            out.append(BlockStart(index, "tool-call", id=call_id, name=reply.tool))
            cut = [0, len(args) // 3, 2 * len(args) // 3, len(args)]
            out += [
                ToolCallDelta(index, call_id, args[a:b], name=reply.tool if k == 0 else None)
                for k, (a, b) in enumerate(zip(cut, cut[1:], strict=False))
                if b > a
            ]
            out.append(BlockEnd(index, ToolCallBlock(id=call_id, name=reply.tool, arguments=args)))
        out.append(UsageChunk(estimate_usage(messages, reply)))
        out.append(Finish("tool-calls" if reply.tool else "stop"))
        return out


def _chars(m: AnyMessage) -> int:
    """The characters a real model would read of message ``m``: its texts, its tool calls'
    names and arguments."""
    n = 0
    for b in m.content:
        if isinstance(b, TextBlock):
            n += len(b.text)
        elif isinstance(b, ToolCallBlock):
            n += len(b.name) + len(b.arguments)
    return n + 4  # the role and the message framing


def estimate_usage(messages: Sequence[AnyMessage], reply: Reply) -> Usage:
    """An honest estimate of what a real model would count for this request (about four
    characters a token, the common rule of thumb for English text and code), marked estimated."""
    seen = sum(_chars(m) for m in messages)
    out = len(reply.text) + (len(reply.tool or "") + len(json.dumps(reply.args or {})) if reply.tool else 0)
    return Usage(input_tokens=seen // 4 + 1, output_tokens=out // 4 + 1, estimated=True)


__all__ = ["SCENARIOS", "estimate_usage", "TurnCall", "Reply", "ScriptedModel", "current_turn", "pick_scenario"]
