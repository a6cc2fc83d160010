"""The scripted model's ``notebook`` tour decides each step from the real tool results."""

from __future__ import annotations

from dsh_notebook.models.scripted import pick_scenario
from dsh_notebook.models.scripted_notebook import notebook_tour
from dsh_notebook.models.scripted_scenarios import TurnCall
from dsh_notebook.wire.messages import ToolCallBlock, tool_text


def ex(name: str, args: str, result: str, *, error: bool = False) -> TurnCall:
    return TurnCall(ToolCallBlock(id=f"c_{name}", name=name, arguments=args), tool_text(f"c_{name}", result, is_error=error))


def test_the_tour_follows_the_results() -> None:
    assert pick_scenario("look around this notebook") == "notebook"
    assert notebook_tour([])[1:] == ("notebook_read", {"last": 6})
    read = ex("notebook_read", '{"last": 6}', "[1]\n%%python\ndf = 1\nrows = [1, 2]\n--- output ---\n")
    assert notebook_tour([read])[1:] == ("inspect_var", {"name": "rows"})
    empty = ex("notebook_read", "{}", "[1]\nhello")
    assert notebook_tour([empty])[1] is None
    missing = ex("notebook_read", "{}", "Error: unknown tool 'notebook_read'; available tools: read", error=True)
    assert "not available" in notebook_tour([missing])[0]
    var = ex("inspect_var", '{"name": "rows"}', '{"name": "rows", "type": "list", "length": 2}')
    text, tool, args = notebook_tour([read, var])
    assert tool == "python" and args is not None and "checked = rows" in str(args["code"])
    py = ex("python", "{}", "[stdout]\nchecked is a list\n[namespace] added checked (list[2])")
    assert notebook_tour([read, var, py])[1] == "notebook_insert"
    insert = ex("notebook_insert", "{}", "proposed a new cell below")
    final, tool, _ = notebook_tour([read, var, py, insert])
    assert tool is None and "type list, length 2" in final and "added checked (list[2])" in final
