"""One meaning per name (issue 40 item 6): the twins the issue found stay gone, and no new class
name is defined twice in the package (the pairs that remain are listed: the list only shrinks)."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

from tests.support.source import ONE_WORKER, parsed

pytestmark = ONE_WORKER  # the package's files parsed once, in one worker
PKG = Path(__file__).resolve().parents[1] / "dsh_notebook"

# class names still defined in two modules, each a local name of its module (never both imported
# into one place); rename one of a pair and delete its line here
KNOWN_TWINS = {"_Parser", "RunToTarget", "Listing", "Timeline", "TurnCall", "Reply", "Rule",
               "Snapshot", "Outcome"}


def _classes() -> dict[str, list[str]]:
    found: dict[str, list[str]] = defaultdict(list)
    for path in sorted(PKG.rglob("*.py")):
        for node in parsed(path).body:
            if isinstance(node, ast.ClassDef):
                found[node.name].append(str(path.relative_to(PKG)))
    return found


def test_no_new_class_name_is_defined_twice() -> None:
    twins = {name: where for name, where in _classes().items() if len(where) > 1}
    new = {name: where for name, where in twins.items() if name not in KNOWN_TWINS}
    assert not new, f"a class name with two meanings (rename one): {new}"
    gone = KNOWN_TWINS - set(twins)
    assert not gone, f"no longer twins, delete them from KNOWN_TWINS: {sorted(gone)}"


def test_the_twins_the_issue_named_stay_gone() -> None:
    classes = _classes()
    assert classes["TurnRun"] == ["agent/steps.py"]  # the cell's handle is CellTurn
    assert "ScriptModel" not in classes and classes["CannedModel"] == ["testing/models.py"]
    assert classes["ScriptedModel"] == ["models/scripted.py"]  # the embedded teaching model only
    # "checkpoint" is a workspace snapshot; the debugger stops at pause points
    debugger = (PKG / "agent" / "debugger.py").read_text() + (PKG / "tools" / "scheduler.py").read_text()
    assert "def checkpoint(" not in debugger and "Checkpoints" not in debugger
    assert "async def pause_point(" in debugger
