"""``%dsh rewind`` takes every spelling the CLI takes (issue 38 item 4): ``--to-turn N`` was
``BAD_FLAG`` in the magic."""

from __future__ import annotations

import pytest

from dsh_notebook.cmdline.dsh_line import parse_line
from dsh_notebook.errors import UserError


@pytest.mark.parametrize(("line", "turn", "session", "flags"), [
    ("rewind --to-turn 2", "2", None, set()),
    ("rewind --to-turn=3 --files --force", "3", None, {"files", "force"}),
    ("rewind s_abc123 --to-turn 2 --conversation", "2", "s_abc123", {"conversation"}),
    ("rewind 4 --dry-run", "4", None, {"dry-run"}),
    ("rewind", None, None, set()),
])
def test_rewind_spellings(line: str, turn: str | None, session: str | None, flags: set[str]) -> None:
    args = parse_line(line)
    assert args.command == "rewind" and args.options.get("turn") == turn and args.session == session
    assert {k for k in args.options if k != "turn"} == flags


@pytest.mark.parametrize("line", ["rewind --to-turn", "rewind --to-turn 2 3", "rewind --to-turn=x", "rewind --turns 2"])
def test_wrong_rewind_spellings_are_usage_errors(line: str) -> None:
    with pytest.raises(UserError) as err:
        parse_line(line)
    assert err.value.code == "BAD_FLAG"


def test_prose_is_still_a_prompt() -> None:
    assert parse_line("rewind the last refactor please").command == "prompt"
