"""The tools a notebook kernel adds, declared: ``python``, ``notebook_read``, ``inspect_var``,
``notebook_insert``.

Their bodies need the kernel (its namespace, its cells, its main thread) and live in the notebook
layer (:mod:`dsh_notebook.notebook.context.python_tool`, :mod:`dsh_notebook.notebook.context.notebook_tools`),
which binds each :class:`~.base.ToolSpec` here to its body (:meth:`~.base.ToolSpec.bind`). Their
declarations live here, beside the built-ins, so that what policy and the modes read of them —
what a call does, what a rule matches, the default approval — is known wherever a decision is
made: in a live session and in ``policy check`` over a saved notebook session.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from .base import ToolSpec, argument, whole_arguments

PYTHON_DESCRIPTION = (
    "Run Python code in the user's live Jupyter notebook namespace (their variables, imports and "
    "data are there; variables you define stay). Returns printed output, the repr of the last "
    "expression, and the traceback if it raised. Use it to inspect notebook data; prefer short, "
    "read-only snippets. Needs the user's approval."
)


class PythonArgs(BaseModel):
    code: str = Field(description="Python source; the value of a final expression is returned")


class NotebookReadArgs(BaseModel):
    source: str = Field("kernel", description='"kernel": cells run in this kernel so far (default); "file": the saved .ipynb')
    last: int | None = Field(None, description="only the last N cells")


class InspectVarArgs(BaseModel):
    name: str = Field(description="a notebook variable, optionally dotted: df or model.weights")


class NotebookInsertArgs(BaseModel):
    code: str = Field(description="the source of the new cell")
    markdown: str | None = Field(None, description="an explanation shown at the top of the new cell")


PYTHON = ToolSpec("python", PYTHON_DESCRIPTION, PythonArgs, concurrency_safe=False, approval="ask", effect="execute",
                  timeout_s=None, subject=argument("code"))
NOTEBOOK_READ = ToolSpec(
    "notebook_read", "Read this notebook: the cells run in this kernel so far with their outputs "
    '(source "kernel"), or the saved .ipynb (source "file"). Trimmed; last=N for the latest only.',
    NotebookReadArgs, concurrency_safe=False, approval="allow", timeout_s=None, effect="read", subject=whole_arguments)
INSPECT_VAR = ToolSpec(
    "inspect_var", "Describe a notebook variable without running code: type, shape, dtype, length, "
    "columns of a DataFrame, a short repr.", InspectVarArgs,
    concurrency_safe=False, approval="allow", timeout_s=None, effect="read", subject=whole_arguments)
NOTEBOOK_INSERT = ToolSpec(
    "notebook_insert", "Propose a new cell below the current one (the user sees and runs it). "
    "Needs the user's approval.", NotebookInsertArgs,
    concurrency_safe=False, approval="ask", timeout_s=None, effect="notebook", subject=whole_arguments)

KERNEL_TOOLS: tuple[ToolSpec, ...] = (NOTEBOOK_READ, INSPECT_VAR, NOTEBOOK_INSERT, PYTHON)
"""In the order the plan-mode prompt names the reads in (after the built-ins')."""

__all__ = [
    "INSPECT_VAR", "KERNEL_TOOLS", "NOTEBOOK_INSERT", "NOTEBOOK_READ", "PYTHON", "PYTHON_DESCRIPTION", "InspectVarArgs",
    "NotebookInsertArgs", "NotebookReadArgs", "PythonArgs",
]  # fmt: skip
