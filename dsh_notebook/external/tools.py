"""The MCP tools of the notebook server (issue 41; DESIGN §6.2): schemas and bodies.

Every tool but ``list_notebooks`` acts on one notebook (``path``, as Jupyter names it) and runs as
an :class:`~.calls.ExternalCallRun` in that notebook's session: logged, decided, answered.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable

from pydantic import JsonValue
from typing_extensions import TypedDict

from ..errors import DshError
from ..wire.base import dump
from ..wire.external import EventsArgs, EventsPage, ExternalTool
from . import kernel_messages as km
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
from .ipynb import CellType, Notebook, Output, text_of
from .notebooks import Notebooks, find_cell, new_cell, set_provenance
from .wirelink import build

JsonSchema = dict[str, JsonValue]
"""A JSON Schema object (an MCP tool's ``inputSchema``)."""
_PATH: JsonSchema = {"type": "string", "description": "the notebook's path, relative to Jupyter's root folder (list_notebooks)"}
_CELL_TYPE: JsonSchema = {"type": "string", "enum": ["code", "markdown", "raw"]}


def _schema(required: list[str], **props: JsonSchema) -> JsonSchema:
    properties: dict[str, JsonValue] = {"path": _PATH, **props}
    return {"type": "object", "properties": properties, "required": ["path", *required], "additionalProperties": False}


TOOLS: dict[ExternalTool, tuple[str, JsonSchema]] = {
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


def _str(args: dict[str, JsonValue], name: str, *, required: bool = True) -> str | None:
    value = args.get(name)
    if value is None and not required:
        return None
    if not isinstance(value, str):
        raise DshError(f"{name} must be a string", code="BAD_ARGS")
    return value


# --- bodies --------------------------------------------------------------------------------------


class Inserted(TypedDict):
    cellId: str
    index: int


class Edited(TypedDict):
    cellId: str
    before: str


async def read_notebook(run: ExternalCallRun, notebooks: Notebooks) -> Outcome:
    nb, which = await notebooks.view(run.notebook)
    cells = nb["cells"]
    wanted = run.arguments.get("cell_ids")
    if wanted is not None:
        if not isinstance(wanted, list) or not all(isinstance(x, str) for x in wanted):
            raise DshError("cell_ids must be a list of cell ids", code="BAD_ARGS")
        cells = [cells[find_cell(nb, str(cid))] for cid in wanted]
    head = Part("text", f"{run.notebook} ({which}; {len(nb['cells'])} cells; session {run.session_id})")
    parts = [head, *(p for cell in cells for p in cell_parts(cell))]
    return Outcome(fit(parts), meta={"cells": len(cells)})


async def execute_code(run: ExternalCallRun, notebooks: Notebooks) -> Outcome:
    code = _str(run.arguments, "code") or ""
    outputs: list[Output] = []
    started = time.monotonic()
    progress = run.ctx.progress

    def on_output(msg: km.Output) -> None:
        out = iopub_output(msg)
        if out is None:
            return  # an update of a display: the final state is what the notebook shows, not sent here
        outputs.append(out)
        last = "".join(p.text for p in output_parts(out) if p.kind == "text").strip().splitlines()[-1:]
        progress.message = f"running ({time.monotonic() - started:.0f} s){': ' + clip(last[0], 120) if last else ''}"

    await progress.say("running in the notebook's kernel")
    reply = await run.link.execute(code, on_output=on_output)
    merged = merge_streams(outputs)
    parts = [p for o in merged for p in output_parts(o)] or [Part("text", "(no output)")]
    meta: dict[str, JsonValue] = {"executionCount": reply.get("execution_count"), "status": reply["status"]}
    error = None
    if reply["status"] == "error":
        error = DshError(f"{reply.get('ename')}: {reply.get('evalue')}", code="PYTHON_ERROR")
    return Outcome(fit(parts), meta=meta, error=error)


_CELL_TYPES: dict[str, CellType] = {"code": "code", "markdown": "markdown", "raw": "raw"}


def _cell_type(value: str | None) -> CellType:
    found = _CELL_TYPES.get(value or "")
    if found is None:
        raise DshError("cell_type is code, markdown or raw", code="BAD_ARGS")
    return found


async def insert_cell(run: ExternalCallRun, notebooks: Notebooks) -> Outcome:
    source = _str(run.arguments, "source") or ""
    anchor = _str(run.arguments, "cell_id", required=False)
    kind = _cell_type(_str(run.arguments, "cell_type", required=False) or "code")
    where = _str(run.arguments, "where", required=False) or "below"
    if where not in ("below", "above"):
        raise DshError("where is below or above", code="BAD_ARGS")
    prov = provenance(run.ctx.client, run.call_id, run.session_id, "insert_cell")

    def edit(nb: Notebook) -> Inserted:
        cells = nb["cells"]
        index = len(cells) if anchor is None else find_cell(nb, anchor) + (1 if where == "below" else 0)
        nb["nbformat_minor"] = max(5, nb["nbformat_minor"])  # cell ids
        cell = new_cell(kind, source, {"dsh": {"provenance": dump(prov)}})
        cells.insert(index, cell)
        return {"cellId": cell.get("id", ""), "index": index}

    done, where_made = await notebooks.change(run.notebook, edit)
    return Outcome([Part("text", f"inserted {kind} cell {done['cellId']} at position {done['index']} of {run.notebook}, "
                                 f"{where_made}")],
                   meta={"cellId": done["cellId"], "index": done["index"], "where": where_made, "provenance": dump(prov)})


async def edit_cell(run: ExternalCallRun, notebooks: Notebooks) -> Outcome:
    cell_id = _str(run.arguments, "cell_id") or ""
    source = _str(run.arguments, "source") or ""
    expected = _str(run.arguments, "expected_source", required=False)
    given = _str(run.arguments, "cell_type", required=False)
    kind = _cell_type(given) if given is not None else None
    prov = provenance(run.ctx.client, run.call_id, run.session_id, "edit_cell")

    def edit(nb: Notebook) -> Edited:
        index = find_cell(nb, cell_id)
        cell = nb["cells"][index]
        before = text_of(cell["source"])
        if expected is not None and before != expected:
            raise DshError(f"cell {cell_id} is no longer what you read (it was changed meanwhile): nothing was written; "
                           "read it again", code="EDIT_CONFLICT")
        # the new source (a code cell's outputs cleared), as the cell's own type or the one asked for
        changed = new_cell(kind or cell["cell_type"], source, cell["metadata"], cell_id=cell_id)
        if changed["cell_type"] != "code" and cell["cell_type"] != "code" and "attachments" in cell:
            changed["attachments"] = cell["attachments"]
        set_provenance(changed, prov)
        nb["cells"][index] = changed
        return {"cellId": cell_id, "before": clip(before, 2000)}

    done, where_made = await notebooks.change(run.notebook, edit)
    return Outcome([Part("text", f"edited cell {cell_id} of {run.notebook}, {where_made}")],
                   meta={"cellId": done["cellId"], "before": done["before"], "where": where_made,
                         "provenance": dump(prov)})


async def inspect_var(run: ExternalCallRun, notebooks: Notebooks) -> Outcome:
    name = _str(run.arguments, "name") or ""
    info = await run.link.guard(run.link.inspect(name))
    return Outcome([Part("text", json.dumps(info, indent=1, ensure_ascii=False))], meta={"variable": name})


async def session_events(run: ExternalCallRun, notebooks: Notebooks) -> Outcome:
    since = run.arguments.get("since_seq", -1)
    limit = run.arguments.get("limit", 200)
    if not isinstance(since, int) or not isinstance(limit, int):
        raise DshError("since_seq and limit are integers", code="BAD_ARGS")
    args = build(EventsArgs, session_id=run.session_id, since_seq=since, limit=limit)
    page = await run.link.guard(run.link.wire.rpc("session/events", args, EventsPage))
    lines = "\n".join(json.dumps(e, ensure_ascii=False) for e in page.events)
    more = " (more after these: ask again from the last seq shown)" if page.more else ""
    text = f"session {run.session_id}: events after seq {since} (last seq {page.last_seq}){more}\n{lines}"
    return Outcome([Part("text", clip(text, 150_000))], meta={"lastSeq": page.last_seq})


Body = Callable[[ExternalCallRun, Notebooks], Awaitable[Outcome]]
"""A tool's body: what it does with the notebook, in its call's session."""

BODIES: dict[ExternalTool, Body] = {"read_notebook": read_notebook, "execute_code": execute_code, "insert_cell": insert_cell,
          "edit_cell": edit_cell, "inspect_var": inspect_var, "session_events": session_events}
