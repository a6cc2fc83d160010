"""The scripted model's ``notebook`` scenario: a tour of the notebook tools, decided from their
real results (the agent kernel or ``%dsh`` in a notebook; elsewhere it says the tools are missing).

1. ``notebook_read {"last": 6}`` — the cells run so far;
2. ``inspect_var`` on the last name a cell assigned (``name = …`` in the cells the read returned);
3. ``python`` — ``checked = <name>`` and a print, so the result's namespace diff shows ``checked``;
4. ``notebook_insert`` — proposes a cell below that prints the variable;
5. a summary quoting what the tools returned.
"""

from __future__ import annotations

import json
import re

from .scripted_scenarios import Decision, TurnCall

_ASSIGN = re.compile(r"^([A-Za-z_]\w*)\s*=(?!=)[^%\n]*$", re.MULTILINE)
KEYWORDS = ("notebook", "笔记本")


def _short(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def notebook_tour(exchanges: list[TurnCall]) -> Decision:
    if not exchanges:
        return "I'll read the notebook first.", "notebook_read", {"last": 6}
    last = exchanges[-1]
    name = last.call.name
    if not last.ok:
        if "unknown tool" in last.text.lower():
            return "The notebook tools are not available here (they exist in a notebook kernel).", None, None
        return f"The {name} call failed: {_short(last.text, 300)}", None, None
    if name == "notebook_read":
        names = [n for n in _ASSIGN.findall(last.text) if not n.startswith("_")]
        if not names:
            return "I read the notebook; no cell assigns a variable yet, so there is nothing to inspect.", None, None
        return f"The notebook's cells assign `{names[-1]}` last; let me look at it.", "inspect_var", {"name": names[-1]}
    if name == "inspect_var":
        var = json.loads(last.call.arguments).get("name", "x")
        return (f"Now I'll use `{var}` in the notebook's namespace.", "python",
                {"code": f"checked = {var}\nprint('checked is a', type(checked).__name__)"})
    if name == "python":
        var = _inspected(exchanges) or "checked"
        return ("I'll propose a cell below that shows it.", "notebook_insert",
                {"code": f"print({var})", "markdown": f"Show {var} (proposed by the agent)"})
    if name == "notebook_insert":
        return _summary(exchanges), None, None
    return f"I did not expect a `{name}` call here; stopping.", None, None


def _inspected(exchanges: list[TurnCall]) -> str | None:
    for ex in exchanges:
        if ex.call.name == "inspect_var":
            return str(json.loads(ex.call.arguments).get("name"))
    return None


def _summary(exchanges: list[TurnCall]) -> str:
    by_name = {ex.call.name: ex for ex in exchanges}
    read = by_name["notebook_read"].text
    cells = len(re.findall(r"^\[\d+\]", read, re.MULTILINE))
    info = by_name["inspect_var"].text
    try:
        facts = json.loads(info)
    except ValueError:
        facts = {}
    what = ", ".join(f"{k} {v}" for k, v in facts.items() if k in ("type", "length", "shape", "repr")) or _short(info)
    diff = next((line[len("[namespace] "):] for line in by_name["python"].text.splitlines()
                 if line.startswith("[namespace] ")), "no names changed")
    return (f"I read {cells} cells of this notebook. `{facts.get('name', 'the variable')}` is: {what}. "
            f"My python call changed the namespace: {diff}. I proposed a new cell below this one; "
            "run it when you like.")
