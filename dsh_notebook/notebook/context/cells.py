"""The notebook around the agent: which cell sent a prompt, and what the cells run so far showed.

- :func:`current_cell` — the cell being executed: the ``cellId`` the front end put in the execute
  request's metadata (JupyterLab and Notebook 7 send ``metadata.cellId``) and the kernel's
  execution count. A prompt records it on its user message (``source.cell``).
- :class:`CellLog` — every cell run in this kernel, in order: its source (IPython's raw input
  history), its cell id and its outputs as the front end received them. Outputs are captured at
  the kernel's one IOPub choke point (its ``Session.send``), a pass-through that only copies text
  (``stream``, ``text/plain`` of displays and results, ``ename: evalue`` of errors; an output
  updated in place keeps its last state). Without a kernel (terminal IPython) only sources are known.
- :func:`notebook_path` — the ``.ipynb`` the front end named (``JPY_SESSION_NAME``, which
  jupyter_server sets for the kernels it starts).
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

OUTPUT_TYPES = ("stream", "display_data", "update_display_data", "execute_result", "error")
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


class CellRefJson(TypedDict, total=False):
    """The cell running now, wire names (:class:`~dsh_notebook.wire.messages.CellRef` on the host)."""

    cellId: str
    executionCount: int


class SavedCell(TypedDict):
    """One cell of a saved ``.ipynb``, text only."""

    type: str
    source: str
    executionCount: int | None
    outputs: list[str]


def _parent(shell: Any) -> dict[str, Any]:
    kernel = getattr(shell, "kernel", None)
    if kernel is None:
        return {}
    try:
        return kernel.get_parent("shell") or {}
    except Exception:
        return {}


def _running_count(shell: Any) -> int | None:
    """The execution count of the cell running now: its index in the raw input history (IPython
    stores the cell before running it; ``execution_count`` is bumped before or after, by version)."""
    raw = getattr(getattr(shell, "history_manager", None), "input_hist_raw", None)
    return len(raw) - 1 if raw else None


def current_cell(shell: Any) -> CellRefJson | None:
    """``{cellId?, executionCount?}`` of the cell running now (wire names), or None outside a cell."""
    parent = _parent(shell)
    if parent and (parent.get("header") or {}).get("msg_type") not in (None, "execute_request"):
        return None
    ref: CellRefJson = {}
    cell_id = (parent.get("metadata") or {}).get("cellId")
    if isinstance(cell_id, str) and cell_id:
        ref["cellId"] = cell_id[:200]
    count = _running_count(shell)
    if count:
        ref["executionCount"] = count
    return ref or None


def notebook_path() -> Path | None:
    """The notebook file the front end named for this kernel, if it exists."""
    name = os.environ.get("JPY_SESSION_NAME")
    if not name:
        return None
    path = Path(name).expanduser()
    return path if path.suffix == ".ipynb" and path.is_file() else None


@dataclass
class CellRecord:
    execution_count: int
    source: str
    cell_id: str | None = None
    msg_id: str | None = None
    outputs: list[tuple[str, str, str | None]] = field(default_factory=list)  # (kind, text, display id)

    def output_text(self) -> str:
        return "".join(text if kind == "stream" else (text if text.endswith("\n") else text + "\n")
                       for kind, text, _ in self.outputs)


def _output_of(msg_type: str, content: dict[str, Any]) -> tuple[str, str, str | None] | None:
    if msg_type == "stream":
        return ("stream", str(content.get("text", "")), None)
    if msg_type == "error":
        return ("error", f"{content.get('ename', 'Error')}: {content.get('evalue', '')}", None)
    data = content.get("data") or {}
    display_id = (content.get("transient") or {}).get("display_id")
    if WIDGET_MIME in data:
        text = "[widget]"
    elif "text/plain" in data:
        text = str(data["text/plain"])
    else:
        text = f"[{', '.join(sorted(data)) or 'empty output'}]"
    return (msg_type, text, display_id)


class CellLog:
    """The cells of this kernel, fed by ``pre_run_cell`` and the IOPub recorder."""

    def __init__(self, shell: Any) -> None:
        self.shell = shell
        self._lock = threading.Lock()
        self._by_msg: dict[str, CellRecord] = {}
        self.records: list[CellRecord] = []
        self._unhook: list[Any] = []

    def install(self) -> CellLog:
        self.shell.events.register("pre_run_cell", self._pre_run_cell)
        self._unhook.append(lambda: self.shell.events.unregister("pre_run_cell", self._pre_run_cell))
        session = getattr(getattr(self.shell, "kernel", None), "session", None)
        if session is not None and not getattr(session.send, "_dsh_recorder", False):
            original = session.send

            def send(stream: Any, msg_or_type: Any, content: Any = None, parent: Any = None, *args: Any, **kw: Any) -> Any:
                try:
                    self._record(msg_or_type, content, parent)
                except Exception:  # recording never breaks the kernel's output
                    pass
                return original(stream, msg_or_type, content, parent, *args, **kw)

            send._dsh_recorder = True  # type: ignore[attr-defined]
            session.send = send

            def restore() -> None:
                if session.send is send:
                    session.send = original

            self._unhook.append(restore)
        return self

    def uninstall(self) -> None:
        for undo in reversed(self._unhook):
            try:
                undo()
            except ValueError:
                pass
        self._unhook = []

    def _pre_run_cell(self, info: Any) -> None:
        if not getattr(info, "store_history", True):
            return
        parent = _parent(self.shell)
        cell_id = (parent.get("metadata") or {}).get("cellId") or getattr(info, "cell_id", None)
        msg_id = (parent.get("header") or {}).get("msg_id")
        count = len(getattr(self.shell.history_manager, "input_hist_raw", None) or [""])  # stored next
        record = CellRecord(count, str(info.raw_cell or ""), cell_id, msg_id)
        with self._lock:
            self.records.append(record)
            if msg_id:
                self._by_msg[msg_id] = record

    def _record(self, msg_or_type: Any, content: Any, parent: Any) -> None:
        if isinstance(msg_or_type, dict):
            msg_type = msg_or_type.get("msg_type") or (msg_or_type.get("header") or {}).get("msg_type")
            content, parent_header = msg_or_type.get("content") or {}, msg_or_type.get("parent_header") or {}
        else:
            msg_type = msg_or_type
            parent_header = (parent or {}).get("header", parent or {}) if isinstance(parent, dict) else {}
        if msg_type not in OUTPUT_TYPES or not isinstance(content, dict):
            return
        with self._lock:
            record = self._by_msg.get(parent_header.get("msg_id", ""))
            if record is None:
                return
            out = _output_of(msg_type, content)
            if out is None:
                return
            if msg_type == "update_display_data":
                for i, (_kind, _text, did) in enumerate(record.outputs):
                    if did is not None and did == out[2]:
                        record.outputs[i] = ("display_data", out[1], did)
                        return
                return  # an update of a display from another cell
            if msg_type == "stream" and record.outputs and record.outputs[-1][0] == "stream":
                kind, text, _ = record.outputs[-1]
                record.outputs[-1] = (kind, text + out[1], None)
                return
            record.outputs.append(out)

    def cells(self) -> list[CellRecord]:
        """The cells run so far (the running one included), in order; sources from the raw history
        when the recorder missed them (cells run before the extension loaded)."""
        with self._lock:
            seen = {r.execution_count: r for r in self.records}
        raw = list(getattr(getattr(self.shell, "history_manager", None), "input_hist_raw", []) or [])
        out: list[CellRecord] = []
        for n, source in enumerate(raw):
            if n == 0:
                continue
            out.append(seen.pop(n) if n in seen else CellRecord(n, source))
        out.extend(r for _, r in sorted(seen.items()))
        return out


def read_ipynb(path: Path) -> list[SavedCell]:
    """The cells of a saved notebook: ``{type, source, executionCount, outputs}`` (text only)."""
    import json

    data = json.loads(path.read_text(encoding="utf-8"))
    cells: list[SavedCell] = []
    for cell in data.get("cells") or ():
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else str(source)
        outputs: list[str] = []
        for output in cell.get("outputs") or ():
            kind = output.get("output_type")
            content = dict(output)
            if kind == "stream":
                text = output.get("text", "")
                content["text"] = "".join(text) if isinstance(text, list) else text
            elif "data" in output:
                content["data"] = {k: "".join(v) if isinstance(v, list) else v for k, v in output["data"].items()}
            parsed = _output_of(str(kind), content)
            if parsed is not None:
                outputs.append(parsed[1])
        cells.append({"type": cell.get("cell_type", "code"), "source": source,
                      "executionCount": cell.get("execution_count"), "outputs": outputs})
    return cells
