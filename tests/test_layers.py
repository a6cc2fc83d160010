"""The floors of the package as a test (issue 25 item 1).

Every unit of ``dsh_notebook`` (a sub-package, or a top-level module) has a rank; an import may
only go to a unit of the same rank or lower. Checked over EVERY import of every file — at the top,
inside functions, inside ``if TYPE_CHECKING:`` — as the AST has them. Units of one rank may import
each other but never in a circle (no package cycle), and at most the file circles listed in
``FILE_CIRCLES`` remain, each with its reason.

Run ``python -m pytest tests/test_layers.py`` to see what a change breaks; the messages name the
file, the line and the import.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from pathlib import Path

from tests.support.source import ONE_WORKER
from tests.test_rules import PKG, imported, modules, ownership_entries

pytestmark = ONE_WORKER  # the package's files parsed once, in one worker

# Ground first. A unit may import its own rank and the ranks below it, never a rank above.
RANKS: tuple[tuple[str, ...], ...] = (
    # the ground: the wire's vocabulary, coded errors, redaction, the glossary's words, settings,
    # the bundled demo workspace (and what a copy of it is allowed), the provider table
    ("wire", "errors", "redaction", "glossary", "config", "demo", "providers"),
    ("session",),  # the event log: writer, store, folds over events
    ("analysis",),  # what a session did, took and cost (stats), and how two sessions compare
    # a session's log read a page at a time for the inspector (rows, stats, timeline, a turn, a
    # request diff, messages) and the event query language they share with `show --search`
    ("pages",),
    ("checkpoint",),  # workspace snapshots per turn, rewind (reads and forks session logs)
    ("models",),  # model adapters (replay reads session logs) and the price catalog's users
    ("context", "scope"),  # the harness context's hooks and the scoped namespace
    ("tools",),  # tools, their runtime, approval rules, the sandbox, MCP
    ("agent", "doctor"),  # the loop; the doctor checks what tools need
    ("cmdline",),  # the command registry: every command and flag of the CLI and %dsh, their parsers, help, completion
    ("observe",),  # observers of live sessions (search index, OpenTelemetry); exports of saved ones
    ("host",),  # sessions served over the wire (stdio, comm): given its observers and checkpoints
    ("launcher",),  # where a Host is built for real: hands it the observers and the checkpoint store
    ("client",),  # the Python side that talks to a host
    # the notebook, floor by floor: the notebook as the agent's context (cells, variables, the main
    # thread, the python and notebook tools); one turn in a cell (rendering, sinks, TurnResult,
    # approvals, the debugger console, the one-line error); the widgets; the %dsh magic on top
    ("notebook", "notebook/context"),
    ("notebook/cell",),
    ("notebook/widgets",),
    ("notebook/magic",),
    ("external",),  # external agents over MCP: the Jupyter Server extension, the kernel's comm, mcp-bridge
    ("__init__",),  # the public face: lazy re-exports of the client, the widgets, the policy hook
    ("kernel",),  # the agent kernel (ipykernel) over the magics; the walkthrough runner
    ("cli", "cli_run", "cli_tty", "__main__", "teach"),  # commands; ``run`` on a terminal
    ("testing",),  # fakes for tests (models, a loopback OpenAI server, log builders): nothing imports it
)

# Upward imports that stay for now: only inside agent/ (rewritten by another change).
# TODO(agent rewrite, issue 25 item 2): empty this list.
KNOWN_UPWARD: frozenset[tuple[str, str]] = frozenset()

# What a unit is handed from outside instead of importing it, though the rank would allow the
# import (issue 40 item 4): the host is given its observers and its checkpoint store by the launcher
# (``host/parts.py`` declares what it needs of them), so neither is chosen on the host's floor.
GIVEN_FROM_OUTSIDE: dict[str, frozenset[str]] = {"host": frozenset({"observe", "checkpoint"})}

# File circles that remain, each justified. A circle is the set of files (relative to the package).
# None is left: the turn loop types the Agent as ``steps.AgentParts`` and the policy the runtime as
# ``policy.PolicyRuntime`` (Protocols), so even the imports under TYPE_CHECKING run one way.
FILE_CIRCLES: dict[frozenset[str], str] = {}


def unit_of(rel_path: str) -> str:
    """The unit a file belongs to: its top-level package or module; inside ``notebook/``, its
    sub-package (``notebook/magic``), so the notebook's own floors are pinned too."""
    parts = rel_path.split("/")
    if parts[0] == "notebook" and len(parts) > 2:
        return "/".join(parts[:2])
    return parts[0].removesuffix(".py")


def resolve(name: str) -> str | None:
    """A dotted ``dsh_notebook...`` name → the file it loads (the longest prefix that is a module)."""
    parts = name.split(".")
    if parts[0] != "dsh_notebook":
        return None
    for n in range(len(parts), 0, -1):
        base = PKG.joinpath(*parts[1:n])
        for candidate in (base.with_suffix(".py") if n > 1 else None, base / "__init__.py"):
            if candidate is not None and candidate.is_file():
                return candidate.relative_to(PKG).as_posix()
    return None


@functools.cache
def file_edges() -> dict[str, list[tuple[int, str]]]:
    """file → [(line, file it imports)] over the whole package (read once per test process; the
    tests only read it)."""
    edges: dict[str, list[tuple[int, str]]] = {}
    for path in modules():
        rel = path.relative_to(PKG).as_posix()
        if "demo/workspace" in rel:
            continue
        out = edges.setdefault(rel, [])
        for line, name in imported(path):
            target = resolve(name)
            if target is not None and target != rel:
                out.append((line, target))
    return edges


def rank_of() -> dict[str, int]:
    return {unit: r for r, units in enumerate(RANKS) for unit in units}


def strongly_connected(graph: dict[str, set[str]]) -> list[set[str]]:
    """Tarjan's components with more than one member."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(comp)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def _graph(pairs: Iterable[tuple[str, str]]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for a, b in pairs:
        graph.setdefault(a, set()).add(b)
    return graph


def test_every_unit_has_a_rank() -> None:
    units = {unit_of(rel) for rel in file_edges()}
    assert units - set(rank_of()) == set(), "give these units a rank in RANKS"


def test_no_import_goes_up_a_floor() -> None:
    ranks = rank_of()
    bad = []
    for src, targets in file_edges().items():
        for line, dst in targets:
            a, b = unit_of(src), unit_of(dst)
            if ranks[b] > ranks[a] and (a, b) not in KNOWN_UPWARD:
                bad.append(f"{src}:{line} ({a}, floor {ranks[a]}) imports {dst} ({b}, floor {ranks[b]})")
    assert bad == [], "imports that run up a floor:\n" + "\n".join(bad)


def imports_of_what_is_given(edges: dict[str, list[tuple[int, str]]]) -> list[str]:
    """The imports ``GIVEN_FROM_OUTSIDE`` forbids, as ``file:line imports file``."""
    return [f"{src}:{line} ({unit_of(src)}) imports {dst} ({unit_of(dst)}): it is given that from outside"
            for src, targets in edges.items() for line, dst in targets
            if unit_of(dst) in GIVEN_FROM_OUTSIDE.get(unit_of(src), ())]


def test_the_host_is_given_its_observers_and_checkpoints_and_imports_neither() -> None:
    bad = imports_of_what_is_given(file_edges())
    assert bad == [], ("pass these in through host/parts.py (HostParts, built in launcher.py), do not import "
                       "them:\n" + "\n".join(bad))
    # the rule sees an import of either (the ones the host had before it was given them)
    old = {"host/registry.py": [(27, "checkpoint/turns.py"), (39, "observe/__init__.py")],
           "host/controller.py": [(192, "checkpoint/host_rewind.py")], "host/pages.py": [(28, "session/saved.py")]}
    assert len(imports_of_what_is_given(old)) == 3


def test_no_package_cycle() -> None:
    pairs = [(unit_of(s), unit_of(d)) for s, ts in file_edges().items() for _, d in ts if unit_of(s) != unit_of(d)]
    assert strongly_connected(_graph(pairs)) == []


def test_at_most_two_file_circles_each_justified() -> None:
    pairs = [(s, d) for s, ts in file_edges().items() for _, d in ts]
    circles = [frozenset(c) for c in strongly_connected(_graph(pairs))]
    assert len(FILE_CIRCLES) <= 2
    unexplained = [sorted(c) for c in circles if c not in FILE_CIRCLES]
    assert unexplained == [], "file circles (import cycles between files):\n" + "\n".join(map(str, unexplained))


JS_SRC = Path(__file__).resolve().parents[1] / "js" / "src"
_TS_IMPORT = re.compile(r"""^\s*(?:import|export)\b[^;]*?\bfrom\s+["'](\.[^"']+)["']""", re.M)


def ts_edges() -> dict[str, set[str]]:
    """js/src's relative imports (``import type`` too), file → files."""
    edges: dict[str, set[str]] = {}
    for f in JS_SRC.rglob("*.ts"):
        rel = f.relative_to(JS_SRC).as_posix()
        for target in _TS_IMPORT.findall(f.read_text(encoding="utf-8")):
            resolved = (f.parent / target).resolve()
            for cand in (resolved.with_suffix(".ts"), resolved / "index.ts"):
                if cand.is_file():
                    edges.setdefault(rel, set()).add(cand.relative_to(JS_SRC).as_posix())
                    break
    return edges


def test_no_import_circle_in_the_widget_code() -> None:
    pairs = [(s, d) for s, ts in ts_edges().items() for d in ts]
    assert len(pairs) > 100  # the checker reads the imports
    assert strongly_connected(_graph(pairs)) == []


def test_the_checker_sees_an_upward_import_inside_a_function_and_under_type_checking(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..client import model\n"
                     "def f():\n    from ..notebook.magic import magics\n")
    names = {resolve(n) for _, n in imported(probe, ["dsh_notebook", "session"])} - {None}
    assert names == {"client/model.py", "notebook/magic/magics.py"}
    ranks = rank_of()
    assert all(ranks[unit_of(n)] > ranks["session"] for n in names if n)


def test_the_ownership_map_follows_the_ranks() -> None:
    """The ownership map (docs/architecture/ownership-map.md) lists the units floor by floor, ground first."""
    ranks = rank_of()
    seen = [ranks[unit_of(e)] for e in ownership_entries() if not e.startswith("js/") and unit_of(e) in ranks]
    assert seen == sorted(seen), "order the ownership map (docs/architecture/ownership-map.md) by floor (ground first)"
