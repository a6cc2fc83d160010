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
    events = [json.loads(x) for x in sorted((lab.home / "sessions").glob("*.jsonl"))[-1].read_text().splitlines()[1:]]
    asked = [e for e in events if e["type"] == "approval/decided" and e["name"] == "execute_code"]
    assert [(e["decision"], e["decider"], e["mode"]) for e in asked] == [("allow", "user", "default")]
    kinds = [e["type"] for e in events]
    assert kinds.index("external/call") > kinds.index("turn/end")  # after the in-kernel agent's own turn
