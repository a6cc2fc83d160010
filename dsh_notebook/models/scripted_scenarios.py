"""The scripted model's scenarios: each decides the next action from the real tool results.

Every function gets the tool exchanges of the current turn (calls and their results, in order)
and returns ``(text, tool_name | None, arguments | None)``. Nothing here is a fixed transcript:
the summary quotes the file the ``read`` tool returned, the fix is derived from the failure line
the ``bash`` tool printed and the source line ``read`` showed.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from ..wire.messages import ToolCallBlock, ToolMessage

Decision = tuple[str, str | None, dict[str, object] | None]
TEST_COMMAND = "node test/run.mjs"
_FAILURE = re.compile(r"(?P<file>[\w./-]+\.ts):(?P<line>\d+) expected (?P<exp>.+?) received (?P<got>.+)")
_EXIT = re.compile(r"\[exit code: (-?\d+)\]")
_NUMBERED = re.compile(r"^\s*(\d+)\t(.*)$")


@dataclass(frozen=True)
class TurnCall:
    """One tool call of the current turn and its result (``None`` while unanswered)."""

    call: ToolCallBlock
    result: ToolMessage | None

    @property
    def ok(self) -> bool:
        return self.result is not None and not self.result.is_error

    @property
    def text(self) -> str:
        return self.result.text if self.result is not None else "(no result)"


def numbered_lines(read_output: str) -> dict[int, str]:
    """Line number → text from the ``read`` tool's ``<n>\\t<text>`` output."""
    out: dict[int, str] = {}
    for raw in read_output.splitlines():
        m = _NUMBERED.match(raw)
        if m:
            out[int(m.group(1))] = m.group(2)
    return out


def _short(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _sentences(text: str, n: int) -> str:
    parts = re.split(r"(?<=[.!?])\s+", " ".join(text.split()))
    return " ".join(parts[:n])


# -- readme (seed 000) ------------------------------------------------------------------------
def summarise_markdown(name: str, lines: list[str]) -> str:
    title = next((ln[2:].strip() for ln in lines if ln.startswith("# ")), name)
    sections: list[tuple[str, list[str]]] = [("", [])]
    for ln in lines:
        if ln.startswith("## "):
            sections.append((ln[3:].strip(), []))
        elif not ln.startswith("# "):
            sections[-1][1].append(ln)
    intro = " ".join(ln.strip() for ln in sections[0][1] if ln.strip())
    out = [f"{name} ({len(lines)} lines) describes **{title}**. {_sentences(intro, 2)}".rstrip()]
    named = [(t, body) for t, body in sections[1:] if t]
    if named:
        out.append(f"\nIt has {len(named)} sections:")
        for t, body in named:
            first = next((b.strip().lstrip("-* ").strip() for b in body if b.strip() and not b.startswith("```")), "")
            out.append(f"- **{t}**: {_short(_sentences(first, 1), 120)}" if first else f"- **{t}**")
    return "\n".join(out)


def readme(exchanges: list[TurnCall]) -> Decision:
    if not exchanges:
        return "I'll read README.md first.", "read", {"file_path": "README.md"}
    last = exchanges[-1]
    if not last.ok:
        return f"I couldn't read README.md. The read tool said: {_short(last.text, 300)}", None, None
    lines = numbered_lines(last.text)
    body = [lines[k] for k in sorted(lines)] if lines else last.text.splitlines()
    return "Here is a summary of README.md, from the file as the read tool returned it:\n\n" + summarise_markdown(
        "README.md", body
    ), None, None


# -- fix-tests (seed 001) ---------------------------------------------------------------------
def _exit_code(text: str) -> int | None:
    m = _EXIT.search(text)
    return int(m.group(1)) if m else None


def _summary_line(output: str) -> str:
    lines = [ln for ln in output.splitlines() if ln.strip() and not ln.startswith("[exit code")]
    return lines[-1].strip() if lines else "(no output)"


def _judge_run(run: TurnCall) -> tuple[str, re.Match[str] | None]:
    """``passed`` / ``failed`` / ``no-node`` / ``tool-error`` / ``unclear`` and the first failure."""
    if not run.ok:
        return "tool-error", None
    code = _exit_code(run.text)
    if code == 127 or "node: not found" in run.text or "command not found" in run.text:
        return "no-node", None
    if code == 0:
        return "passed", None
    failure = _FAILURE.search(run.text)
    return ("failed" if failure else "unclear"), failure


def fix_off_by_one(line: str, expected: str, received: str) -> str | None:
    """The corrected line when it ends in ``± 1`` and the test was off by exactly that, else None."""
    try:
        diff = float(received) - float(expected)
    except ValueError:
        return None
    sign = "+" if diff == 1 else "-" if diff == -1 else None
    if sign is None:
        return None
    fixed, n = re.subn(rf"\s*\{sign}\s*1(?=\s*;?\s*$)", "", line)
    return fixed if n == 1 else None


def fix_tests(exchanges: list[TurnCall]) -> Decision:
    runs = [e for e in exchanges if e.call.name == "bash"]
    if not exchanges:
        return "I'll run the tests first.", "bash", {"command": TEST_COMMAND}
    last = exchanges[-1]
    name = last.call.name
    if name == "bash":
        verdict, failure = _judge_run(last)
        if verdict == "tool-error":
            return f"I couldn't run the tests: {_short(last.text, 300)}", None, None
        if verdict == "no-node":
            return ("I couldn't run the tests: `node` is not installed here (the shell said: "
                    f"{_short(last.text, 200)}). Install Node.js 18+ and ask again."), None, None
        first_run = len(runs) == 1
        edited = next((e for e in exchanges if e.call.name == "edit" and e.ok), None)
        if verdict == "passed":
            summary = _summary_line(last.text)
            if first_run:
                return f"The tests already pass ({summary}), so there is nothing to fix.", None, None
            what = ""
            if edited is not None and edited.call.arguments:
                args = json.loads(edited.call.arguments)
                what = f" I changed `{args['old_string'].strip()}` to `{args['new_string'].strip()}` in {args['file_path']}."
            return (f"Result: the tests pass now — `{TEST_COMMAND}` exited 0 with \"{summary}\".{what} "
                    "The tool ran, the tests passed, and the goal (a passing test suite) is reached."), None, None
        if verdict == "unclear":
            return (f"The tests failed (exit code {_exit_code(last.text)}), but I can't find a "
                    f"`file:line expected … received …` line in the output: {_short(last.text, 300)}"), None, None
        assert failure is not None
        if not first_run:
            return (f"The tests still fail after my change: `{failure.group(0)}`. As a scripted demo "
                    "model I stop here; a real model could dig further."), None, None
        return (f"The tests fail: `{failure.group(0)}`. Let me look at {failure.group('file')}.",
                "read", {"file_path": failure.group("file")})
    if name == "read":
        if not last.ok:
            return f"I couldn't read the file: {_short(last.text, 300)}", None, None
        failure = _FAILURE.search(runs[-1].text) if runs else None
        if failure is None:
            return "I read the file, but I no longer have a failure to fix.", None, None
        lineno = int(failure.group("line"))
        source = numbered_lines(last.text).get(lineno)
        if source is None:
            return f"Line {lineno} is not in what the read tool returned, so I can't fix it safely.", None, None
        fixed = fix_off_by_one(source, failure.group("exp"), failure.group("got"))
        if fixed is None:
            return (f"Line {lineno} is `{source.strip()}`. The test expected {failure.group('exp')} and got "
                    f"{failure.group('got')}, but I can't work out a safe fix as a scripted demo model."), None, None
        return (f"Line {lineno} is `{source.strip()}`: the result is off by one "
                f"(expected {failure.group('exp')}, received {failure.group('got')}). I'll fix it."), "edit", {
            "file_path": failure.group("file"), "old_string": source, "new_string": fixed}
    if name == "edit":
        if not last.ok:
            return f"The edit failed: {_short(last.text, 300)}", None, None
        return "Edited. Running the tests again.", "bash", {"command": TEST_COMMAND}
    return f"I did not expect a `{name}` call here; stopping.", None, None


# -- help -------------------------------------------------------------------------------------
def help_reply(prompt: str) -> Decision:
    return (
        "I'm the offline demo model of dsh_notebook (`script:auto`): a scripted teaching model, "
        "not a real LLM, so I can't answer that. On the demo workspace I can: \"read README.md and "
        "summarise\"; \"run the tests; if they fail fix src/math.ts; tell me the result\"; \"which files "
        "are there?\"; \"what does src/math.ts do?\"; \"where is divide used?\"; and a tour of the "
        "notebook tools (\"what is in this notebook?\").\n\nTo use a real model: `%dsh --model local:smollm2 ...` "
        "(a small local model, when installed), or `%dsh --model deepseek:deepseek-chat ...` with "
        "`DEEPSEEK_API_KEY` set (or `openai:<model>` with `OPENAI_API_KEY`), or any "
        "OpenAI-compatible server with `--base-url URL --model <name>` (vLLM, Ollama, llama.cpp). "
        "`%dsh config` shows the current settings.",
        None,
        None,
    )
