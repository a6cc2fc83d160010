"""The scripted model's ``files`` scenario (a prompt that mentions a checkpoint): one turn that
changes the demo workspace with every kind of tool, for checkpoints and rewind to undo.

1. ``write NOTES.md`` (a new file); 2. ``read src/math.ts`` then ``edit`` its first line;
3. ``bash rm package.json``; 4. ``bash mv test/run.mjs test/run-renamed.mjs``;
5. ``bash`` creates ``build/out.txt``; 6. a summary of what the tools answered.
"""

from __future__ import annotations

from .scripted_scenarios import Decision, TurnCall, numbered_lines

KEYWORDS = ("checkpoint", "rewind", "undo")
NOTES = "# Notes\n\nWritten by the agent (checkpoint demo).\n"
STEPS: tuple[tuple[str, str, dict[str, object]], ...] = (
    ("I'll write a new file, NOTES.md.", "write", {"file_path": "NOTES.md", "content": NOTES}),
    ("Now I'll read src/math.ts to edit it.", "read", {"file_path": "src/math.ts"}),
    ("", "edit", {}),  # decided from the read
    ("I'll delete package.json with bash.", "bash", {"command": "rm package.json"}),
    ("I'll rename test/run.mjs with bash.", "bash", {"command": "mv test/run.mjs test/run-renamed.mjs"}),
    ("I'll create build/out.txt with bash.", "bash", {"command": "mkdir -p build && printf 'built\\n' > build/out.txt"}),
)


def change_files(exchanges: list[TurnCall]) -> Decision:
    n = len(exchanges)
    if exchanges and not exchanges[-1].ok:
        return f"The {exchanges[-1].call.name} call failed: {exchanges[-1].text[:300]}", None, None
    if n < len(STEPS):
        text, tool, args = STEPS[n]
        if tool == "edit":
            lines = numbered_lines(exchanges[-1].text)
            first = lines.get(1, "")
            if not first:
                return "src/math.ts has no first line to edit; stopping.", None, None
            return ("I'll mark its first line as edited.", "edit",
                    {"file_path": "src/math.ts", "old_string": first, "new_string": f"// edited by the agent\n{first}"})
        return text, tool, args
    return ("Done: I wrote NOTES.md, edited src/math.ts, deleted package.json (bash rm), renamed "
            "test/run.mjs to test/run-renamed.mjs (bash mv) and created build/out.txt. "
            "`python -m dsh_notebook checkpoints ID` lists these changes; `rewind ID --to-turn N --files` undoes them."), None, None
