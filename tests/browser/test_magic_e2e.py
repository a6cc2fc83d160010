"""End to end: the blocking ``%dsh`` magic in real JupyterLab, headless Chromium, a real kernel
running the real Host, agent, tools and the embedded scripted model in a fresh demo workspace.

What only a browser shows: the cell's display output is updated in place *while* the cell is
``[*]`` (tokens stream into the page, not all at the end), and ``--approve ask`` asks on the
kernel's stdin, which JupyterLab turns into an input box under the cell.

Run: ``.venv/bin/pytest tests/browser/test_magic_e2e.py -v`` (screenshots in tests/browser/artifacts/).
"""

from __future__ import annotations

import re
import time
from typing import Any

import pytest

from .conftest import CLASSROOM_PACE, Lab, is_done, open_notebook, run_all_cells, shot, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.slow]

FIX_PROMPT = "run the tests; if they fail fix src/math.ts; tell me the result"
CELL = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell"

# Samples the %dsh cell (index 1) every 40 ms: its prompt, the streamed view (the display output,
# the answer rendered inert: ``.dsh-answer``), the tool lines in it (``<li><strong>bash</strong>
# <code>cmd</code> — state``) and any stdin box.
SAMPLER_JS = """(sel) => {
  window.__cell = [];
  const sample = () => {
    const cell = document.querySelectorAll(sel)[1];
    if (!cell) return;
    const view = cell.querySelector('.jp-OutputArea .dsh-answer');
    const tools = view ? [...view.querySelectorAll('li')]
        .map(li => (li.querySelector('strong') || {}).textContent || '').filter(Boolean) : [];
    window.__cell.push({
      t: Date.now(),
      prompt: (cell.querySelector('.jp-InputPrompt') || {}).textContent.trim(),
      text: view ? view.innerText : '',
      tools,
      stdin: !!cell.querySelector('.jp-Stdin-input'),
    });
  };
  sample();
  window.__cellTimer = setInterval(sample, 40);
}"""


def samples(page: Any) -> list[dict[str, Any]]:
    return list(page.evaluate("() => window.__cell"))


def last_sample(page: Any) -> dict[str, Any]:
    return dict(page.evaluate("() => window.__cell[window.__cell.length - 1] || {}"))


def cell(page: Any, index: int) -> Any:
    return page.locator(CELL).nth(index)


def prompt_of(page: Any, index: int) -> str:
    return (cell(page, index).locator(".jp-InputPrompt").text_content() or "").strip()


def views(page: Any, index: int = 1) -> Any:
    """The streamed view: one display, or several when typed stdin answers sit between them."""
    return cell(page, index).locator(".jp-OutputArea .dsh-answer")


def view_text(page: Any, index: int = 1) -> str:
    v = views(page, index)
    return "\n".join(v.nth(i).inner_text() for i in range(v.count()))


def tool_lines(page: Any, index: int = 1) -> list[str]:
    """The tool-call lines of the streamed view, as shown: ``name args — state``; a call that
    asked on stdin ends one display and opens the next (its outcome): shown once, as it ended."""
    v = views(page, index)
    merged: list[str] = []
    for i in range(v.count()):
        items = v.nth(i).locator("li")
        lines = [(items.nth(j).inner_text() or "").strip() for j in range(items.count())]
        if merged and lines and lines[0].split(" — ")[0] == merged[-1].split(" — ")[0]:
            merged.pop()
        merged.extend(lines)
    return merged


def output_text(page: Any, index: int = 1) -> str:
    return cell(page, index).locator(".jp-OutputArea").first.inner_text()


def test_blocking_dsh_streams_into_the_running_cell(lab: Lab, page: Any) -> None:
    name = lab.write_notebook("magic_stream.ipynb", f"{CLASSROOM_PACE}\n%load_ext dsh_notebook", f"%dsh {FIX_PROMPT}")
    open_notebook(page, lab, name)
    page.evaluate(SAMPLER_JS, CELL)
    run_all_cells(page)

    # mid-run: the answer text and at least one tool line are already in the page while [*]
    def mid_run() -> bool:
        s = last_sample(page)
        return s.get("prompt") == "[*]:" and len(s.get("tools", [])) >= 2 and "run the tests first" in s.get("text", "")

    wait_until(mid_run, timeout=60, every=0.02, what="streamed text and a tool line while the cell runs")
    shot(page, "magic-midrun-cell", f"{CELL} >> nth=1")
    assert prompt_of(page, 1) == "[*]:", "the mid-run screenshot was taken after the cell had finished"
    shot(page, "magic-midrun")

    wait_until(lambda: is_done(prompt_of(page, 1)), timeout=90, what="the %dsh cell finished")
    # a last sample of the finished cell: the sampler has recorded it done
    page.wait_for_function(r"() => /^\[\d+\]:$/.test((window.__cell[window.__cell.length - 1] || {}).prompt || '')",
                           timeout=10_000)
    page.evaluate("() => clearInterval(window.__cellTimer)")
    rec = samples(page)
    running = [s for s in rec if s["prompt"] == "[*]:"]
    final = view_text(page)

    # while running: text and a tool line were visible, and the text grew sample after sample
    assert any(s["text"] and s["tools"] for s in running), running[-3:]
    growths = sum(1 for a, b in zip(running, running[1:], strict=False) if len(b["text"]) > len(a["text"]))
    token_growths = sum(1 for a, b in zip(running, running[1:], strict=False)
                        if len(b["text"]) > len(a["text"]) and a["tools"] == b["tools"])  # text only, no new tool line
    assert growths >= 8, [len(s["text"]) for s in running]
    assert token_growths >= 4, [len(s["text"]) for s in running]
    first_text = next(s["text"] for s in running if s["text"])
    assert len(first_text) < len(final) / 4, first_text  # not everything arrived at the end
    partial = [s["text"] for s in running if "tests first" in s["text"] and "tests pass now" not in s["text"]]
    assert partial, "no sample showed the answer before its end"
    assert all(t.startswith(partial[0][:20]) for t in partial)  # one answer that grew, not replaced

    # finished: the final answer and every tool call, each with its outcome
    assert "the tests pass now" in final
    assert "all 6 tests passed" in final
    lines = tool_lines(page)
    assert [line.split()[0] for line in lines] == ["bash", "read", "edit", "bash"], lines
    assert "✗ exit 1 · 2 of 6 tests failed" in lines[0] and "✓ exit 0 · all 6 tests passed" in lines[3], lines
    assert all("✓" in line for line in lines[1:]), lines
    assert "node test/run.mjs" in lines[0] and "src/math.ts" in lines[1]
    out = output_text(page)
    assert re.search(r"dsh: new session s_[0-9a-f]{12} · script:auto · mode auto · workspace \S*dsh-demo-\S+/demo", out), out
    assert "✓ completed" in out and "4 tool calls" in out
    assert not page.page_errors, page.page_errors
    shot(page, "magic-final-cell", f"{CELL} >> nth=1")
    shot(page, "magic-final")


def answer_stdin(page: Any, reply: str, expect: str, name: str) -> str:
    """Wait for JupyterLab's stdin box under the %dsh cell, check its question, type ``reply``."""
    box = cell(page, 1).locator(".jp-Stdin-input")
    box.wait_for(timeout=60_000)
    question = (cell(page, 1).locator(".jp-Stdin-prompt").text_content() or "").strip()
    assert question.startswith(expect) and "[y/N/a: " in question and question.endswith("for this session]"), question
    assert prompt_of(page, 1) == "[*]:"
    # the view above the box already shows the call it asks about, waiting
    tool = expect.split()[2]
    wait_until(lambda: any(line.startswith(tool) and "? waiting for approval" in line for line in tool_lines(page)),
               timeout=5, what=f"the {tool} line waiting for approval")
    shot(page, name, f"{CELL} >> nth=1")
    box.fill(reply)
    box.press("Enter")
    wait_until(lambda: cell(page, 1).locator(".jp-Stdin-input").count() == 0, timeout=10, what="stdin answered")
    return question


def test_stdin_approval_allow_then_deny(lab: Lab, page: Any) -> None:
    name = lab.write_notebook("magic_stdin.ipynb", f"{CLASSROOM_PACE}\n%load_ext dsh_notebook",
                              "%dsh --new --approve ask run the tests; if they fail fix src/math.ts")
    open_notebook(page, lab, name)
    run_all_cells(page)

    # 1st ask: bash
    answer_stdin(page, "y", "dsh: allow bash node test/run.mjs?", "magic-stdin-ask-bash")
    # allowed: the run proceeds — bash runs, read (policy allow) runs, then edit asks
    t0 = time.time()
    answer_stdin(page, "n", "dsh: allow edit file_path=src/math.ts", "magic-stdin-ask-edit")
    assert time.time() - t0 < 60
    wait_until(lambda: is_done(prompt_of(page, 1)), timeout=60, what="the %dsh cell finished")
    # the cell's reply can come before its last display update: wait for the edit's outcome
    wait_until(lambda: any(line.startswith("edit") and "waiting" not in line for line in tool_lines(page)),
               timeout=10, what="the edit line's outcome")

    lines = tool_lines(page)
    assert [line.split()[0] for line in lines] == ["bash", "read", "edit"], lines
    assert "✗ exit 1 · 2 of 6 tests failed" in lines[0] and "✓" in lines[1], lines  # the allowed call ran, and the run went on
    assert "✗ DENIED" in lines[2], lines
    text = view_text(page)
    assert "edit: deny" in text  # the decision, as a note in the view
    assert "The edit failed" in text and "permission denied" in text  # the model saw the denial
    out = output_text(page)
    # JupyterLab keeps each answered question with its reply in the output
    assert re.search(r"dsh: allow bash node test/run\.mjs\? \[y/N/a: [^]]*\]\s*y", out), out
    assert re.search(r"dsh: allow edit .*\? \[y/N/a: [^]]*\]\s*n", out), out
    assert "✓ completed" in out and "3 tool calls" in out
    # each typed answer sits beside its call: after the view that asks (the call waiting), before
    # the view with the call's outcome — not after the final answer
    children = [t or "" for t in cell(page, 1).locator(".jp-OutputArea-child").all_inner_texts()]
    ask_bash = next(i for i, t in enumerate(children) if "dsh: allow bash" in t)
    ask_edit = next(i for i, t in enumerate(children) if "dsh: allow edit" in t)
    final = next(i for i, t in enumerate(children) if "The edit failed" in t)
    assert "bash" in children[ask_bash - 1] and "waiting for approval" in children[ask_bash - 1], children
    assert ask_bash < ask_edit < final, children
    assert not page.page_errors, page.page_errors
    shot(page, "magic-stdin-final", f"{CELL} >> nth=1")
