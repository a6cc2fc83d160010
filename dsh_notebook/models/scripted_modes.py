"""The scripted model's permission-mode scenarios (issue 36): the same calls under any mode, so a
learner — and a test — sees what each mode runs, asks about or refuses.

``modes`` — one turn, one call of each kind, whatever the previous one answered (a refusal is
an answer too): 1. ``read README.md`` (a read); 2. ``bash ls`` (a read-only command);
3. ``write MODES.md`` (an edit in the workspace); 4. ``bash touch made-by-bash.txt`` (a command
that writes); then, where the notebook offers them, 5. ``python`` and 6. ``notebook_insert``.
The answer lists each call with what happened to it, from the real results.

``plan`` — plan first, then work: 1. ``read src/math.ts``; 2. ``exit_plan_mode`` with a plan
built from that file (a header comment on its first line, NOTES.md, a check with ``ls``). Sent
back with feedback, it presents the plan again with the feedback as a further step (three times
at most). Approved, it carries the plan out: 3. ``edit src/math.ts``; 4. ``write NOTES.md``;
5. ``bash ls``; and says which mode the work ran in. Outside plan mode the tool is refused and
the work goes ahead as the mode allows.
"""

from __future__ import annotations

import json
import re

from .scripted_scenarios import Decision, TurnCall, numbered_lines

KEYWORDS_MODES = ("permission mode", "every kind of call")
KEYWORDS_PLAN = ("plan first", "make a plan")
MODES_STEPS: tuple[tuple[str, str, dict[str, object]], ...] = (
    ("First a read: README.md.", "read", {"file_path": "README.md"}),
    ("Now a read-only command: ls.", "bash", {"command": "ls"}),
    ("Now an edit in the workspace: I'll write MODES.md.", "write",
     {"file_path": "MODES.md", "content": "# Modes\n\nWritten by the agent to show what the permission mode allows.\n"}),
    ("Now a command that writes: touch made-by-bash.txt.", "bash", {"command": "touch made-by-bash.txt"}),
    ("Now code in the notebook's namespace.", "python", {"code": "modes_demo = 6 * 7\nprint(modes_demo)"}),
    ("Last, a cell proposed into the notebook.", "notebook_insert", {"code": "print(modes_demo)"}),
)
NOTES = "# Notes\n\nsrc/math.ts now starts with a header comment (the plan approved in plan mode).\n"
_FEEDBACK = re.compile(r"The person's feedback: (.+)$", re.S)
_NOW_IN = re.compile(r"now in ([a-z-]+) mode")


def outcome(exchange: TurnCall) -> str:
    """``ran`` / ``ran, reported a failure`` / ``refused: …`` / ``asked you, and you said no`` — from
    the real result text."""
    text = exchange.text
    if exchange.ok:
        return "ran"
    if "was refused" in text or "was cancelled" in text:
        return "asked; the answer was no" if "refused" in text else "asked, then cancelled"
    if "permission denied" in text:
        reason = text.split("permission denied:", 1)[1].strip()
        return f"refused without asking ({reason[:140]}{'…' if len(reason) > 140 else ''})"
    return f"ran, and failed: {text[:120]}"


def modes_tour(exchanges: list[TurnCall], offered: frozenset[str]) -> Decision:
    steps = [s for s in MODES_STEPS if not offered or s[1] in offered]
    if len(exchanges) < len(steps):
        return steps[len(exchanges)]
    lines = [f"- {e.call.name} `{_args(e)}`: {outcome(e)}" for e in exchanges]
    return "What each call met under this session's permission mode:\n" + "\n".join(lines), None, None


def _args(e: TurnCall) -> str:
    try:
        data = json.loads(e.call.arguments or "{}")
    except ValueError:
        return e.call.arguments[:60]
    value = data.get("command") or data.get("file_path") or data.get("code") or data.get("plan") or ""
    return str(value).splitlines()[0][:60] if value else ""


def _plan(first_line: str, feedback: list[str]) -> str:
    steps = [f"Add a header comment above the first line of src/math.ts (now `{first_line.strip()}`).",
             "Write NOTES.md saying what changed.",
             "Check with `ls` that both files are there."]
    steps += [f"As you asked: {f}" for f in feedback]
    return "## Plan\n\n" + "\n".join(f"{n}. {s}" for n, s in enumerate(steps, 1))


def plan_then_work(exchanges: list[TurnCall], offered: frozenset[str] = frozenset()) -> Decision:
    if not exchanges:
        return "I'm planning first: reading src/math.ts.", "read", {"file_path": "src/math.ts"}
    read = exchanges[0]
    first = numbered_lines(read.text).get(1, "") if read.ok else ""
    if not first:
        return f"I could not read src/math.ts ({outcome(read)}), so I have no plan to present.", None, None
    plans = [e for e in exchanges if e.call.name == "exit_plan_mode"]
    feedback = [m.group(1).strip() for e in plans if (m := _FEEDBACK.search(e.text))]
    if not plans and offered and "exit_plan_mode" not in offered:  # not in plan mode: no plan to approve
        work = exchanges[1:]
        mode = None
        last = None
    elif not plans:
        return "Here is my plan.", "exit_plan_mode", {"plan": _plan(first, feedback)}
    else:
        last = plans[-1]
        work = exchanges[exchanges.index(last) + 1:]
        mode = m.group(1) if (m := _NOW_IN.search(last.text)) else None
    if last is not None and last is exchanges[-1] and not last.ok:
        if "not approved" in last.text:
            if len(plans) >= 3:
                return "The plan was sent back three times; I stop here. Tell me what you would like instead.", None, None
            said = f"You asked: {feedback[-1]} — here is the revised plan." if _FEEDBACK.search(last.text) \
                else "Here is the plan again; tell me what to change."
            return said, "exit_plan_mode", {"plan": _plan(first, feedback)}
        if "ends plan mode" not in last.text and "unknown tool" not in last.text:  # cancelled, or a rule: stop
            return f"The plan could not be presented: {outcome(last)}", None, None
    steps: list[Decision] = [
        ("Carrying out step 1: the header comment.", "edit",
         {"file_path": "src/math.ts", "old_string": first, "new_string": f"// math helpers (edited after the plan)\n{first}"}),
        ("Step 2: NOTES.md.", "write", {"file_path": "NOTES.md", "content": NOTES}),
        ("Step 3: checking with ls.", "bash", {"command": "ls"}),
    ]
    if len(work) < len(steps):
        return steps[len(work)]
    where = f"in {mode} mode" if mode else "without plan mode (the session was not in it)"
    done = "\n".join(f"- {e.call.name} `{_args(e)}`: {outcome(e)}" for e in work)
    return f"The plan was carried out {where}:\n{done}", None, None


__all__ = ["KEYWORDS_MODES", "KEYWORDS_PLAN", "MODES_STEPS", "modes_tour", "outcome", "plan_then_work"]
