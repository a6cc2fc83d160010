"""Issue 21 (low): ``inspect_var`` ran a metaclass's ``__getattribute__`` (user code) and copied
a 20M-item list. Now type-level reads only, and bounded views (length + the first items)."""

from __future__ import annotations

import asyncio
import threading
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from dsh_notebook.notebook.context.cells import CellLog
from dsh_notebook.notebook.context.mainthread import MainThreadRunner
from dsh_notebook.notebook.context.notebook_tools import make_notebook_tools
from dsh_notebook.tools.base import ToolContext, ToolOutput

RAN: list[str] = []


class Meta(type):
    def __getattribute__(cls, name: str) -> Any:
        RAN.append(f"getattribute {name}")
        return super().__getattribute__(name)

    def __eq__(cls, other: object) -> bool:
        RAN.append("eq")
        return False

    __hash__ = type.__hash__


class Sneaky(metaclass=Meta):
    label = "x"

    def __init__(self) -> None:
        self.value = 1


class Shell:
    def __init__(self, ns: dict[str, Any]) -> None:
        self.user_ns = ns


async def inspect(ns: dict[str, Any], name: str) -> ToolOutput:
    """``inspect_var`` as the kernel runs it: the host thread asks, the main thread (here) answers."""
    shell = Shell(ns)
    runner = MainThreadRunner(asyncio.get_running_loop())  # bg mode: scheduled on this loop
    tool = {t.name: t for t in make_notebook_tools(shell, CellLog(shell), runner)}["inspect_var"]
    result: dict[str, ToolOutput] = {}

    def host_thread() -> None:
        ctx = ToolContext(cwd=Path("."), call_id="c1", tool_name="inspect_var")
        result["out"] = asyncio.run(tool.execute(tool.args_model(name=name), ctx))

    thread = threading.Thread(target=host_thread)
    thread.start()
    await asyncio.to_thread(thread.join)
    return result["out"]


async def test_a_metaclass_getattribute_never_runs() -> None:
    ns = {"obj": Sneaky(), "cls": Sneaky}
    for name in ("obj", "cls", "cls.label", "obj.value"):
        RAN.clear()
        out = await inspect(ns, name)
        assert not out.is_error, out.text
        assert RAN == [], (name, RAN)
    assert "Sneaky" in (await inspect(ns, "obj")).text


@pytest.mark.scale
async def test_a_twenty_million_item_list_is_not_copied() -> None:
    big = list(range(20_000_000))
    tracemalloc.start()
    try:
        out = await inspect({"big": big}, "big")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert '"length": 20000000' in out.text and "0, 1, 2" in out.text
    assert peak < 5_000_000, f"inspect_var allocated {peak} bytes for a 20M-item list"
