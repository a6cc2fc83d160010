"""The notebook-native ``python`` tool: run code in the notebook's own namespace (DESIGN §6).

The code runs **on the kernel's main thread** (through a :class:`MainThreadRunner`), in the same
``user_ns`` the notebook's cells use, so the agent can inspect the user's data and leave variables
behind. The model gets back what was printed (stdout and stderr), the ``repr`` of the last
expression (as in a cell), and on failure the traceback text, then one ``[namespace]`` line: the
names the call added, rebound and deleted (:mod:`.nsdiff`; the full diff is the result's ``meta``).
Processes the code starts (``subprocess``, ``setsid``, ``nohup``, ``fork``, a double fork that
clears its environment) are killed when the call ends: the kernel is a child subreaper while the
call runs (:class:`~..tools.reaper.CallSubreaper`), so none leaves its process tree, and
:class:`~..tools.watchdog.CallProcesses` ends them; the result says how many; long-lived
ones belong in a notebook cell. Its policy is ``ask``: it is subject to approval unless the
session runs with ``--approve auto``.
"""

from __future__ import annotations

import ast
import contextlib
import io
import sys
import traceback
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass
from typing import Any, cast

from pydantic import JsonValue

from ...checkpoint import variables
from ...redaction import secrets_hidden
from ...tools.base import Tool, ToolContext, ToolOutput
from ...tools.kernel_tools import PYTHON, PythonArgs
from ...tools.reaper import CallSubreaper
from ...tools.watchdog import CallProcesses
from . import nsdiff
from .mainthread import MainThreadRunner

MAX_SECTION = 20_000


@dataclass(frozen=True)
class PythonRun:
    stdout: str
    stderr: str
    value: str | None
    error: str | None

    def to_text(self) -> str:
        parts: list[str] = []
        if self.stdout:
            parts.append(f"[stdout]\n{_cap(self.stdout)}")
        if self.stderr:
            parts.append(f"[stderr]\n{_cap(self.stderr)}")
        if self.value is not None:
            parts.append(f"[value]\n{_cap(self.value)}")
        if self.error:
            parts.append(f"[error]\n{_cap(self.error)}")
        return "\n".join(parts) if parts else "(no output)"


def _cap(text: str) -> str:
    if len(text) <= MAX_SECTION:
        return text.rstrip("\n")
    half = MAX_SECTION // 2
    return f"{text[:half]}\n… [{len(text) - MAX_SECTION} characters elided] …\n{text[-half:]}".rstrip("\n")


def run_python(code: str, namespace: MutableMapping[str, Any]) -> PythonRun:
    """Execute ``code`` in ``namespace`` on the calling thread (must be the main thread)."""
    out, err = io.StringIO(), io.StringIO()
    value: str | None = None
    error: str | None = None
    try:
        tree = ast.parse(code, filename="<dsh-python>", mode="exec")
    except SyntaxError:
        return PythonRun("", "", None, "".join(traceback.format_exception_only(*sys.exc_info()[:2])))
    last: ast.expr | None = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = tree.body.pop().value  # type: ignore[attr-defined]
    ns: Any = namespace
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), secrets_hidden():  # issue 21
        try:
            exec(compile(tree, "<dsh-python>", "exec"), ns)
            if last is not None:
                result = eval(compile(ast.Expression(last), "<dsh-python>", "eval"), ns)
                if result is not None:
                    value = repr(result)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # SystemExit included: user code must not end the kernel
            error = _format_user_traceback(exc)
    return PythonRun(out.getvalue(), err.getvalue(), value, error)


def _format_user_traceback(exc: BaseException) -> str:
    """The traceback without this module's frames (only the user code's)."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
        tb = tb.tb_next
    return "".join(traceback.format_exception(type(exc), exc, tb))


def make_python_tool(
    namespace: Callable[[], MutableMapping[str, Any]], runner: MainThreadRunner | None = None
) -> Tool:
    """The ``python`` tool bound to a notebook namespace and a main-thread runner."""
    variables.use_namespace(namespace)  # a rewind in a new kernel puts kept variables back here

    async def execute(args: PythonArgs, ctx: ToolContext) -> ToolOutput:
        main: MainThreadRunner | None = runner or ctx.main_thread
        if main is None:
            return ToolOutput("the python tool needs a notebook main thread", is_error=True, code="NO_MAIN_THREAD")
        ctx.progress("waiting for the notebook's main thread")
        def call() -> tuple[PythonRun, nsdiff.NamespaceDiff, int]:
            ns = namespace()
            before = nsdiff.snapshot(ns)
            variables.before_python(ctx.session_id, ns, args.code)  # checkpoints: keep what it may rebind
            # what the code starts ends with the call; detached ones too (the kernel adopts them)
            with CallSubreaper(), CallProcesses() as procs:
                run = run_python(args.code, ns)
            changed = nsdiff.diff(before, nsdiff.snapshot(ns))
            variables.after_python(ctx.session_id, cast(Any, changed))
            return run, changed, procs.stopped

        try:
            run, changes, stopped = await main.call(call)
        except Exception as exc:
            return ToolOutput(f"python did not run: {exc}", is_error=True, code=getattr(exc, "code", "TOOL_RAISED"))
        text = f"{run.to_text()}\n[namespace] {nsdiff.short_form(changes)}"
        if stopped:
            text += (f"\n[processes] {stopped} process{'es' if stopped != 1 else ''} the code started "
                     "were stopped at the end of the call (start long-lived ones in a notebook cell)")
        return ToolOutput(text, is_error=run.error is not None,
                          code="PYTHON_ERROR" if run.error else None, meta={"namespace": cast(JsonValue, changes)})

    return PYTHON.bind(execute)  # declared in tools/kernel_tools.py, with what policy reads of it
