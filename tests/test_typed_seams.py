"""The typed seams (issue 40 item 5) as tests: ``dict[str, Any]`` stays rare in the package."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "dsh_notebook"
UNTYPED = "dict[str, Any]"
LIMIT = 56
"""At most this many lines of the package say ``dict[str, Any]`` (issue 40 asks for at most 60;
lower it as lines get their types, never raise it). A JSON value is
``pydantic.JsonValue`` (``dict[str, JsonValue]``), a fixed JSON shape a TypedDict or a wire
model, Python values of any kind ``dict[str, object]``."""


def untyped_lines(package: Path = PKG) -> Counter[str]:
    found: Counter[str] = Counter()
    for path in sorted(package.rglob("*.py")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if UNTYPED in line:
                found[path.relative_to(package.parent).as_posix()] += 1
    return found


def test_dict_str_any_lines_stay_at_most_the_limit() -> None:
    found = untyped_lines()
    total = sum(found.values())
    by_file = "\n".join(f"  {n:3} {f}" for f, n in found.most_common())
    assert total <= LIMIT, f"{total} lines with {UNTYPED} (at most {LIMIT}); give them their real types:\n{by_file}"


def test_the_counter_counts_lines_in_every_module_of_every_sub_package(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    (pkg / "sub" / "deeper").mkdir(parents=True)
    (pkg / "a.py").write_text("x: dict[str, Any] = {}\ny: dict[str, Any] | dict[str, Any] = {}\n")
    (pkg / "sub" / "deeper" / "b.py").write_text("def f(v: dict[str, Any]) -> None: ...\n")
    (pkg / "sub" / "c.py").write_text("z: dict[str, object] = {}\n")
    assert untyped_lines(pkg) == Counter({"pkg/a.py": 2, "pkg/sub/deeper/b.py": 1})
