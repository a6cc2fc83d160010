"""Tools for a notebook session: the notebook as the agent's context (registered with ``python``).

- ``notebook_read {source?, last?}`` — the cells run in this kernel so far, in order, each with its
  execution count, cell id and outputs, trimmed (``source: "kernel"``, the default); or the saved
  ``.ipynb`` the front end named (``source: "file"``, from ``JPY_SESSION_NAME``).
- ``inspect_var {name}`` — type, shape, dtype, length, a short repr, DataFrame columns; no user
  code runs (:mod:`.inspection`).
- ``notebook_insert {code, markdown?}`` — proposes a new cell below the current one through
  IPython's ``set_next_input`` payload (JupyterLab and Notebook 7 insert it when the cell's
  execution replies). Needs approval. The payload makes a code cell: ``markdown`` becomes its
  leading comment; in the agent kernel the code is marked ``%%python`` so it runs as Python.

All three run on the kernel's main thread (the namespace and the history live there). What they
return is redacted (:func:`~dsh_notebook.errors.redact`): a key typed into a cell (``%env
OPENAI_API_KEY=…``) or held by a variable is not sent to the model.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from pydantic import JsonValue

from ...errors import redact
from ...tools.base import Tool, ToolContext, ToolOutput
from ...tools.kernel_tools import (
    INSPECT_VAR,
    NOTEBOOK_INSERT,
    NOTEBOOK_READ,
    InspectVarArgs,
    NotebookInsertArgs,
    NotebookReadArgs,
)
from .cells import CellLog, notebook_path, read_ipynb
from .inspection import _has_static, describe, static_attr
from .mainthread import MainThreadRunner

MAX_SOURCE = 1500
MAX_OUTPUT = 1500
MAX_TOTAL = 20_000


def _trim(text: str, limit: int) -> str:
    text = text.rstrip("\n")
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n… [{len(text) - limit} characters elided] …\n{text[-half:]}"


def _fit(blocks: list[str]) -> str:
    """Join blocks newest-last, dropping the oldest when over the total budget."""
    kept: list[str] = []
    total = 0
    for block in reversed(blocks):
        if total + len(block) > MAX_TOTAL and kept:
            kept.append(f"… {len(blocks) - len(kept)} earlier cells not shown (use last=N) …")
            break
        kept.append(block)
        total += len(block)
    return "\n\n".join(reversed(kept))


def read_kernel_cells(log: CellLog, last: int | None) -> str:
    cells = log.cells()
    if last:
        cells = cells[-last:]
    blocks = []
    for cell in cells:
        head = f"[{cell.execution_count}]" + (f" cell {cell.cell_id}" if cell.cell_id else "")
        block = f"{head}\n{_trim(cell.source, MAX_SOURCE)}"
        output = cell.output_text()
        if output.strip():
            block += f"\n--- output ---\n{_trim(output, MAX_OUTPUT)}"
        blocks.append(block)
    return redact(_fit(blocks)) if blocks else "(no cells have run in this kernel yet)"


def read_file_cells(last: int | None) -> ToolOutput:
    path = notebook_path()
    if path is None:
        return ToolOutput("the front end named no notebook file for this kernel (JPY_SESSION_NAME); "
                          'use source "kernel"', is_error=True, code="NO_NOTEBOOK_FILE")
    try:
        cells = read_ipynb(path)
    except (OSError, ValueError) as exc:
        return ToolOutput(f"cannot read {path.name}: {exc}", is_error=True, code="BAD_NOTEBOOK_FILE")
    numbered = list(enumerate(cells, 1))[-last:] if last else list(enumerate(cells, 1))
    blocks = []
    for i, cell in numbered:
        count = cell["executionCount"]
        head = f"#{i} {cell['type']}" + (f" [{count}]" if count is not None else "")  # a notebook cell's type, not wire routing
        block = f"{head}\n{_trim(cell['source'], MAX_SOURCE)}"
        if cell["outputs"]:
            block += f"\n--- output ---\n{_trim(chr(10).join(cell['outputs']), MAX_OUTPUT)}"
        blocks.append(block)
    return ToolOutput(redact(f"{path} (as last saved)\n\n" + (_fit(blocks) if blocks else "(no cells)")))


def lookup(namespace: dict[str, Any], dotted: str) -> Any:
    """``df`` or ``obj.attr``: attributes are read statically (no properties of user classes run)."""
    head, *attrs = dotted.strip().split(".")
    if head not in namespace:
        raise KeyError(head)
    value = namespace[head]
    for attr in attrs:
        static = static_attr(value, attr)  # never a (meta)class's __getattribute__
        kind = type(static)
        if issubclass(kind, property | staticmethod | classmethod) or _has_static(kind, "__get__"):
            from .inspection import _trusted

            if not _trusted(value):
                raise AttributeError(f"{attr} is computed by {type(value).__name__} (a property or method); "
                                     "inspect_var does not run it")
            value = getattr(value, attr)
        else:
            value = static
    return value


def make_notebook_tools(shell: Any, log: CellLog, runner: MainThreadRunner | None,
                        *, python_cells: Callable[[], bool] = lambda: False,
                        in_cell: Callable[[], bool] = lambda: True) -> list[Tool]:
    """``notebook_read``, ``inspect_var`` and ``notebook_insert`` bound to one shell."""

    async def on_main(ctx: ToolContext, fn: Callable[[], ToolOutput]) -> ToolOutput:
        main: MainThreadRunner | None = runner or ctx.main_thread
        if main is None:
            return ToolOutput("this tool needs a notebook main thread", is_error=True, code="NO_MAIN_THREAD")
        return await main.call(fn)

    async def notebook_read(args: NotebookReadArgs, ctx: ToolContext) -> ToolOutput:
        last = args.last if args.last and args.last > 0 else None
        if args.source == "file":
            return read_file_cells(last)
        if args.source != "kernel":
            return ToolOutput(f'source must be "kernel" or "file", not {args.source!r}', is_error=True, code="BAD_ARGS")
        return await on_main(ctx, lambda: ToolOutput(read_kernel_cells(log, last)))

    async def inspect_var(args: InspectVarArgs, ctx: ToolContext) -> ToolOutput:
        def run() -> ToolOutput:
            try:
                value = lookup(shell.user_ns, args.name)
            except KeyError as exc:
                return ToolOutput(f"no notebook variable {exc.args[0]!r}", is_error=True, code="UNKNOWN_VARIABLE")
            except AttributeError as exc:
                return ToolOutput(f"{args.name}: {exc}", is_error=True, code="UNKNOWN_VARIABLE")
            info = {"name": args.name, **describe(value)}
            text = redact(json.dumps(info, indent=1, ensure_ascii=False, default=str))
            try:
                meta: dict[str, JsonValue] | None = {"variable": json.loads(text)}
            except ValueError:
                meta = None
            return ToolOutput(text, meta=meta)

        return await on_main(ctx, run)

    async def notebook_insert(args: NotebookInsertArgs, ctx: ToolContext) -> ToolOutput:
        def run() -> ToolOutput:
            text = args.code.rstrip("\n")
            if python_cells() and not text.lstrip().startswith("%"):
                text = "%%python\n" + text
            if args.markdown:
                comment = "\n".join(f"# {line}".rstrip() for line in args.markdown.strip().splitlines())
                text = (text.split("\n", 1)[0] + "\n" + comment + "\n" + text.split("\n", 1)[1]
                        if text.startswith("%%python\n") else comment + "\n" + text)
            shell.set_next_input(text, replace=False)
            where = ("below the current one; the notebook inserts it when this cell finishes" if in_cell() else
                     "(no cell is running now: the notebook inserts it below the next cell the user runs)")
            return ToolOutput(f"proposed a new cell {where} (the user runs it, not you)", meta={"insert": text})

        return await on_main(ctx, run)

    # declared in tools/kernel_tools.py (what policy and the modes read), bound to their bodies here
    return [NOTEBOOK_READ.bind(notebook_read), INSPECT_VAR.bind(inspect_var), NOTEBOOK_INSERT.bind(notebook_insert)]
