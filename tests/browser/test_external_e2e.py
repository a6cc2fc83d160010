"""Issue 41 in real JupyterLab, headless Chromium: an external agent (the official MCP SDK client,
scripted) calls ``execute_code`` on the open notebook; the call waits — with progress saying so —
while the approval shows in the notebook's loop widget, naming the external agent and the code;
the person clicks Allow; the code runs in the notebook's kernel, the call returns, and the
external agent's calls are drawn in their own colour beside the in-kernel agent's turn (readable
in the light and the dark theme).

Run: ``.venv/bin/pytest tests/browser/test_external_e2e.py -v`` (screenshots in tests/browser/artifacts/).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import threading
from typing import Any

import pytest

from .a11y_audit import audit, violations
from .conftest import Lab, open_notebook, run_all_cells, set_theme, settle, shot, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.slow]
EXT = ".dsh-loop .dsh-ext"


class Agent:
    """An MCP client on its own thread and loop (the page is driven from the test's thread)."""

    def __init__(self, lab: Lab) -> None:
        self.lab = lab
        self.progress: list[str] = []
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.session: Any = None
        self._exit: asyncio.Event | None = None
        self._task: concurrent.futures.Future[None] = concurrent.futures.Future()

    def run(self, coro: Any) -> concurrent.futures.Future[Any]:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    async def _serve(self, ready: asyncio.Event, closing: asyncio.Event) -> None:
        import httpx
        from mcp import ClientSession
        from mcp.client.streamable_http import streamable_http_client
        from mcp_types import Implementation

        async with httpx.AsyncClient(headers={"Authorization": f"token {self.lab.token}"}, timeout=300) as http, \
                streamable_http_client(f"{self.lab.url}/dsh/mcp", http_client=http) as (read, write, *_), \
                ClientSession(read, write, client_info=Implementation(name="claude-code", version="2.1.0")) as session:
            await session.initialize()
            self.session = session
            ready.set()
            await closing.wait()

    def open(self) -> None:
        """The MCP session, held open by one task of the agent's loop until :meth:`close`."""
        ready = asyncio.Event()
        self._exit = asyncio.Event()
        self._task = self.run(self._serve(ready, self._exit))
        self.run(ready.wait()).result(60)

    async def call(self, tool: str, args: dict[str, Any]) -> Any:
        async def progress(p: float, total: float | None, message: str | None) -> None:
            self.progress.append(message or "")

        return await self.session.call_tool(tool, args, progress_callback=progress)

    def close(self) -> None:
        if self._exit is not None:
            self.loop.call_soon_threadsafe(self._exit.set)
            self._task.result(60)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


def test_an_external_call_waits_for_the_approval_clicked_in_the_notebook(lab: Lab, page: Any) -> None:
    name = lab.write_notebook("external_agent.ipynb", "%load_ext dsh_notebook\n%config DshMagics.mode = 'default'",
                              "%dsh --cwd . --model script:auto hello", "%dsh show")
    open_notebook(page, lab, name)
    run_all_cells(page)
    loop = page.locator(".dsh-loop").first
    loop.wait_for(timeout=90_000)
    agent = Agent(lab)
    try:
        agent.open()
        call = agent.run(agent.call("execute_code", {"path": name, "code": "answer = 6 * 7\nprint('answer', answer)"}))
        item = page.locator(".dsh-loop .dsh-approval-external").first
        item.wait_for(timeout=90_000)
        page.locator(".jp-NotebookPanel .dsh-lab-banner").first.wait_for(timeout=30_000)
        title = item.locator(".dsh-approval-title").text_content() or ""
        assert "The external agent claude-code (over MCP) waits for your approval: execute_code" in title
        assert "answer = 6 * 7" in (item.locator(".dsh-approval-command").text_content() or "")
        wait_until(lambda: any("waiting for a person to approve execute_code" in m for m in agent.progress),
                   timeout=30, what="progress saying the call waits for a person")
        assert not call.done()  # the MCP call waits for the person
        row = page.locator(f'{EXT} .dsh-ext-call[data-tool="execute_code"]').first
        assert row.get_attribute("data-status") == "waiting"
        shot(page, "external-approval", ".dsh-loop")
        item.locator(".dsh-allow").click()
        result = call.result(90)
        assert not result.is_error and result.content[0].text == "answer 42\n"
        wait_until(lambda: row.get_attribute("data-status") == "done", timeout=30, what="the external call drawn done")
        assert "by claude-code 2.1.0" in (row.text_content() or "")
        assert page.locator(".dsh-loop .dsh-approval-banner .dsh-approval-item").count() == 0
        # the same question, asked above the notebook too (the JupyterLab extension), went with the answer
        wait_until(lambda: page.locator(".jp-NotebookPanel .dsh-lab-banner").count() == 0, timeout=30,
                   what="the notebook's banner gone")
        # the legend names the external agent; its colour is not the in-kernel agent's
        legend = page.locator('.dsh-loop .dsh-legend-item[data-role="external"]').first
        assert "External agent" in (legend.text_content() or "")
        colours = page.evaluate("""() => { const r = getComputedStyle(document.querySelector('.dsh-loop'));
            return [r.getPropertyValue('--dsh-external').trim(), r.getPropertyValue('--dsh-agent').trim()]; }""")
        assert colours[0] and colours[0] != colours[1]
        for theme in ("JupyterLab Light", "JupyterLab Dark"):
            set_theme(page, theme)
            settle(page.locator(EXT).first)
            assert violations(audit(page, EXT)) == [], theme
        shot(page, "external-done-dark", ".dsh-loop")
    finally:
        agent.close()
    # the notebook's session: the log that holds this call (the lab, and its sessions folder, are
    # shared by every browser test of this worker)
    logs = [p for p in (lab.home / "sessions").glob("*.jsonl") if "answer = 6 * 7" in p.read_text()]
    assert len(logs) == 1, logs
    events = [json.loads(x) for x in logs[0].read_text().splitlines()[1:]]
    asked = [e for e in events if e["type"] == "approval/decided" and e["name"] == "execute_code"]
    assert [(e["decision"], e["decider"], e["mode"]) for e in asked] == [("allow", "user", "default")]
    kinds = [e["type"] for e in events]
    assert kinds.index("external/call") > kinds.index("turn/end")  # after the in-kernel agent's own turn


def _kernel_run(lab: Lab, name: str, code: str) -> str:
    """Run ``code`` in the kernel of the open notebook ``name``, as another front end of it would."""
    from jupyter_client import BlockingKernelClient

    (session,) = [s for s in lab.api("/api/sessions") if s["path"] == name]
    client = BlockingKernelClient()
    client.load_connection_file(str(lab.root.parent / "state" / "runtime" / f"kernel-{session['kernel']['id']}.json"))
    client.start_channels()
    out: list[str] = []
    try:
        client.wait_for_ready(timeout=60)
        client.execute_interactive(code, timeout=120, output_hook=lambda m: out.append(
            m["content"].get("text", "") if m["msg_type"] == "stream" else ""))
    finally:
        client.stop_channels()
    return "".join(out)


def _cells(page: Any) -> list[str]:
    return list(page.evaluate("""() => [...document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell')]
        .map(c => c.querySelector('.jp-InputArea-editor')?.textContent ?? '')"""))


def test_an_external_agents_cell_appears_in_the_open_notebook_marked_and_goes_with_undo(lab: Lab, page: Any) -> None:
    """The JupyterLab extension's side: the approval in a banner above the notebook (no loop widget
    in it), the cell appearing in the open notebook with its mark, saved; ``%dsh undo`` takes it
    out of the page too; a cell the person is typing in is an ``EDIT_CONFLICT`` for the agent."""
    name = lab.write_notebook("external_cells.ipynb", "%load_ext dsh_notebook\n%config DshMagics.mode = 'default'",
                              "x = 1")
    open_notebook(page, lab, name)
    run_all_cells(page)
    wait_until(lambda: "[2]" in (page.locator(".jp-Cell").nth(1).locator(".jp-InputPrompt").text_content() or ""),
               timeout=60, what="both cells run")
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")  # the person saves (Ctrl+S)
    wait_until(lambda: json.loads((lab.root / name).read_text())["cells"][1]["execution_count"] == 2,
               timeout=30, what="the run notebook saved")
    first, second = (c["id"] for c in json.loads((lab.root / name).read_text())["cells"])
    agent = Agent(lab)
    try:
        agent.open()
        call = agent.run(agent.call("insert_cell", {"path": name, "cell_id": second, "source": "y = x + 1"}))
        banner = page.locator(".jp-NotebookPanel .dsh-lab-banner").first
        banner.wait_for(timeout=90_000)
        assert "External agent claude-code 2.1.0 asks to run insert_cell" in (banner.text_content() or "")
        assert (banner.locator(".dsh-lab-banner-text").text_content() or "") == "y = x + 1"
        assert not call.done()
        for theme in ("JupyterLab Dark", "JupyterLab Light"):
            set_theme(page, theme)
            settle(banner)
            assert violations(audit(page, ".jp-NotebookPanel .dsh-lab-banner")) == [], theme
        shot(page, "external-banner", ".jp-NotebookPanel")
        banner.locator(".dsh-lab-allow").click()
        done = call.result(90)
        assert not done.is_error and texts_of(done).endswith("in the notebook open in JupyterLab (saved)"), texts_of(done)
        wait_until(lambda: _cells(page) == [_cells(page)[0], "x = 1", "y = x + 1"], timeout=30,
                   what="the agent's cell in the open notebook, below x = 1")
        mark = page.locator(".jp-Cell.dsh-external-cell .dsh-provenance").first
        assert (mark.text_content() or "").startswith("insert_cell by external agent claude-code 2.1.0 · call x")
        assert violations(audit(page, ".jp-Cell.dsh-external-cell .dsh-provenance")) == []
        assert page.locator(".jp-NotebookPanel .dsh-lab-banner").count() == 0
        shot(page, "external-cell-marked", ".jp-NotebookPanel")
        saved = json.loads((lab.root / name).read_text())["cells"]
        assert ["".join(c["source"]) for c in saved][1:] == ["x = 1", "y = x + 1"]
        assert saved[2]["metadata"]["dsh"]["provenance"]["client"] == {"name": "claude-code", "version": "2.1.0"}

        said = _kernel_run(lab, name, "%dsh undo")
        assert f"restore {name}" in said, said
        wait_until(lambda: len(_cells(page)) == 2, timeout=30, what="the undone cell gone from the page")
        assert page.locator(".dsh-provenance").count() == 0

        editor = page.locator(".jp-Cell").nth(1).locator(".cm-content")
        editor.click()
        page.keyboard.press("End")
        page.keyboard.type("  # mine")
        wait_until(lambda: _cells(page)[1] == "x = 1  # mine", timeout=10, what="the person's typing")
        read = agent.run(agent.call("read_notebook", {"path": name, "cell_ids": [second]})).result(60)
        assert "with unsaved changes" in texts_of(read) and "x = 1  # mine" in texts_of(read)
        stale = agent.run(agent.call("edit_cell", {"path": name, "cell_id": second, "source": "x = 2",
                                                   "expected_source": "x = 1"}))
        page.locator(".jp-NotebookPanel .dsh-lab-banner .dsh-lab-allow").first.click(timeout=90_000)
        refused = stale.result(90)
        assert refused.is_error and texts_of(refused).startswith("[EDIT_CONFLICT]"), texts_of(refused)
        assert _cells(page)[1] == "x = 1  # mine"
    finally:
        agent.close()


def texts_of(result: Any) -> str:
    return "\n".join(c.text for c in result.content if c.type == "text")
