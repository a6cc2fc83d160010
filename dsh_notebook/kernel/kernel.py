"""The agent kernel: ``IPythonKernel`` whose cells are prompts to the kernel's session.

Nothing of the Jupyter protocol is reimplemented. At its first execution the kernel loads the
``dsh_notebook`` extension (so the magics' runner binds to the running loop, as a ``%load_ext``
cell would) and installs :class:`~.cells.CellRewriter`; from then on a prompt cell *is* a
``%%dsh`` cell — the same machinery (:mod:`dsh_notebook.notebook.magic.magics`): live streaming, the
widget with ``--bg``, interrupt, stdin approvals, ``{name}``, the ``TurnResult`` value.
Executions that are silent or keep no history (front ends' own introspection) run as Python, and
so does a cell that is only ``exit`` or ``quit`` (``exit()``, ``quit()``): as in IPython's kernel,
the execute_reply carries the ``ask_exit`` payload and ``jupyter console`` ends.

``complete_request`` answers ``%dsh`` flags, subcommands and values and ``{variables}``
(:mod:`dsh_notebook.notebook.magic.complete`); ``inspect_request`` (Shift+Tab, ``?``) on a ``{name}`` describes the variable
without running its code, on ``%dsh`` shows the magic's help, in ``%%python`` cells and ``%``
lines it is IPython's.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ipykernel.ipkernel import IPythonKernel
from pydantic import JsonValue

from .. import __version__
from ..cmdline.help import help_text
from ..notebook.context.inspection import describe
from ..notebook.magic.cell_kinds import CellRewriter, split_cell
from ..notebook.magic.complete import complete
from . import DISPLAY_NAME

_BRACED = re.compile(r"\{([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\}")
_EXIT = re.compile(r"^\s*(?:exit|quit)(?:\(\s*\))?\s*$")


class DshKernel(IPythonKernel):
    implementation = "dsh"
    implementation_version = __version__
    banner = (f"{DISPLAY_NAME}: every cell is a prompt to this kernel's agent session; %%python cells run "
              "Python in the same namespace; % and ! lines are IPython's (%dsh --help); exit or quit alone leaves.")
    language_info = {
        "name": "dsh",
        "version": __version__,
        "mimetype": "text/markdown",
        "file_extension": ".md",
        "codemirror_mode": "markdown",
        "pygments_lexer": "markdown",
    }

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.rewriter = CellRewriter(lambda: self.shell.user_ns if self.shell is not None else {})
        self._agent_ready = False

    # --- execution ------------------------------------------------------------------------------

    def _ensure_agent(self) -> None:
        if self._agent_ready:
            return
        shell = self.shell
        assert shell is not None
        shell.extension_manager.load_extension("dsh_notebook")
        magics = shell.magics_manager.registry.get("DshMagics")
        if magics is not None:
            magics.agent_kernel = True
        if self.rewriter not in shell.input_transformers_cleanup:
            shell.input_transformers_cleanup.insert(0, self.rewriter)
        self._agent_ready = True

    async def do_execute(self, code: str, silent: bool, store_history: bool = True,  # type: ignore[override]
                         user_expressions: Any = None, allow_stdin: bool = False, *,
                         cell_meta: Any = None, cell_id: Any = None) -> Any:
        self._ensure_agent()
        # `exit` / `quit` alone in a cell are IPython's (the reply's ask_exit payload ends
        # jupyter console), not a prompt; `%dsh exit` still sends the word to the agent
        self.rewriter.enabled = bool(store_history and not silent) and not _EXIT.match(code)
        extra = {k: v for k, v in (("cell_meta", cell_meta), ("cell_id", cell_id)) if v is not None}
        try:  # only what the request carried: ipykernel 6 knows no cell_meta
            return await super().do_execute(code, silent, store_history, user_expressions, allow_stdin, **extra)
        finally:
            self.rewriter.enabled = True

    # --- completion and inspection --------------------------------------------------------------

    def _names(self) -> list[str]:
        return list(self.shell.user_ns) if self.shell is not None else []

    def _sessions(self) -> list[str]:
        magics = self.shell.magics_manager.registry.get("DshMagics") if self.shell is not None else None
        return magics._session_ids() if magics is not None else []

    def do_complete(self, code: str, cursor_pos: int | None) -> Any:  # type: ignore[override]
        cursor = len(code) if cursor_pos is None else cursor_pos
        ours = complete(code, cursor, self._names, self._sessions)
        if ours is not None:
            matches, start, end = ours
            return {"status": "ok", "matches": matches, "cursor_start": start, "cursor_end": end, "metadata": {}}
        kind, body = split_cell(code)
        if kind != "python":
            return super().do_complete(code, cursor)
        offset = len(code) - len(body)
        if cursor < offset:
            return {"status": "ok", "matches": [], "cursor_start": cursor, "cursor_end": cursor, "metadata": {}}
        reply = super().do_complete(body, cursor - offset)
        return _shift(reply, offset)

    def do_inspect(self, code: str, cursor_pos: int, detail_level: int = 0,  # type: ignore[override]
                   omit_sections: Any = ()) -> Any:
        kind, body = split_cell(code)
        line_start = code.rfind("\n", 0, cursor_pos) + 1
        line = code[line_start: code.find("\n", cursor_pos) if "\n" in code[cursor_pos:] else len(code)]
        if kind == "python":
            offset = len(code) - len(body)
            return super().do_inspect(body, max(0, cursor_pos - offset), detail_level, omit_sections)
        if line.lstrip().startswith(("%dsh", "%%dsh")) and cursor_pos - line_start <= line.find("dsh") + 3:
            return _found(help_text())
        for m in _BRACED.finditer(line):
            if m.start() <= cursor_pos - line_start <= m.end():
                return self._inspect_variable(m.group(1))
        if line.lstrip().startswith(("%", "!")):
            return super().do_inspect(code, cursor_pos, detail_level, omit_sections)
        return {"status": "ok", "found": False, "data": {}, "metadata": {}}

    def _inspect_variable(self, dotted: str) -> dict[str, JsonValue]:
        from ..notebook.context.notebook_tools import lookup

        try:
            value = lookup(self.shell.user_ns if self.shell is not None else {}, dotted)
        except (KeyError, AttributeError):
            return _found(f"{{{dotted}}}: no such notebook variable (the prompt would fail with UNKNOWN_VARIABLE)")
        info = describe(value)
        lines = [f"{{{dotted}}} — {info['type']}"]  # a Python type name, not wire routing
        lines += [f"{k}: {v if isinstance(v, str) else json.dumps(v, default=str)}" for k, v in info.items() if k != "type"]
        return _found("\n".join(lines))


def _found(text: str) -> dict[str, JsonValue]:
    return {"status": "ok", "found": True, "data": {"text/plain": text}, "metadata": {}}


def _shift(reply: dict[str, Any], offset: int) -> dict[str, Any]:
    reply = dict(reply)
    reply["cursor_start"] = reply.get("cursor_start", 0) + offset
    reply["cursor_end"] = reply.get("cursor_end", 0) + offset
    meta = dict(reply.get("metadata") or {})
    for key, items in list(meta.items()):
        if isinstance(items, list):
            meta[key] = [{**i, "start": i.get("start", 0) + offset, "end": i.get("end", 0) + offset}
                         if isinstance(i, dict) else i for i in items]
    reply["metadata"] = meta
    return reply
