"""The front end's TypeScript is generated from the Python and held to it (issue 40 item 5).

- the committed ``js/src/wire.gen.ts`` (and ``glossary.gen.ts``) is exactly what ``make types``
  generates now: regenerated into a temporary directory and compared;
- the fold state and the endpoints are in it (``FoldState``, ``UnaryEndpoints``,
  ``StreamEndpoints``), so the JS fold and the Remote declare none of their own;
- a field renamed in Python fails ``tsc`` after ``make types``: a copy of the package with fields
  renamed (one of the fold's state, one of an endpoint's args, one of a part of the state) prints
  its schema, the generator writes it into a copy of the front end, and ``tsc`` refuses the copy
  exactly where the JS fold and the Remote use the old names — and for nothing else.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from dsh_notebook.wire.fold_state import FoldState
from dsh_notebook.wire.schema import schema_json, wire_schema

ROOT = Path(__file__).resolve().parents[2]
JS = ROOT / "js"
GEN = JS / "scripts" / "gen-types.mjs"
TSC = JS / "node_modules" / "typescript" / "bin" / "tsc"
FILES = ("wire.gen.ts", "glossary.gen.ts")


def generate(schema: Path, out: Path) -> None:
    """``make types`` from the schema document ``schema`` into ``out`` (``--out``)."""
    out.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "DSH_PYTHON": sys.executable, "PYTHONPATH": str(ROOT)}
    subprocess.run(["node", str(GEN), "--schema", str(schema), "--out", str(out)], check=True, cwd=JS, env=env,
                   capture_output=True, text=True, timeout=120)


def test_the_committed_typescript_is_what_make_types_generates(tmp_path: Path) -> None:
    schema = tmp_path / "schema.json"
    schema.write_text(schema_json())
    generate(schema, tmp_path / "out")
    for name in FILES:
        fresh = (tmp_path / "out" / name).read_text(encoding="utf-8")
        committed = (JS / "src" / name).read_text(encoding="utf-8")
        assert committed == fresh, f"js/src/{name} is stale: run `make types` and commit it"


def test_the_fold_state_and_the_endpoints_are_generated_not_declared() -> None:
    text = (JS / "src" / "wire.gen.ts").read_text(encoding="utf-8")
    block = re.search(r"export interface FoldState \{\n(.*?)\n\}", text, re.S)
    assert block, "wire.gen.ts has no FoldState: run make types"
    keys = [m.group(1) for m in re.finditer(r"^  (\w+): ", block.group(1), re.M)]
    assert keys == list(FoldState.__annotations__)
    unary = re.search(r"export interface UnaryEndpoints \{\n(.*?)\n\}", text, re.S)
    stream = re.search(r"export interface StreamEndpoints \{\n(.*?)\n\}", text, re.S)
    assert unary and stream
    endpoints = wire_schema()["x-endpoints"]
    assert isinstance(endpoints, dict)
    rows = re.findall(r'^  "([^"]+)": \{ args: (\w+); (result|items): (\w+) \};$', unary.group(1) + "\n" + stream.group(1), re.M)
    ref = lambda entry, key: entry[key]["$ref"].removeprefix("#/$defs/")  # noqa: E731
    assert {name: (args, key, out) for name, args, key, out in rows} == {
        name: (ref(e, "args"), "result" if "result" in e else "items", ref(e, "result" if "result" in e else "items"))
        for name, e in endpoints.items()}
    # the hand-written mirrors are gone: the JS fold and the Remote declare no shape the wire has
    declared = re.compile(r"^export (?:interface|type) (\w+)", re.M)
    generated_names = set(declared.findall(text))
    for src in ("fold.ts", "remote.ts", "types.ts", "connection.ts"):
        own = set(declared.findall((JS / "src" / src).read_text(encoding="utf-8")))
        assert not own & generated_names, f"js/src/{src} declares what wire.gen.ts generates: {sorted(own & generated_names)}"


RENAMES = [
    # (module, the declaration as written, as renamed, the old and the new wire names)
    ("wire/fold_state.py", "    turnEnds: list[TurnEndEntry]\n", "    turnEndings: list[TurnEndEntry]\n",
     "turnEnds", "turnEndings"),
    ("wire/fold_state.py", "    waiting: bool\n    \"\"\"Waits for an approval decision.\"\"\"\n",
     "    awaiting: bool\n    \"\"\"Waits for an approval decision.\"\"\"\n", "waiting", "awaiting"),
    ("wire/endpoints.py", "(keep planning).\"\"\"\n\n    session_id: str\n    call_id: str\n",  # ApproveArgs
     "(keep planning).\"\"\"\n\n    session_id: str\n    tool_call_id: str\n", "callId", "toolCallId"),
]


def test_tsc_fails_where_the_front_end_uses_a_field_renamed_in_python(tmp_path: Path) -> None:
    package = tmp_path / "py" / "dsh_notebook"
    shutil.copytree(ROOT / "dsh_notebook", package, ignore=shutil.ignore_patterns("__pycache__", "static"))
    for module, before, after, *_ in RENAMES:
        path = package / module
        source = path.read_text(encoding="utf-8")
        assert source.count(before) == 1, f"{module} no longer declares {before.strip()!r}: update this test"
        path.write_text(source.replace(before, after), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "py")}
    printed = subprocess.run([sys.executable, "-m", "dsh_notebook", "schema"], check=True, capture_output=True,
                             text=True, cwd=tmp_path / "py", env=env, timeout=120).stdout
    schema = tmp_path / "schema.json"
    schema.write_text(printed)
    props = json.loads(printed)["$defs"]
    assert "turnEndings" in props["FoldState"]["properties"] and "toolCallId" in props["ApproveArgs"]["properties"]

    front = tmp_path / "js"
    for part in ("src", "test"):
        shutil.copytree(JS / part, front / part)
    shutil.copy(JS / "tsconfig.json", front / "tsconfig.json")
    (front / "node_modules").symlink_to((JS / "node_modules").resolve(), target_is_directory=True)
    generate(schema, front / "src")
    tsc = subprocess.run(["node", str(TSC), "--noEmit", "-p", str(front)], capture_output=True, text=True,
                         cwd=front, timeout=300)
    assert tsc.returncode != 0, "tsc accepted a front end whose wire fields were renamed in Python"
    errors = tsc_errors(tsc.stdout)
    where = {error.split("(")[0] for error in errors}
    assert {"src/fold.ts", "src/remote.ts"} <= where, tsc.stdout[:3000]
    names = [name for *_, old, new in RENAMES for name in (old, new)]
    unrelated = [error for error in errors if not any(f"'{n}'" in error or f'"{n}"' in error for n in names)]
    assert unrelated == [], "tsc failed for something other than the renames:\n" + "\n".join(unrelated[:20])
    for *_, old, new in RENAMES:
        assert any(f"'{old}'" in error or f"'{new}'" in error for error in errors), f"no tsc error names {old} / {new}"


def tsc_errors(output: str) -> list[str]:
    """Each error of tsc's output: its first line (``file(line,col): error TS…``) and the indented
    lines that explain it."""
    errors: list[str] = []
    for line in output.splitlines():
        if re.match(r"^\S+\(\d+,\d+\): error TS", line):
            errors.append(line)
        elif errors and line.startswith(" "):
            errors[-1] += "\n" + line
    return errors
