"""The shapes of the trajectory figures (``show --stats --json``; camelCase on the wire), filled by
:func:`dsh_notebook.analysis.stats.session_stats`. :func:`stats_schema` is their JSON Schema."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, JsonValue
from pydantic.alias_generators import to_camel

from ..session.catalog import PRICES_AS_OF


class _Out(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, validate_by_name=True, serialize_by_alias=True)


class RequestStats(_Out):
    seq: int
    turn: int
    step: int
    attempt: int
    provider: str
    model: str
    outcome: Literal["completed", "interrupted", "error", "open"] = "open"
    error: str | None = None
    result_seq: int | None = None
    sent_time: int
    first_byte_time: int | None = None
    first_delta_time: int | None = None
    first_content_time: int | None = None
    end_time: int | None = None
    first_byte_ms: int | None = None
    ttft_ms: int | None = None
    first_content_ms: int | None = None
    stream_ms: int | None = None
    duration_ms: int | None = None
    input_tokens: int | None = None
    cached_input_tokens: int | None = None
    output_tokens: int | None = None
    reasoning_tokens: int | None = None
    cost_usd: float | None = None
    context_window: int | None = None
    max_tokens: int | None = None  # the output limit sent (request/header config)
    options: dict[str, JsonValue] = {}  # the other request options sent (temperature, seed …)
    context_used: float | None = None
    window_source: str | None = None  # where the window came from: flag | server | catalog


class ToolStats(_Out):
    call_id: str
    name: str
    seq: int
    turn: int
    step: int
    start_time: int
    end_time: int | None = None
    result_seq: int | None = None
    duration_ms: int | None = None
    approval_asked_time: int | None = None
    approval_wait_ms: int | None = None
    approval: str | None = None
    mode: str | None = None  # the permission mode its decision was made in (issue 36)
    decider: str | None = None  # rule | grant | mode | user
    decision: str | None = None  # allow | deny | cancelled (its last approval/decided)
    run_ms: int | None = None
    error: str | None = None
    exit_code: int | None = None  # a command's exit code (bash): "the tool ran" is not "it succeeded"


class StepStats(_Out):
    step: int
    seq: int
    start_time: int
    end_time: int | None = None
    duration_ms: int | None = None


class Totals(_Out):
    turns: int = 0
    requests: int = 0
    tool_calls: int = 0
    input_tokens: int = 0
    cached_input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    cost_usd: float | None = None
    duration_ms: int = 0
    approval_wait_ms: int = 0
    context_window: int | None = None
    context_used: float | None = None
    window_source: str | None = None
    prices_as_of: str = PRICES_AS_OF


class TurnStats(Totals):
    turn: int
    seq: int
    start_time: int
    end_seq: int | None = None
    end_time: int | None = None
    reason: str | None = None
    steps: list[StepStats] = []


class ModeDecisions(_Out):
    """The decisions made in one permission mode (``unrecorded``: a log from before issue 36): how
    many, what they were, what made them; ``asked`` how many calls a person was asked about."""

    mode: str
    decisions: int = 0
    allow: int = 0
    deny: int = 0
    cancelled: int = 0
    asked: int = 0
    by_rule: int = 0
    by_grant: int = 0
    by_mode: int = 0
    by_user: int = 0


class SessionStats(_Out):
    requests: list[RequestStats] = []
    tools: list[ToolStats] = []
    turns: list[TurnStats] = []
    totals: Totals = Totals()
    decisions: list[ModeDecisions] = []  # by mode, in the order the modes first decided

    def to_json_dict(self) -> dict[str, JsonValue]:
        return self.model_dump(mode="json")

    def turn(self, turn: int) -> TurnStats | None:
        return next((t for t in self.turns if t.turn == turn), None)


def stats_schema() -> dict[str, JsonValue]:
    """The JSON Schema of ``show --stats --json`` (for generated client types)."""
    return SessionStats.model_json_schema(by_alias=True)
