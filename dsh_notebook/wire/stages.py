"""The six stages of seed 000's tool feedback loop, declared once (issue 40 item 2).

One row a stage: its number and the key the wire spells it with (``"03"``, a
:data:`~.events.DebugStage`), its title and short label as the widgets draw them, where the
agent debugger pauses at it, who is responsible for it (the roles the diagram lights), and what a
paused run may edit there. The debugger (``agent/debugger.py``, ``agent/runto.py``), the
``--break`` checks and ``paused`` items read the table here; ``python -m dsh_notebook schema``
carries it as ``x-stages`` and ``make types`` writes it into the front end as ``STAGE_TABLE``
(the generated wire types), where the diagram, the narration, the roles and the debugger's stage
picker and editor read it: a stage is a row here, and what else it needs the type checkers name.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Literal

from pydantic import JsonValue

from .events import DebugStage, EditTarget

Role = Literal["model", "agent", "tools", "session"]
"""Who owns a stage's data and work: the model, the agent loop, the tool runtime, the session."""


@dataclass(frozen=True)
class Stage:
    no: int
    key: DebugStage
    title: str
    """What happens, as the diagram's card and the narration name it."""
    short: str
    """The card's second line: the code name of the stage."""
    pause: str
    """Where the agent debugger stops at this stage."""
    roles: tuple[Role, ...]
    edit: EditTarget | None = None
    """What a run paused here may change (``session/debug`` ``edit``), if anything."""


STAGES: tuple[Stage, ...] = (
    Stage(1, "01", "Model response settled", "model response", "the assistant message settled", ("model",)),
    Stage(2, "02", "Tool call registered", "tool/call", "tool/call logged", ("agent",), "arguments"),
    Stage(3, "03", "Tool executes", "tool runtime", "before the tool runs", ("tools",), "arguments"),
    Stage(4, "04", "Tool result committed", "tool/result", "before tool/result is committed", ("session",), "result"),
    Stage(5, "05", "Message history derived", "derive_messages", "the next step's messages derived",
          ("agent", "session")),
    Stage(6, "06", "Next request sent", "adapter.stream", "before the frozen request goes to adapter.stream()",
          ("agent", "model"), "request"),
)

STAGE_KEYS: tuple[DebugStage, ...] = tuple(s.key for s in STAGES)
"""``("01", …, "06")``: the stages a breakpoint, a run-to target or a ``paused`` item names."""

EDITABLE: dict[DebugStage, EditTarget] = {s.key: s.edit for s in STAGES if s.edit is not None}
"""The stages a paused run may edit at, and what it edits there."""


def edit_places() -> str:
    """Where a paused run may edit what: ``"02–03 (arguments), 04 (result) and 06 (request)"``."""
    parts: list[str] = []
    for target in dict.fromkeys(EDITABLE.values()):
        keys = [k for k, t in EDITABLE.items() if t == target]
        run = len(keys) > 1 and int(keys[-1]) - int(keys[0]) == len(keys) - 1
        parts.append(f"{keys[0]}–{keys[-1]}" if run else ", ".join(keys))
        parts[-1] += f" ({target})"
    return ", ".join(parts[:-1]) + f" and {parts[-1]}" if len(parts) > 1 else "".join(parts)


def stage_rows() -> list[JsonValue]:
    """The table as the schema carries it (``x-stages``): one object a stage, in order."""
    rows: list[JsonValue] = []
    for s in STAGES:
        row = asdict(s)
        rows.append({k: list(v) if isinstance(v, tuple) else v for k, v in row.items()})
    return rows


__all__ = ["EDITABLE", "STAGES", "STAGE_KEYS", "Role", "Stage", "edit_places", "stage_rows"]
