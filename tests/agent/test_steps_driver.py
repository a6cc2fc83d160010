"""The Agent as a loop of steps (issue 25 item 2): the step values, the one driver, its hook
points, AgentConfig applying from the next turn, and the size limits of ``agent/``."""

from __future__ import annotations

import ast
from pathlib import Path

from dsh_notebook.agent import agent as agent_module
from dsh_notebook.agent.config import AgentConfig
from dsh_notebook.agent.steps import End, NextStep, TurnHook
from dsh_notebook.agent.turn import TurnRun, drive
from dsh_notebook.wire.events import StepEnd, StepStart, TurnEnd, TurnEndReason
from dsh_notebook.wire.messages import user_text

from .fakes import ChunkModel, calls, echo_tool, make_agent, text

AGENT_DIR = Path(agent_module.__file__).parent


class Recorder(TurnHook):
    """Records the hook points the driver passes, in order."""

    def __init__(self, seen: list[str], stop_at_step: int | None = None) -> None:
        self.seen, self.stop_at_step = seen, stop_at_step

    def turn_started(self, run: TurnRun) -> None:
        self.seen.append("turn-started")

    def before_step(self, run: TurnRun) -> End | None:
        self.seen.append(f"before-step:{run.step}")
        if self.stop_at_step is not None and run.step >= self.stop_at_step:
            return End(TurnEndReason(kind="blocked", cause="recorder"))
        return None

    async def settled(self, run: TurnRun, event: object) -> None:
        self.seen.append("settled")

    def after_tools(self, run: TurnRun, batch: object) -> TurnEndReason | None:
        self.seen.append("after-tools")
        return None

    def turn_ending(self, run: TurnRun) -> None:
        self.seen.append("turn-ending")


def _with_hook(agent, hook: TurnHook) -> None:
    built = agent.turn_hooks
    agent.turn_hooks = lambda: (*built(), hook)


async def test_the_driver_walks_next_model_tool_done_and_passes_every_hook_point() -> None:
    seen: list[str] = []
    agent = make_agent(ChunkModel(calls(("c1", "echo", '{"text":"a"}')), text("done")), echo_tool())
    _with_hook(agent, Recorder(seen))
    agent.followup("go")
    await agent.wait_idle()
    assert seen == ["turn-started", "before-step:0", "settled", "after-tools", "before-step:1", "settled",
                    "turn-ending"]
    (end,) = [e for e in agent.session.events if isinstance(e, TurnEnd)]
    assert end.reason.kind == "completed"
    assert [type(e).__name__ for e in agent.session.events if isinstance(e, StepStart | StepEnd)] == [
        "StepStart", "StepEnd", "StepStart", "StepEnd"]


async def test_a_hook_can_end_the_turn_before_a_step() -> None:
    seen: list[str] = []
    model = ChunkModel(calls(("c1", "echo", '{"text":"a"}')), calls(("c2", "echo", '{"text":"b"}')))
    agent = make_agent(model, echo_tool())
    _with_hook(agent, Recorder(seen, stop_at_step=1))
    agent.followup("go")
    await agent.wait_idle()
    (end,) = [e for e in agent.session.events if isinstance(e, TurnEnd)]
    assert end.reason.kind == "blocked" and end.reason.cause == "recorder"
    assert len(model.requests) == 1  # the second step never started; the first batch was answered
    assert sum(isinstance(e, StepEnd) for e in agent.session.events) == 1


def test_a_hook_point_asks_only_the_hooks_that_override_it_in_their_order() -> None:
    class Inherited(Recorder):  # overrides through its parent
        pass

    class Plain(TurnHook):
        pass

    seen: list[str] = []
    agent = make_agent(ChunkModel(text("hi")))
    first, plain, second = Recorder(seen), Plain(), Inherited(seen)
    run = TurnRun(agent, 1, agent.config.snapshot(), (first, plain, second))
    assert [m.__self__ for m in run.at("settled")] == [first, second]
    assert [m.__self__ for m in run.at("before_step")] == [first, second]
    assert run.at("frozen") == () and run.at("review") == ()
    assert run.at("settled") is run.at("settled")  # worked out once a turn


async def test_drive_runs_step_values_to_their_end() -> None:
    model = ChunkModel(text("hi"))
    agent = make_agent(model)
    agent.inject(user_text("hello"))  # input without waking the agent's own driver task
    run = TurnRun(agent, 1, agent.config.snapshot(), agent.turn_hooks())
    reason = await drive(run, NextStep("next-step"))
    assert reason.kind == "completed" and run.step == 1 and not run.step_open
    assert len(model.requests) == 1


async def test_a_config_change_applies_from_the_next_turn() -> None:
    model = ChunkModel(*[calls((f"c{i}", "echo", '{"text":"x"}')) for i in range(6)])
    agent = make_agent(model, echo_tool(), max_steps=1)
    agent.followup("one")
    await agent.wait_idle()
    agent.config.max_steps = 2
    agent.followup("two")
    await agent.wait_idle()
    ends = [e.reason for e in agent.session.events if isinstance(e, TurnEnd)]
    assert [(r.kind, r.limit) for r in ends] == [("budget", 1), ("budget", 2)]
    assert len(model.requests) == 3


def test_agent_module_and_functions_stay_small() -> None:
    assert len((AGENT_DIR / "agent.py").read_text().splitlines()) <= 300
    long = []
    for path in sorted(AGENT_DIR.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                size = (node.end_lineno or node.lineno) - node.lineno + 1
                if size > 60:
                    long.append(f"{path.name}:{node.name} ({size} lines)")
    assert long == []


def test_agent_config_has_the_agreed_fields() -> None:
    cfg = AgentConfig(model="fake:m")
    assert (cfg.max_retries, cfg.retry_base_ms, cfg.retry_cap_ms, cfg.max_parallel) == (3, 500, 30_000, 10)
    assert (cfg.max_steps, cfg.max_time, cfg.context_window, cfg.max_tokens, cfg.tools) == (None,) * 5
    assert (cfg.compact_threshold, cfg.max_repeats, cfg.request_options) == (0.8, 2, {})
