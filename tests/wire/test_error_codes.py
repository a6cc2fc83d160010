"""Error codes are a closed set (issue 25 item 3, issue 40 item 5): every code the package can
produce — in Python or in the TypeScript front end, however it is passed — is in
``dsh_notebook.wire.codes.ErrorCode``; every listed code is produced somewhere; the schema (so the
generated TS types) carries the same set.

Two guards, each covering what the other cannot:

- **the type system**: every ``code`` parameter, class attribute and wire constructor is typed
  :data:`ErrorCode` (:func:`untyped_code_positions` finds any that is not), so mypy checks every
  literal that reaches one — through a variable, a dict, a conditional, a helper's return — and
  a code read from the wire is passed on only through ``wire.codes.received``;
- **the scan** (:func:`codes_in`): every UPPER_SNAKE string literal that flows into a code position
  the AST can see — a ``code=`` keyword, a positional argument in a ``code`` parameter's place, a
  ``code`` default, a class's ``code``, an assignment to ``code`` / ``x.code`` / ``*_code``, a
  ``{"code": ...}`` literal, a comparison with ``.code`` / ``code``, a value annotated ``ErrorCode``,
  a ``return`` of a function that returns an ``ErrorCode`` — and the TypeScript's codes
  (:func:`ts_codes_in`): ``coded("X", …)``, ``isCode(x, "X")``, ``Set<ErrorCode>([...])``, an
  ``Extract<ErrorCode, ...>``, ``code: "X"``, and a bare ``code === "X"`` (refused: nothing checks
  it). Those literals are what the "produced somewhere" half counts.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator
from pathlib import Path

from dsh_notebook.errors import ERROR_CODES
from dsh_notebook.wire.schema import wire_schema
from tests.support.source import ONE_WORKER, every_node, parsed

pytestmark = ONE_WORKER  # the package's files parsed once, in one worker
ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "dsh_notebook"
JS = ROOT / "js" / "src"
CODE = re.compile(r"[A-Z][A-Z0-9_]+")
TYPED = re.compile(r"\bErrorCode\b")

# ``code`` parameters and fields that hold no code of ours, by (file, function or class): Python
# source (the python tool, the kernel, the variable tracking, completion), a seccomp errno, a
# provider's own error code before it is mapped to ours, a code read back from a log to be shown,
# and ``received`` itself (the one str → ErrorCode).
NOT_OUR_CODE = {
    ("checkpoint/variables.py", "assigned_names"): "Python source a cell runs",
    ("checkpoint/variables.py", "before_python"): "Python source a cell runs",
    ("kernel/kernel.py", "do_execute"): "the cell's source (ipykernel)",
    ("kernel/kernel.py", "do_complete"): "the cell's source (ipykernel)",
    ("kernel/kernel.py", "do_inspect"): "the cell's source (ipykernel)",
    ("notebook/magic/complete.py", "_line_at"): "the cell's source being completed",
    ("notebook/magic/complete.py", "complete"): "the cell's source being completed",
    ("notebook/context/python_tool.py", "run_python"): "the python tool's source",
    ("tools/kernel_tools.py", "PythonArgs"): "the python tool's source argument",
    ("tools/kernel_tools.py", "NotebookInsertArgs"): "the notebook_insert tool's source argument",
    ("external/kernels.py", "execute"): "the source an external agent's execute_code runs in the kernel",
    ("external/kernel_messages.py", "ExecuteRequest"): "the Jupyter protocol's execute_request: the source the kernel runs",
    ("host/external.py", "_ExternalArgs"): "execute_code's source argument, as the policy reads it",
    ("tools/seccomp.py", "_act_errno"): "an errno number",
    ("models/openai_errors.py", "is_overflow"): "the provider's own error code (mapped to ours there)",
    ("providers.py", "overflows"): "the provider's own error code (its overflow wording)",
    ("testing/openai_chunks.py", "error_reply"): "the fake OpenAI server speaks OpenAI's codes",
    ("client/summary.py", "tool_outcome"): "shows the code a logged tool/result carries",
    ("wire/codes.py", "received"): "the one place a code read from the wire becomes an ErrorCode",
}


def package_files() -> Iterator[tuple[str, ast.Module]]:
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(PKG).as_posix()
        if rel.startswith(("static/", "demo/workspace")):
            continue
        yield rel, parsed(path)


def _code_name(node: ast.AST) -> bool:
    """``code``, ``x.code``, ``error_code``, ``self.exit_code``'s kind of name."""
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
    return name is not None and (name == "code" or name.endswith("_code"))


def _literals(node: ast.AST | None) -> Iterator[ast.Constant]:
    for c in ast.walk(node) if node is not None else ():
        if isinstance(c, ast.Constant) and isinstance(c.value, str) and CODE.fullmatch(c.value):
            yield c


def _params(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.arg]:
    a = fn.args
    params = [*a.posonlyargs, *a.args]
    return params[1:] if params and params[0].arg in ("self", "cls") else params


def code_parameter_places(trees: list[tuple[str, ast.Module]]) -> dict[str, set[int]]:
    """Callable name → the positional indexes of its ``code`` parameter, over the package (a
    class's from its ``__init__``). By name, not by binding: a call ``f(a, b, "X")`` is checked
    wherever some ``f`` of the package takes its code third."""
    places: dict[str, set[int]] = {}
    for rel, tree in trees:
        for node in every_node(tree):
            if isinstance(node, ast.ClassDef):
                for st in node.body:
                    if isinstance(st, ast.FunctionDef) and st.name == "__init__":
                        for i, p in enumerate(_params(st)):
                            if p.arg == "code":
                                places.setdefault(node.name, set()).add(i)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and (rel, node.name) not in NOT_OUR_CODE:
                for i, p in enumerate(_params(node)):
                    if p.arg == "code":
                        places.setdefault(node.name, set()).add(i)
    return places


def codes_in(tree: ast.Module, places: dict[str, set[int]] | None = None) -> dict[str, int]:
    """UPPER_SNAKE literals that flow into a code position of ``tree`` → the first line of each."""
    places = places or {}
    found: dict[str, int] = {}

    def add(node: ast.AST | None) -> None:
        for c in _literals(node):
            found.setdefault(c.value, c.lineno)

    returns_code: list[ast.AST] = []
    for node in every_node(tree):
        if isinstance(node, ast.keyword) and node.arg == "code":
            add(node.value)
        elif isinstance(node, ast.Call):
            fn = node.func
            name = fn.id if isinstance(fn, ast.Name) else fn.attr if isinstance(fn, ast.Attribute) else ""
            for i in places.get(name, ()):
                if i < len(node.args):
                    add(node.args[i])
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = node.args
            positional = [*a.posonlyargs, *a.args]
            pairs = [*zip(a.kwonlyargs, a.kw_defaults, strict=True),
                     *zip(positional[len(positional) - len(a.defaults):], a.defaults, strict=True)]
            for arg, default in pairs:
                if arg.arg == "code":
                    add(default)
            if node.returns is not None and TYPED.search(ast.unparse(node.returns)):
                returns_code.append(node)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            flat = [e for t in targets for e in (t.elts if isinstance(t, ast.Tuple) else [t])]
            typed = isinstance(node, ast.AnnAssign) and TYPED.search(ast.unparse(node.annotation))
            if typed or any(_code_name(t) for t in flat):
                if isinstance(node.value, ast.Tuple) and any(isinstance(t, ast.Tuple) for t in targets) and not typed:
                    # ``text, code = "…", "X"``: only the values in a code name's place
                    for t in targets:
                        if isinstance(t, ast.Tuple):
                            for target, value in zip(t.elts, node.value.elts, strict=False):
                                if _code_name(target):
                                    add(value)
                else:
                    add(node.value)
        elif isinstance(node, ast.Dict):
            for k, v in zip(node.keys, node.values, strict=True):
                if isinstance(k, ast.Constant) and k.value == "code":
                    add(v)
        elif isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(_code_name(s) for s in sides):
                for s in sides:
                    if not _code_name(s):
                        add(s)
    for fn in returns_code:
        for sub in ast.walk(fn):
            if isinstance(sub, ast.Return):
                add(sub.value)
    return found


def raised_codes() -> dict[str, str]:
    """Every code the Python package produces → where it is first written."""
    return dict(_raised_codes(PKG))


@functools.cache
def _raised_codes(pkg: Path) -> dict[str, str]:
    """(once per test process for a package: two tests ask)"""
    trees = list(package_files())
    places = code_parameter_places(trees)
    out: dict[str, str] = {}
    for rel, tree in trees:
        if rel == "wire/codes.py":
            continue
        for code, line in codes_in(tree, places).items():
            out.setdefault(code, f"{rel}:{line}")
    return out


# --- TypeScript ----------------------------------------------------------------------------------

_TS_CODE = r"""["'`]([A-Z][A-Z0-9_]*)["'`]"""
# where tsc checks the code against the generated ErrorCode: coded("X", …), isCode(x, "X"),
# Set<ErrorCode>([...]), Extract<ErrorCode, ...>, `const X: ErrorCode = "X"`, and an object's
# `code: "X"` in a file that types its codes (the object's declared type carries ErrorCode)
_TS_TYPED = (
    re.compile(r"\bcoded\(\s*" + _TS_CODE),
    re.compile(r"\bisCode\([^,()]*,\s*" + _TS_CODE),
    re.compile(r"\bcode\s*:\s*" + _TS_CODE),
)
_TS_TYPED_LISTS = re.compile(r"(?:Set<ErrorCode>\(\[|Extract<ErrorCode,|:\s*ErrorCode(?:\[\])?\s*=)([^;\]>]*)")
# where nothing checks it: a bare comparison with a code read from the wire
_TS_UNTYPED = (
    re.compile(r"\bcode\s*[!=]==?\s*" + _TS_CODE),
    re.compile(_TS_CODE + r"\s*[!=]==?\s*[\w.?]*\bcode\b"),
)


def _line(text: str, at: int) -> int:
    return text.count("\n", 0, at) + 1


def ts_codes_in(text: str, *, untyped_only: bool = False) -> dict[str, int]:
    """The codes a TypeScript file writes in a code position → the first line of each
    (``untyped_only``: only those written where tsc does not check them)."""
    found: dict[str, int] = {}
    for pattern in _TS_UNTYPED if untyped_only else (*_TS_TYPED, *_TS_UNTYPED):
        for m in pattern.finditer(text):
            found.setdefault(m.group(1), _line(text, m.start()))
    if not untyped_only:
        for m in _TS_TYPED_LISTS.finditer(text):
            for c in re.finditer(_TS_CODE, m.group(1)):
                found.setdefault(c.group(1), _line(text, m.start()))
    return found


def ts_files() -> Iterator[Path]:
    for path in sorted(JS.rglob("*.ts")):
        if not path.name.endswith(".gen.ts"):
            yield path


def front_end_codes() -> dict[str, str]:
    out: dict[str, str] = {}
    for path in ts_files():
        for code, line in ts_codes_in(path.read_text(encoding="utf-8")).items():
            out.setdefault(code, f"js/src/{path.relative_to(JS).as_posix()}:{line}")
    return out


def produced_codes() -> dict[str, str]:
    return {**front_end_codes(), **raised_codes()}


# --- the type system's half ----------------------------------------------------------------------


def untyped_code_positions() -> list[str]:
    """``code`` parameters, class attributes and wire fields that do not say ``ErrorCode``.

    A wire model's ``code`` field stays ``str`` (a log of another version still reads) when the
    class types its constructor (a ``TYPE_CHECKING`` ``__init__`` whose ``code`` is an ErrorCode);
    a ``TypedDict``'s ``code`` must be typed itself."""
    bad: list[str] = []
    for rel, tree in package_files():
        for node in every_node(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and (rel, node.name) in NOT_OUR_CODE:
                continue
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                a = node.args
                for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs]:
                    if arg.arg == "code" and not (arg.annotation and TYPED.search(ast.unparse(arg.annotation))):
                        bad.append(f"{rel}:{node.lineno} {node.name}(code: {ast.unparse(arg.annotation) if arg.annotation else '?'})")
            elif isinstance(node, ast.ClassDef):
                inits = [st for st in ast.walk(node) if isinstance(st, ast.FunctionDef) and st.name == "__init__"]
                typed_init = any(TYPED.search(ast.unparse(p.annotation)) for f in inits
                                 for p in f.args.kwonlyargs + f.args.args if p.arg == "code" and p.annotation)
                for st in node.body:
                    if isinstance(st, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "code" for t in st.targets):
                        bad.append(f"{rel}:{st.lineno} {node.name}.code = … (annotate it: code: ErrorCode = …)")
                    elif isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name) and st.target.id == "code":
                        if not TYPED.search(ast.unparse(st.annotation)) and not typed_init:
                            bad.append(f"{rel}:{st.lineno} {node.name}.code: {ast.unparse(st.annotation)}")
    return bad


def test_every_code_position_is_typed_error_code() -> None:
    bad = untyped_code_positions()
    assert bad == [], ("type these as ErrorCode (dsh_notebook.wire.codes), so mypy checks every code "
                       "passed to them:\n" + "\n".join(bad))


def test_every_exemption_names_a_definition_that_exists() -> None:
    """A module that moves takes its exemption along: a stale row would exempt nothing and hide
    nothing, while the moved ``code`` parameter failed the check above for the wrong reason."""
    defined = {(rel, n.name) for rel, tree in package_files() for n in every_node(tree)
               if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    assert sorted(set(NOT_OUR_CODE) - defined) == []


def test_a_str_becomes_a_code_only_where_it_is_received() -> None:
    casts = [f"{rel}:{n.lineno}" for rel, tree in package_files() if rel != "wire/codes.py"
             for n in every_node(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
             and n.func.id == "cast" and n.args and TYPED.search(ast.unparse(n.args[0]))]
    assert casts == [], ("a code read from the wire is passed on with wire.codes.received(), or checked with "
                         "wire.codes.is_code(), never a cast")


# --- the closed set ------------------------------------------------------------------------------


def test_every_code_the_package_produces_is_in_the_closed_set() -> None:
    unknown = {c: where for c, where in produced_codes().items() if c not in ERROR_CODES}
    assert unknown == {}, "add these codes to dsh_notebook/wire/codes.py (ErrorCode), then `make types`"


def test_every_code_of_the_set_is_produced_somewhere() -> None:
    assert ERROR_CODES - set(produced_codes()) == set(), "codes nothing produces: remove them from ErrorCode"


def test_the_schema_carries_the_set() -> None:
    assert set(wire_schema()["$defs"]["ErrorCode"]["enum"]) == ERROR_CODES  # type: ignore[index,call-overload]


def test_the_front_end_types_its_codes() -> None:
    """TypeScript names a code only where the generated ``ErrorCode`` type checks it (``coded``,
    ``isCode``, a ``Set<ErrorCode>``, an ``Extract<ErrorCode, …>``), so ``tsc`` refuses a code
    outside the set; a bare ``code === "X"`` is not checked by anything and is refused here."""
    untyped = {f"js/src/{p.relative_to(JS).as_posix()}:{line}": code for p in ts_files()
               for code, line in ts_codes_in(p.read_text(encoding="utf-8"), untyped_only=True).items()}
    props = [f"js/src/{p.relative_to(JS).as_posix()}" for p in ts_files()
             if re.search(r"\bcode\s*:\s*" + _TS_CODE, text := p.read_text(encoding="utf-8")) and "ErrorCode" not in text]
    assert untyped == {} and props == [], "compare codes with isCode(x, \"X\"), make them with coded(\"X\", …)"


# --- the scan finds what it must -----------------------------------------------------------------


def test_the_scan_sees_each_way_a_code_is_given(tmp_path: Path) -> None:
    probe = ast.parse(
        'class E(Exception):\n    code = "A_CLASS"\n'
        'def f(code: str = "A_DEFAULT"):\n    raise E("x", code="A_KW" if f else "A_ELSE")\n'
        'x = {"code": "A_DICT"}\n'
        'def outcome(call_id, text, code, name=None): ...\n'
        'outcome("c1", "no such tool", "A_POSITIONAL")\n'
        'err.code = "A_ATTRIBUTE"\n'
        'code = exc.code if ok else "A_VARIABLE"\n'
        'text, code = "words", "A_TUPLE"\n'
        'if outcome.code == "A_COMPARED" or "A_LEFT" != code or err.code in ("A_IN", "A_IN2"): pass\n'
        'TABLE: dict[int, ErrorCode] = {429: "A_TABLE"}\n'
        'def pick(status) -> ErrorCode:\n    return "A_RETURNED" if status else "A_RETURNED2"\n'
        'shown = "NOT_A_CODE"\n'
        'print("ALSO_NOT", code)\n'
    )
    trees = [("probe.py", probe)]
    assert set(codes_in(probe, code_parameter_places(trees))) == {
        "A_CLASS", "A_DEFAULT", "A_KW", "A_ELSE", "A_DICT", "A_POSITIONAL", "A_ATTRIBUTE", "A_VARIABLE",
        "A_TUPLE", "A_COMPARED", "A_LEFT", "A_IN", "A_IN2", "A_TABLE", "A_RETURNED", "A_RETURNED2",
    }


def test_the_ts_scan_sees_each_way_a_code_is_given() -> None:
    text = ('const PREPARE = new Set<ErrorCode>(["T_SET", "T_SET2"]);\n'
            'export type EditCode = Extract<ErrorCode, "T_EXTRACT" | "T_EXTRACT2">;\n'
            'if (code === "T_EQ" || res.error?.code !== "T_NE") {}\n'
            'return { ok: false, code: "T_PROP", error };\n'
            'const e = coded("T_CALL", "message");\n'
            'if (isCode(res.error?.code, "T_IS")) {}\n'
            'const FIRST: ErrorCode = "T_CONST";\n'
            'h("th", null, "NOT_A_CODE");\n')
    assert set(ts_codes_in(text)) == {"T_SET", "T_SET2", "T_EXTRACT", "T_EXTRACT2", "T_EQ", "T_NE", "T_PROP",
                                      "T_CALL", "T_IS", "T_CONST"}
    assert set(ts_codes_in(text, untyped_only=True)) == {"T_EQ", "T_NE"}


def test_the_type_guard_sees_an_untyped_code(tmp_path: Path, monkeypatch: object) -> None:
    """A ``code: str`` parameter or an unannotated class ``code`` is found (the guard can fail)."""
    import pytest

    assert isinstance(monkeypatch, pytest.MonkeyPatch)
    pkg = tmp_path / "dsh_notebook"
    pkg.mkdir()
    (pkg / "probe.py").write_text('def refuse(code: str) -> None: ...\n'
                                  'class E(Exception):\n    code = "X"\n'
                                  'class F(Exception):\n    code: ErrorCode = "Y"\n'
                                  'def ok(code: ErrorCode | None = None) -> None: ...\n')
    monkeypatch.setattr(__import__(__name__, fromlist=["PKG"]), "PKG", pkg)
    found = untyped_code_positions()
    assert len(found) == 2 and "refuse(code: str)" in found[0] and "E.code = …" in found[1]
