"""The cell's transcript after an edit at a stdin breakpoint is a chronological record: a pty
(pexpect) drives terminal IPython through %dsh --break 03 on the scripted model; a display that
is frozen above a stdin answer never keeps a state that ended later."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pexpect
from IPython.testing import globalipapp
from IPython.utils.capture import capture_output

from dsh_notebook.notebook.cell.segments import TextSeg, ToolSeg
from dsh_notebook.notebook.cell.sinks import DisplaySink

REPO = Path(__file__).resolve().parents[2]
DEBUG = r"debug \[c/s/r/p/e/q\]> "
ALLOW = r"\[y/N/a: [^\]]*\] "


def test_a_frozen_display_says_its_unfinished_calls_continue_below() -> None:
    globalipapp.get_ipython()  # the suite's one test shell (a second kind of singleton breaks the others)
    waiting = ToolSeg("c1", "bash", '{"command": "ls"}', phase="approval", status="waiting")
    with capture_output() as cap:
        sink = DisplaySink(interval=0)
        sink.show([TextSeg("1.1", "I'll run it."), waiting])
        sink.flush()
        sink.split("c1")  # a stdin answer follows in the cell
        sink.show([TextSeg("1.1", "I'll run it."), ToolSeg("c1", "bash", '{"command": "ls"}', done=True, result="exit 0")])
        sink.flush()
    shown = [(o.transient or {}).get("display_id") for o in cap.outputs]
    first, second = shown[0], shown[-1]
    assert first != second
    final_above = [o.data["text/plain"] for o in cap.outputs if (o.transient or {}).get("display_id") == first][-1]
    assert final_above.endswith("[? waiting for approval ↓ continued below]")
    below = cap.outputs[-1].data["text/plain"]
    assert below == "  → bash ls  [✓ exit 0]"  # no text printed twice, the call's outcome below


def test_stdin_transcript_after_an_edit_is_chronological(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO), "DSH_HOME": str(tmp_path / "home"), "TERM": "dumb"}
    child = pexpect.spawn(sys.executable, ["-m", "IPython", "--simple-prompt", "--colors=NoColor", "--no-banner"],
                          env=env, cwd=str(tmp_path), encoding="utf-8", timeout=120, dimensions=(60, 250))
    out: list[str] = []

    def upto(pattern: str) -> None:
        child.expect(pattern)
        out.append(child.before + child.after)

    try:
        upto(r"In \[1\]: ")
        child.sendline("%load_ext dsh_notebook")
        upto(r"In \[2\]: ")
        child.sendline("%dsh --approve ask --break 03 --break-tools bash run the tests")
        upto(DEBUG)
        child.sendline("e")
        upto(r"empty keeps it\)> ")
        child.sendline('{"command": "node test/run.mjs && echo EDITED-7f"}')
        upto(DEBUG)
        child.sendline("c")
        answers = 0
        while True:
            i = child.expect([DEBUG, ALLOW, r"In \[3\]: "])
            out.append(child.before + child.after)
            if i == 2:
                break
            answers += 1
            assert answers < 10
            child.sendline("c" if i == 0 else "y")
        child.sendline("exit")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    text = "".join(out).replace("\r\n", "\n")
    lines = [ln.rstrip() for ln in text.split("\n") if ln.strip()]

    def at(pattern: str, start: int = 0) -> int:
        for i in range(start, len(lines)):
            if re.search(pattern, lines[i]):
                return i
        raise AssertionError(f"no line matching {pattern!r} after line {start}:\n" + "\n".join(lines))

    call1 = at(r"^  → bash node test/run\.mjs$")
    pause1 = at(r"\|\| paused at stage 03 .* bash c1", call1)
    edited = at(r"^edited: node test/run\.mjs → node test/run\.mjs && echo EDITED-7f \(debug/edit #\d+\)", pause1)
    runs = at(r"^  → bash node test/run\.mjs && echo EDITED-7f  \(edited\)$", edited)
    asked = at(r"allow bash node test/run\.mjs && echo EDITED-7f\?", runs)
    # a && command is offered only a grant that can match it: the exact command, no `echo *`
    assert "this exact bash command" in lines[asked] and "*" not in lines[asked].split("[", 1)[1]
    failed = at(r"✗ exit 1", asked)
    call2 = at(r"^  → bash node test/run\.mjs$", failed)
    pause2 = at(r"\|\| paused at stage 03 .* bash c4", call2)
    assert not any("waiting for approval" in ln for ln in lines[call2:pause2])  # stopped at the breakpoint
    waiting2 = at(r"\? waiting for approval", pause2)  # said once it is true: after the continue
    at(r"✓ exit 0", waiting2)
    # the call line above the pause was never rewritten into the edited command, nothing twice
    assert lines[call1] == "  → bash node test/run.mjs"
    assert sum("I'll run the tests first." in ln for ln in lines) == 1
    assert sum("EDITED-7f  (edited)" in ln for ln in lines) == 1


def test_a_json_result_reads_as_one_line_not_its_brace() -> None:
    from dsh_notebook.client.summary import tool_outcome

    out = tool_outcome("inspect_var", '{\n  "name": "df",\n  "type": "DataFrame",\n  "shape": [3, 2]\n}')
    assert out.ok and out.text == '{"name": "df", "type": "DataFrame", "shape": [3, 2]}'
    assert tool_outcome("read", "{ not json").text == "{ not json"
