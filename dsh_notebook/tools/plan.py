"""Plan mode's two parts (issue 36 item 4): the system-prompt section that tells the model it is
planning, and the tool ``exit_plan_mode {plan}`` that ends it.

While a session is in ``plan`` mode only reads run (:mod:`.modes`). The model presents its plan
by calling ``exit_plan_mode``; that call always asks a person (:func:`.modes.decide`), who reads
the plan and either approves it — choosing the mode the work continues in, ``accept-edits`` or
``default``; the mode changes (``mode/changed {by: "plan"}``) before the tool answers — or sends
it back with feedback (the call is denied with the feedback in its result; the session stays in
plan mode). :func:`attach_plan_mode` contributes the section and the tool to an agent's context
exactly while its mode is ``plan``, so other modes never offer the tool.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from .base import Tool, ToolContext, ToolOutput, whole_arguments
from .modes import READS
from .visible import visible

if TYPE_CHECKING:
    from .modes import SessionMode

PLAN_SECTION = (
    "You are in PLAN MODE. Investigate and plan; do not change anything yet. Only reads run now "
    f"({READS}); every other call is refused until the plan is approved. When your plan is ready, "
    "call `exit_plan_mode` with the whole plan as Markdown in `plan`: concrete steps, the files you "
    "will change and how you will check the result. A person reads it and either approves it — the "
    "work then continues in the mode they choose, and you carry out the plan — or sends it back "
    "with feedback: then revise the plan and present it again."
)

_CONTINUES = {
    "accept-edits": "file writes and edits inside the workspace run without asking; bash and python still ask "
                    "(read-only commands aside)",
    "default": "reads run; writes, edits, bash and python ask the person first",
}


class ExitPlanArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    plan: str = Field(min_length=1, description="the plan, in Markdown: steps, files to change, how to check")


async def _exit_plan(args: ExitPlanArgs, ctx: ToolContext) -> ToolOutput:
    mode = ctx.mode or "default"
    allows = _CONTINUES.get(mode, f"mode {mode}")
    return ToolOutput(f"The person approved your plan. The session is now in {mode} mode ({allows}). "
                      "Carry out the plan now, step by step.")


EXIT_PLAN_MODE = Tool(
    name="exit_plan_mode",
    description="Present your plan and leave plan mode. Call it once your investigation is done, with the "
                "whole plan; a person approves it (the work starts) or sends it back with feedback.",
    args_model=ExitPlanArgs,
    execute=_exit_plan,
    approval="ask",
    effect="plan",
    timeout_s=None,
    subject=whole_arguments,  # a rule on exit_plan_mode matches its whole arguments
)


def plan_text(arguments: str) -> str:
    """The plan of an ``exit_plan_mode`` call as a person reads it: its lines, each made visible
    (:func:`.visible.visible`: nothing hidden), or the raw arguments when they hold no plan."""
    try:
        data = json.loads(arguments) if arguments else {}
    except ValueError:
        data = None
    plan = data.get("plan") if isinstance(data, dict) else None
    if not isinstance(plan, str):
        return visible(arguments)
    return "\n".join(visible(line) for line in plan.splitlines())


PLAN_CHOICES = ("a: approve, continue in accept-edits · d: approve, continue in default · "
                "anything else: keep planning (what you type is sent as feedback)")


def parse_plan_answer(reply: str) -> tuple[str, str | None, str | None]:
    """``(decision, mode, feedback)`` of a typed answer to a plan: ``a`` / ``accept-edits`` and
    ``d`` / ``default`` approve; ``n``, ``k`` or nothing keep planning without feedback; any other
    text keeps planning with that text as feedback."""
    text = reply.strip()
    word = text.lower()
    if word in ("a", "accept-edits", "accept edits"):
        return "allow", "accept-edits", None
    if word in ("d", "default"):
        return "allow", "default", None
    return "deny", None, None if word in ("", "n", "no", "k", "keep", "keep planning") else text


def attach_plan_mode(context: Any, modes: SessionMode) -> Callable[[], None]:
    """Contribute the plan section and ``exit_plan_mode`` to ``context`` while ``modes`` is
    ``plan`` (now and after every change); returns the function that detaches it all. Host loop."""
    held: list[Any] = []

    def sync(mode: str, _previous: str | None = None) -> None:
        if mode == "plan" and not held:
            held.extend((context.section("harness:plan-mode", 95, PLAN_SECTION), context.tool(EXIT_PLAN_MODE)))
        elif mode != "plan":
            while held:
                held.pop()()

    sync(modes.current)
    unsubscribe = modes.subscribe(sync)

    def detach() -> None:
        unsubscribe()
        sync("default")

    return detach


__all__ = ["EXIT_PLAN_MODE", "PLAN_CHOICES", "PLAN_SECTION", "ExitPlanArgs", "attach_plan_mode", "parse_plan_answer",
           "plan_text"]
