"""The MCP tools of the notebook server (issue 41; DESIGN §6.2): schemas and bodies.

Every tool but ``list_notebooks`` acts on one notebook (``path``, as Jupyter names it) and runs as
an :class:`~.calls.ExternalCallRun` in that notebook's session: logged, decided, answered.
"""

from __future__ import annotations

import json
import time
from typing import Any

from ..errors import DshError
from .calls import ExternalCallRun, Outcome
from .cells import (
    Part,
    cell_parts,
    clip,
    fit,
    iopub_output,
    merge_streams,
    output_parts,
    provenance,
)
from .notebooks import find_cell, new_cell, set_provenance

_PATH = {"type": "string", "description": "the notebook's path, relative to Jupyter's root folder (list_notebooks)"}
_CELL_TYPE = {"type": "string", "enum": ["code", "markdown", "raw"]}


def _schema(required: list[str], **props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {"path": _PATH, **props}, "required": ["path", *required],
            "additionalProperties": False}


TOOLS: dict[str, tuple[str, dict[str, Any]]] = {
    "list_notebooks": ("The notebooks of this Jupyter server: the open ones with their kernel's state, and the notebook "
                       "files under its root folder.", {"type": "object", "properties": {}, "additionalProperties": False}),
    "read_notebook": ("A notebook's cells as the person sees them (open in JupyterLab: with unsaved changes; else as saved), addressed by nbformat cell id, with their outputs (images as "
                      "images; long outputs cut to their head and tail). cell_ids: only these cells.",
                      _schema([], cell_ids={"type": "array", "items": {"type": "string"}})),
    "execute_code": ("Run code in the notebook's live kernel (its variables are there, and what you define stays). "
                     "Follows the notebook session's permission mode: a person may have to approve it in the notebook.",
                     _schema(["code"], code={"type": "string"})),
    "insert_cell": ("Insert a cell below (or above) the cell with id cell_id (omit cell_id to append at the end). "
                    "The cell is marked as written by you (metadata.dsh.provenance). Needs approval like an edit.",
                    _schema(["source"], cell_id={"type": "string"}, source={"type": "string"}, cell_type=_CELL_TYPE,
                            where={"type": "string", "enum": ["below", "above"]})),
    "edit_cell": ("Replace the source of the cell with id cell_id (a code cell's outputs are cleared). expected_source: "
                  "the source you read; if the cell changed since, nothing is written (EDIT_CONFLICT).",
                  _schema(["cell_id", "source"], cell_id={"type": "string"}, source={"type": "string"},
                          cell_type=_CELL_TYPE, expected_source={"type": "string"})),
    "inspect_var": ("Describe a variable of the notebook's kernel (type, shape, dtype, length, a short repr, columns) "
                    "without running any code of its.", _schema(["name"], name={"type": "string"})),
    "ask_agent": ("Give the notebook's own agent (dsh, in the kernel) a prompt and wait for its answer; its tool calls "
                  "are approved in the notebook as usual.", _schema(["prompt"], prompt={"type": "string"})),
    "session_events": ("The events of the notebook's session log after since_seq (-1: from the start): what the "
                       "agents did, masked.", _schema([], since_seq={"type": "integer", "minimum": -1},
                                                     limit={"type": "integer", "minimum": 1, "maximum": 1000})),
}


def _str(args: dict[str, Any], name: str, *, required: bool = True) -> str | None:
    value = args.get(name)
    if value is None and not required:
        return None
    if not isinstance(value, str):
        raise DshError(f"{name} must be a string", code="BAD_ARGS")
    return value


# --- bodies --------------------------------------------------------------------------------------


async def read_notebook(run: ExternalCallRun, notebooks: Any) -> Outcome:
    nb, which = await notebooks.view(run.notebook)
    cells = nb.get("cells") or []
    wanted = run.arguments.get("cell_ids")
    if wanted is not None:
        if not isinstance(wanted, list) or not all(isinstance(x, str) for x in wanted):
            raise DshError("cell_ids must be a list of cell ids", code="BAD_ARGS")
        cells = [cells[find_cell(nb, cid)] for cid in wanted]
    head = Part("text", f"{run.notebook} ({which}; {len(nb.get('cells') or [])} cells; session {run.session_id})")
    parts = [head, *(p for cell in cells for p in cell_parts(cell))]
    return Outcome(fit(parts), meta={"cells": len(cells)})


async def execute_code(run: ExternalCallRun, notebooks: Any) -> Outcome:
    code = _str(run.arguments, "code") or ""
    outputs: list[dict[str, Any]] = []
    started = time.monotonic()
    progress = run.ctx.progress

    def on_output(msg: dict[str, Any]) -> None:
        out = iopub_output(msg)
        if out is None:
            return
        if msg["msg_type"] == "update_display_data":
            return  # an update of a display: the final state is what the notebook shows, not sent here
        outputs.append(out)
        last = "".join(p.text for p in output_parts(out) if p.kind == "text").strip().splitlines()[-1:]
        progress.message = f"running ({time.monotonic() - started:.0f} s){': ' + clip(last[0], 120) if last else ''}"

    await progress.say("running in the notebook's kernel")
    reply = await run.link.execute(code, on_output=on_output)
    merged = merge_streams(outputs)
    parts = [p for o in merged for p in output_parts(o)] or [Part("text", "(no output)")]
    meta = {"executionCount": reply.get("execution_count"), "status": reply.get("status")}
    error = None
    if reply.get("status") == "error":
        error = DshError(f"{reply.get('ename')}: {reply.get('evalue')}", code="PYTHON_ERROR")
    return Outcome(fit(parts), meta=meta, error=error)


async def insert_cell(run: ExternalCallRun, notebooks: Any) -> Outcome:
    source = _str(run.arguments, "source") or ""
    anchor = _str(run.arguments, "cell_id", required=False)
    kind = _str(run.arguments, "cell_type", required=False) or "code"
    where = _str(run.arguments, "where", required=False) or "below"
    if kind not in ("code", "markdown", "raw") or where not in ("below", "above"):
        raise DshError("cell_type is code, markdown or raw; where is below or above", code="BAD_ARGS")
    prov = provenance(run.ctx.client, run.call_id, run.session_id, "insert_cell")

    def edit(nb: dict[str, Any]) -> dict[str, Any]:
        cells = nb.setdefault("cells", [])
        index = len(cells) if anchor is None else find_cell(nb, anchor) + (1 if where == "below" else 0)
        nb["nbformat_minor"] = max(5, int(nb.get("nbformat_minor") or 0))  # cell ids
        cell = new_cell(kind, source, {"dsh": {"provenance": prov}})
        cells.insert(index, cell)
        return {"cellId": cell["id"], "index": index}

    done = await notebooks.change(run.notebook, edit)
    return Outcome([Part("text", f"inserted {kind} cell {done['cellId']} at position {done['index']} of {run.notebook}, "
                                 f"{done['where']}")], meta={**done, "provenance": prov})


async def edit_cell(run: ExternalCallRun, notebooks: Any) -> Outcome:
    cell_id = _str(run.arguments, "cell_id") or ""
    source = _str(run.arguments, "source") or ""
    expected = _str(run.arguments, "expected_source", required=False)
    kind = _str(run.arguments, "cell_type", required=False)
    prov = provenance(run.ctx.client, run.call_id, run.session_id, "edit_cell")

    def edit(nb: dict[str, Any]) -> dict[str, Any]:
        cell = nb["cells"][find_cell(nb, cell_id)]
        before = cell.get("source")
        before = "".join(before) if isinstance(before, list) else str(before or "")
        if expected is not None and before != expected:
            raise DshError(f"cell {cell_id} is no longer what you read (it was changed meanwhile): nothing was written; "
                           "read it again", code="EDIT_CONFLICT")
        cell["source"] = source
        if kind is not None and kind != cell.get("cell_type"):
            cell["cell_type"] = kind
            for key in ("outputs", "execution_count"):
                cell.pop(key, None)
            if kind == "code":
                cell.update(outputs=[], execution_count=None)
        elif cell.get("cell_type") == "code":
            cell.update(outputs=[], execution_count=None)
        set_provenance(cell, prov)
        return {"cellId": cell_id, "before": clip(before, 2000)}

    done = await notebooks.change(run.notebook, edit)
    return Outcome([Part("text", f"edited cell {cell_id} of {run.notebook}, {done['where']}")],
                   meta={**done, "provenance": prov})


async def inspect_var(run: ExternalCallRun, notebooks: Any) -> Outcome:
    name = _str(run.arguments, "name") or ""
    info = await run.link.guard(run.link.call("inspect", name=name))
    return Outcome([Part("text", json.dumps(info, indent=1, ensure_ascii=False))], meta={"variable": name})


async def session_events(run: ExternalCallRun, notebooks: Any) -> Outcome:
    since = run.arguments.get("since_seq", -1)
    limit = run.arguments.get("limit", 200)
    if not isinstance(since, int) or not isinstance(limit, int):
        raise DshError("since_seq and limit are integers", code="BAD_ARGS")
    page = await run.link.guard(run.link.wire.rpc("session/events", {"sessionId": run.session_id, "sinceSeq": since, "limit": limit}))
    lines = "\n".join(json.dumps(e, ensure_ascii=False) for e in page.get("events", []))
    more = " (more after these: ask again from the last seq shown)" if page.get("more") else ""
    text = f"session {run.session_id}: events after seq {since} (last seq {page.get('lastSeq')}){more}\n{lines}"
    return Outcome([Part("text", clip(text, 150_000))], meta={"lastSeq": page.get("lastSeq")})


BODIES = {"read_notebook": read_notebook, "execute_code": execute_code, "insert_cell": insert_cell,
          "edit_cell": edit_cell, "inspect_var": inspect_var, "session_events": session_events}
