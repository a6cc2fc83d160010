"""Error codes are a closed set (issue 25 item 3): every code the package raises is in
``dsh_notebook.wire.codes.ErrorCode``, every listed code is raised somewhere, and the schema (so
the generated TS types) carries the same set."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from dsh_notebook.errors import ERROR_CODES
from dsh_notebook.wire.schema import wire_schema

PKG = Path(__file__).resolve().parents[2] / "dsh_notebook"
CODE = re.compile(r"[A-Z][A-Z0-9_]+")


def codes_in(path: Path) -> dict[str, int]:
    """UPPER_SNAKE constants given as a ``code`` (``code=`` also passes Python source): ``code=...`` arguments (both arms of an ``if``), a
    ``code`` parameter's default, a class's ``code`` attribute, a ``{"code": ...}`` literal."""
    found: dict[str, int] = {}

    def add(node: ast.AST | None) -> None:
        for c in ast.walk(node) if node is not None else ():
            if isinstance(c, ast.Constant) and isinstance(c.value, str) and CODE.fullmatch(c.value):
                found.setdefault(c.value, c.lineno)

    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.keyword) and node.arg == "code":
            add(node.value)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = node.args
            positional = a.args[len(a.args) - len(a.defaults):]
            pairs = [*zip(a.kwonlyargs, a.kw_defaults, strict=True), *zip(positional, a.defaults, strict=True)]
            for arg, default in pairs:
                if arg.arg == "code":
                    add(default)
        elif isinstance(node, ast.ClassDef):
            for st in node.body:
                target = st.targets[0] if isinstance(st, ast.Assign) else getattr(st, "target", None)
                if isinstance(target, ast.Name) and target.id == "code":
                    add(getattr(st, "value", None))
        elif isinstance(node, ast.Dict):
            for k, v in zip(node.keys, node.values, strict=True):
                if isinstance(k, ast.Constant) and k.value == "code":
                    add(v)
    return found


def raised_codes() -> dict[str, str]:
    out: dict[str, str] = {}
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(PKG).as_posix()
        if rel.startswith(("static/", "testing/")):  # testing/: the fake server speaks OpenAI's codes
            continue
        for code, line in codes_in(path).items():
            out.setdefault(code, f"{rel}:{line}")
    return out


def test_every_code_raised_in_the_package_is_in_the_closed_set() -> None:
    unknown = {c: where for c, where in raised_codes().items() if c not in ERROR_CODES}
    assert unknown == {}, "add these codes to dsh_notebook/wire/codes.py (ErrorCode), then `make types`"


def test_every_code_of_the_set_is_raised_somewhere() -> None:
    assert ERROR_CODES - set(raised_codes()) == set(), "codes nothing raises: remove them from ErrorCode"


def test_the_schema_carries_the_set() -> None:
    assert set(wire_schema()["$defs"]["ErrorCode"]["enum"]) == ERROR_CODES  # type: ignore[index,call-overload]


def test_the_scan_sees_each_way_a_code_is_given(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text('class E(Exception):\n    code = "A_CLASS"\n'
                     'def f(code: str = "A_DEFAULT"):\n    raise E("x", code="A_KW" if f else "A_ELSE")\n'
                     'x = {"code": "A_DICT"}\n')
    assert set(codes_in(probe)) == {"A_CLASS", "A_DEFAULT", "A_KW", "A_ELSE", "A_DICT"}
