"""The suite's four tiers (issue 40 item 7): what a test needs decides where it runs.

- ``unit``: in-process — no subprocess, kernel, browser or network beyond a loopback server in the
  test's own process; fast (``make test-fast``).
- ``integration``: real subprocesses, kernels, servers, the real local model.
- ``e2e``: JupyterLab in Chromium, nbconvert / papermill / nbclient walkthroughs, console clients
  (``jupyter console`` and terminal sessions driven with pexpect).
- ``scale``: huge logs, 100k events, benchmarks run as tests.

A test's tier is its explicit marker (``@pytest.mark.integration``, or a module's ``pytestmark``)
or, without one, :func:`infer`: the marker ``browser`` → e2e; else the code the test and its fixtures
reach inside ``tests/`` (helpers and their classes followed, the package and libraries not)
naming Playwright, nbclient, papermill, nbconvert, pexpect or jupyter_console → e2e; else the
markers ``kernel``, ``realmodel``, ``slow`` or code naming subprocess, multiprocessing, pty,
jupyter_client or a process call of ``os`` (``fork``, ``system`` …) → integration; else unit.

What the code analysis cannot see — a process the package starts (the bash tool, a sandbox probe)
— the unit tier's guard sees as the test runs (tests/support/tier_guard.py): a ``unit`` test that
starts a process or connects beyond loopback fails at its teardown, naming what it started."""

from __future__ import annotations

import dis
import functools
import importlib
import inspect
import os
import types
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

TIERS = ("unit", "integration", "e2e", "scale")
TESTS = str(Path(__file__).resolve().parents[1]) + os.sep
E2E_PACKAGES = ("playwright", "nbclient", "papermill", "nbconvert", "pexpect", "jupyter_console")
PROCESS_PACKAGES = ("subprocess", "_posixsubprocess", "multiprocessing", "pty", "asyncio.subprocess",
                    "concurrent.futures.process", "jupyter_client")
OS_PROCESS_CALLS = frozenset({"fork", "forkpty", "system", "popen", "posix_spawn", "posix_spawnp", "spawnv",
                              "spawnve", "spawnvp", "spawnvpe", "spawnl", "spawnle", "spawnlp", "spawnlpe"})
INTEGRATION_MARKERS = ("kernel", "realmodel", "slow")
# every collected test (before ``-m`` deselects any): node id → (its tiers, why, a problem or None)
TIER_TABLE = pytest.StashKey[dict[str, tuple[list[str], str, "str | None"]]]()


# ---------- what a test reaches ------------------------------------------------------------------

def _under(module: str, packages: Iterable[str]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


def _in_tests(obj: Any) -> bool:
    code = getattr(obj, "__code__", None)
    if code is not None:
        return str(code.co_filename).startswith(TESTS)
    module = obj if isinstance(obj, types.ModuleType) else inspect.getmodule(obj)
    return str(getattr(module, "__file__", None) or "").startswith(TESTS)


def _library_signal(obj: Any) -> str | None:
    """``e2e`` / ``process`` for an object of a library that drives a front end / starts processes."""
    name = obj.__name__ if isinstance(obj, types.ModuleType) else getattr(obj, "__module__", None)
    if not isinstance(name, str):
        return None
    if name in ("os", "posix"):
        return "process" if getattr(obj, "__name__", None) in OS_PROCESS_CALLS else None
    return _module_signal(name)


@functools.cache
def _module_signal(name: str) -> str | None:
    if _under(name, E2E_PACKAGES):
        return "e2e"
    if _under(name, PROCESS_PACKAGES):
        return "process"
    return None


class Reach:
    """The signals (``e2e``, ``process``) the code of some functions reaches, each with where it was seen."""

    def __init__(self) -> None:
        self.signals: dict[str, str] = {}
        self._modules: set[str] = set()  # the helper modules looked into (a package names itself)

    def function(self, fn: Any) -> None:
        fn = inspect.unwrap(getattr(fn, "__func__", fn))
        if getattr(fn, "__code__", None) is not None:
            for signal, why in _function_signals(fn).items():
                self.signals.setdefault(signal, why)

    def scan(self, fn: Any) -> None:
        """What ``fn``'s own code names: its globals, closure values and the modules it imports."""
        code = fn.__code__
        where = f"{fn.__module__}.{fn.__qualname__}"
        cells = [(name, cell) for name, cell in zip(code.co_freevars, fn.__closure__ or (), strict=False) if _filled(cell)]
        found = {name: cell.cell_contents for name, cell in cells}
        for co in _codes(code):
            for name in co.co_names:
                obj = found.get(name, fn.__globals__.get(name, _MISSING))
                if obj is not _MISSING:
                    self.object(obj, co.co_names, where)
            for module in _imports(co):  # an import inside the function
                if _under(module, ("tests",)):
                    try:
                        self.object(importlib.import_module(module), co.co_names, where)
                    except ImportError:
                        pass
                else:
                    self._note(_library_signal(types.ModuleType(module)), f"{where} imports {module}")

    def object(self, obj: Any, names: tuple[str, ...], where: str) -> None:
        if isinstance(obj, types.ModuleType):
            if _in_tests(obj):  # a helper module: what the code uses of it
                if obj.__name__ in self._modules:
                    return
                self._modules.add(obj.__name__)
                for name in names:
                    if name in vars(obj):
                        self.object(vars(obj)[name], names, where)
                return
            if not self._note(_library_signal(obj), f"{where} uses {obj.__name__}"):
                for name in names:  # os.fork, asyncio.create_subprocess_exec
                    # the module's own names only: getattr would run a module __getattr__ (numpy
                    # warns for `np.object`), and what a test calls is defined in the module
                    attr = vars(obj).get(name)
                    if attr is not None and not isinstance(attr, types.ModuleType):
                        self._note(_library_signal(attr), f"{where} calls {obj.__name__}.{name}")
            return
        if isinstance(obj, type):
            if _in_tests(obj):
                for klass in obj.__mro__:
                    if _in_tests(klass):
                        for member in vars(klass).values():
                            for fn in _functions(member):
                                self.function(fn)
            else:
                self._note(_library_signal(obj), f"{where} uses {obj.__module__}.{obj.__qualname__}")
            return
        if isinstance(obj, functools.partial):
            obj = obj.func
        if hasattr(obj, "__wrapped__"):  # functools.cache, wraps
            obj = inspect.unwrap(obj)
        if inspect.isfunction(obj) or inspect.ismethod(obj):
            if _in_tests(obj):
                self.function(obj)
                return
        if callable(obj):
            self._note(_library_signal(obj), f"{where} calls {getattr(obj, '__module__', '?')}."
                                             f"{getattr(obj, '__qualname__', obj)}")

    def _note(self, signal: str | None, why: str) -> bool:
        if signal is not None:
            self.signals.setdefault(signal, why)
        return signal is not None


_MISSING = object()
_MEMO: dict[types.CodeType, dict[str, str]] = {}  # a function's code → what it reaches (once a run)
_ACTIVE: set[types.CodeType] = set()
_IMPORT_NAME = dis.opmap["IMPORT_NAME"]


def _function_signals(fn: Any) -> dict[str, str]:
    code = fn.__code__
    if code in _MEMO:
        return _MEMO[code]
    if code in _ACTIVE:  # a helper that reaches itself again: what it reaches is being found
        return {}
    _ACTIVE.add(code)
    try:
        found = Reach()
        found.scan(fn)
    finally:
        _ACTIVE.discard(code)
    _MEMO[code] = found.signals
    return found.signals


def _filled(cell: Any) -> bool:
    try:
        cell.cell_contents  # noqa: B018
    except ValueError:
        return False
    return True


def _codes(code: types.CodeType) -> Iterable[types.CodeType]:
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _codes(const)


def _imports(code: types.CodeType) -> list[str]:
    if _IMPORT_NAME not in code.co_code[::2]:  # the opcodes (the cheap test: most code imports nothing)
        return []
    return [str(i.argval) for i in dis.get_instructions(code) if i.opname == "IMPORT_NAME" and i.argval]


def _functions(member: Any) -> Iterable[Any]:
    if isinstance(member, (staticmethod, classmethod)):
        yield member.__func__
    elif isinstance(member, property):
        yield from (f for f in (member.fget, member.fset, member.fdel) if f is not None)
    elif inspect.isfunction(member):
        yield member


def reach(item: pytest.Item) -> dict[str, str]:
    """What ``item``'s function and every fixture it uses (defined in ``tests/``) reach."""
    found = Reach()
    function = getattr(item, "function", None)
    if function is not None:
        found.function(function)
    info = getattr(item, "_fixtureinfo", None)
    for name in getattr(item, "fixturenames", ()):
        for fixturedef in (info.name2fixturedefs.get(name, ()) if info is not None else ()):
            if _in_tests(fixturedef.func):
                found.function(fixturedef.func)
    return found.signals


def infer(item: pytest.Item) -> tuple[str, str]:
    """The tier ``item`` needs, and why."""
    if item.get_closest_marker("browser"):
        return "e2e", "marker browser"
    signals = reach(item)
    if "e2e" in signals:
        return "e2e", signals["e2e"]
    marker = next((m for m in INTEGRATION_MARKERS if item.get_closest_marker(m)), None)
    if marker is not None:
        return "integration", f"marker {marker}"
    if "process" in signals:
        return "integration", signals["process"]
    return "unit", "in-process"


def explicit_tiers(item: pytest.Item) -> list[str]:
    return sorted({m.name for m in item.iter_markers() if m.name in TIERS})


def classify(item: pytest.Item) -> tuple[list[str], str, str | None]:
    """Mark ``item`` with its tier unless it has one: (its tiers, why, a problem or ``None``)."""
    given = explicit_tiers(item)
    if not given:
        tier, why = infer(item)
        item.add_marker(getattr(pytest.mark, tier))
        return [tier], why, None
    if len(given) > 1:
        return given, "marked", f"has {len(given)} tiers ({', '.join(given)}); a test has exactly one"
    if given == ["unit"]:
        tier, why = infer(item)
        if tier != "unit":
            return given, "marked", f"is marked unit but needs {tier} ({why})"
    return given, "marked", None


__all__ = ["TIERS", "TIER_TABLE", "Reach", "classify", "explicit_tiers", "infer", "reach"]
