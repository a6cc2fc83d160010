"""The stage table (``dsh_notebook/wire/stages.py``) is the one declaration of the six stages:
the wire's ``DebugStage`` / ``EditTarget`` literals, the ``paused`` variants, the debugger, the
``--break`` check, the schema's ``x-stages`` and the front end's generated ``STAGE_TABLE`` all
agree with it. A stage added to the table and forgotten anywhere fails here, naming where."""

from __future__ import annotations

import json
import re
import typing
from pathlib import Path

import pytest

from dsh_notebook.cmdline.checks import stages as break_stages
from dsh_notebook.errors import UserError
from dsh_notebook.wire.events import DebugStage, EditTarget
from dsh_notebook.wire.pause import AnyPausedItem
from dsh_notebook.wire.schema import wire_schema
from dsh_notebook.wire.stages import EDITABLE, STAGE_KEYS, STAGES, Role, edit_places, stage_rows

ROOT = Path(__file__).resolve().parents[2]
GENERATED = ROOT / "js" / "src" / "wire.gen.ts"


def test_the_rows_are_numbered_and_keyed_in_order() -> None:
    assert [s.no for s in STAGES] == list(range(1, len(STAGES) + 1))
    assert [s.key for s in STAGES] == [f"{s.no:02d}" for s in STAGES]
    for s in STAGES:
        assert s.title and s.short and s.pause, f"stage {s.key}: title, short and pause are shown"
        assert s.roles and set(s.roles) <= set(typing.get_args(Role)), f"stage {s.key}: roles"


def test_the_wire_spells_the_stages_of_the_table() -> None:
    assert STAGE_KEYS == typing.get_args(DebugStage), "DebugStage (wire/events.py) lists the table's keys"
    variants = typing.get_args(typing.get_args(AnyPausedItem)[0])
    spelled = [key for v in variants for key in typing.get_args(v.model_fields["stage"].annotation)]
    assert sorted(spelled) == list(STAGE_KEYS), "every stage has exactly one paused variant (wire/pause.py)"


def test_every_edit_target_is_editable_somewhere_and_said() -> None:
    assert set(EDITABLE.values()) == set(typing.get_args(EditTarget))
    assert EDITABLE == {s.key: s.edit for s in STAGES if s.edit}
    for target in typing.get_args(EditTarget):
        assert f"({target})" in edit_places()


def test_break_all_is_every_stage_and_a_stage_off_the_table_is_refused() -> None:
    assert break_stages("all") == list(STAGE_KEYS)
    assert break_stages(",".join(str(s.no) for s in STAGES)) == list(STAGE_KEYS)
    with pytest.raises(UserError) as err:
        break_stages(f"{len(STAGES) + 1:02d}")
    assert err.value.code == "BAD_FLAG"


def test_the_schema_and_the_front_end_carry_the_table() -> None:
    rows = stage_rows()
    assert wire_schema()["x-stages"] == rows
    text = GENERATED.read_text(encoding="utf-8")
    block = re.search(r"export const STAGE_TABLE = \[\n(.*?)\n\] as const;", text, re.S)
    assert block, "js/src/wire.gen.ts has no STAGE_TABLE: run make types"
    generated = [json.loads(line.strip().rstrip(",")) for line in block.group(1).splitlines()]
    assert generated == rows, "js/src/wire.gen.ts's STAGE_TABLE is stale: run make types"
