"""read / write / edit / glob / grep through the real runtime, on a real workspace."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from dsh_notebook.tools import ToolRuntime
from tests.tools.helpers import call

MakeRuntime = Callable[..., ToolRuntime]


async def run(make_runtime: MakeRuntime, name: str, **args: object) -> tuple[str, str | None]:
    outcome = await make_runtime().run(call(name, dict(args)))
    assert outcome.is_error == (outcome.code is not None)
    return outcome.text, outcome.code


async def test_read_numbers_lines_and_states_total(make_runtime: MakeRuntime, ws: Path) -> None:
    (ws / "README.md").write_text("# Demo\nline two\nline three\n")
    text, code = await run(make_runtime, "read", file_path="README.md")
    assert code is None
    assert "     1\t# Demo\n     2\tline two\n     3\tline three" in text
    assert "3 lines" in text


async def test_read_offset_limit_and_partial_note(make_runtime: MakeRuntime, ws: Path) -> None:
    (ws / "n.txt").write_text("".join(f"L{i}\n" for i in range(1, 101)))
    text, code = await run(make_runtime, "read", file_path="n.txt", offset=10, limit=3)
    assert code is None
    assert "    10\tL10\n    11\tL11\n    12\tL12" in text
    assert "L13" not in text and "L9\n" not in text
    assert "lines 10-12 of 100" in text


async def test_read_caps_size(make_runtime: MakeRuntime, ws: Path) -> None:
    (ws / "big.txt").write_text(("y" * 1500 + "\n") * 1500)
    text, code = await run(make_runtime, "read", file_path="big.txt")
    assert code is None
    assert len(text) < 110_000
    assert "of 1500" in text and "size cap" in text


async def test_read_errors(make_runtime: MakeRuntime, ws: Path) -> None:
    (ws / "bin.dat").write_bytes(b"\x00\x01\x02")
    (ws / "d").mkdir()
    (ws / "short.txt").write_text("a\n")
    (ws / "empty.txt").write_text("")
    assert (await run(make_runtime, "read", file_path="missing.txt"))[1] == "FILE_NOT_FOUND"
    assert (await run(make_runtime, "read", file_path="bin.dat"))[1] == "BINARY_FILE"
    assert (await run(make_runtime, "read", file_path="d"))[1] == "IS_DIRECTORY"
    assert (await run(make_runtime, "read", file_path="short.txt", offset=5))[1] == "BAD_OFFSET"
    text, code = await run(make_runtime, "read", file_path="empty.txt")
    assert code is None and "empty" in text
    text, code = await run(make_runtime, "read", file_path="short.txt", offset=0)
    assert code == "INVALID_ARGS" and "offset" in text
    for tool, extra in (("read", {}), ("write", {"content": "x"}), ("edit", {"old_string": "a", "new_string": "b"})):
        text, code = await run(make_runtime, tool, file_path="", **extra)
        assert code == "INVALID_ARGS" and "file_path" in text, (tool, text)


async def test_write_creates_parents_and_reports(make_runtime: MakeRuntime, ws: Path) -> None:
    text, code = await run(make_runtime, "write", file_path="a/b/c.txt", content="hi\nthere\n")
    assert code is None and text.startswith("Created a/b/c.txt")
    assert (ws / "a" / "b" / "c.txt").read_text() == "hi\nthere\n"
    text, code = await run(make_runtime, "write", file_path="a/b/c.txt", content="new")
    assert code is None and text.startswith("Overwrote")
    assert (ws / "a" / "b" / "c.txt").read_text() == "new"
    assert (await run(make_runtime, "write", file_path="a", content="x"))[1] == "IS_DIRECTORY"


async def test_edit_replaces_exactly_once(make_runtime: MakeRuntime, ws: Path) -> None:
    (ws / "m.ts").write_text("export const add = (a, b) => a - b;\n")
    text, code = await run(make_runtime, "edit", file_path="m.ts", old_string="a - b", new_string="a + b")
    assert code is None and "replaced 1 occurrence" in text
    assert (ws / "m.ts").read_text() == "export const add = (a, b) => a + b;\n"


async def test_edit_errors_are_clear(make_runtime: MakeRuntime, ws: Path) -> None:
    (ws / "f.txt").write_text("x = 1\nx = 1\nx = 1\n")
    text, code = await run(make_runtime, "edit", file_path="f.txt", old_string="x = 1", new_string="x = 2")
    assert code == "NOT_UNIQUE" and "3 times" in text and text.startswith("Error: ")
    text, code = await run(make_runtime, "edit", file_path="f.txt", old_string="nope", new_string="y")
    assert code == "NO_MATCH" and "not found" in text
    text, code = await run(make_runtime, "edit", file_path="f.txt", old_string="x", new_string="x")
    assert code == "NO_CHANGE" and "identical" in text
    text, code = await run(make_runtime, "edit", file_path="gone.txt", old_string="a", new_string="b")
    assert code == "FILE_NOT_FOUND" and "gone.txt" in text
    text, code = await run(make_runtime, "edit", file_path="f.txt", old_string="", new_string="b")
    assert code == "INVALID_ARGS"
    assert (ws / "f.txt").read_text() == "x = 1\nx = 1\nx = 1\n"  # nothing changed by failures


async def test_edit_replace_all(make_runtime: MakeRuntime, ws: Path) -> None:
    (ws / "f.txt").write_text("x = 1\nx = 1\n")
    text, code = await run(
        make_runtime, "edit", file_path="f.txt", old_string="x = 1", new_string="x = 2", replace_all=True
    )
    assert code is None and "2 occurrences" in text
    assert (ws / "f.txt").read_text() == "x = 2\nx = 2\n"


async def test_glob_lists_sorted_and_skips_git(make_runtime: MakeRuntime, ws: Path) -> None:
    for rel in ("src/b.py", "src/a.py", "src/deep/c.py", ".git/x.py", "notes.md"):
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text("pass\n")
    text, code = await run(make_runtime, "glob", pattern="**/*.py")
    assert code is None
    assert text.splitlines() == ["src/a.py", "src/b.py", "src/deep/c.py"]
    text, code = await run(make_runtime, "glob", pattern=str(ws / "src" / "*.py"))
    assert text.splitlines() == ["src/a.py", "src/b.py"]
    text, code = await run(make_runtime, "glob", pattern="*.rs")
    assert code is None and "No files match" in text


async def test_grep_matches_skips_binary_and_caps(make_runtime: MakeRuntime, ws: Path) -> None:
    (ws / "a.txt").write_text("alpha\nbeta\nalphabet\n")
    (ws / "sub").mkdir()
    (ws / "sub" / "b.txt").write_text("no\nalpha here\n")
    (ws / "blob.bin").write_bytes(b"alpha\x00alpha")
    text, code = await run(make_runtime, "grep", pattern=r"^alpha")
    assert code is None
    assert text.splitlines() == ["a.txt:1: alpha", "a.txt:3: alphabet", "sub/b.txt:2: alpha here"]
    text, code = await run(make_runtime, "grep", pattern="alpha", path="sub")
    assert text.splitlines() == ["sub/b.txt:2: alpha here"]
    (ws / "many.txt").write_text("hit\n" * 500)
    text, code = await run(make_runtime, "grep", pattern="hit", path="many.txt")
    assert text.count("many.txt:") == 200 and "match cap" in text
    text, code = await run(make_runtime, "grep", pattern="(unclosed")
    assert code == "INVALID_PATTERN" and text.startswith("Error: ")


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("read", {"file_path": "../secret.txt"}),
        ("read", {"file_path": "SECRET_ABS"}),
        ("read", {"file_path": "link.txt"}),
        ("read", {"file_path": "linkdir/inner.txt"}),
        ("write", {"file_path": "../escape.txt", "content": "x"}),
        ("write", {"file_path": "linkdir/new.txt", "content": "x"}),
        ("edit", {"file_path": "link.txt", "old_string": "top", "new_string": "pwned"}),
        ("glob", {"pattern": "../*.txt"}),
        ("glob", {"pattern": "OUTSIDE_ABS/*.txt"}),
        ("grep", {"pattern": "secret", "path": ".."}),
        ("grep", {"pattern": "secret", "path": "linkdir"}),
    ],
)
async def test_escapes_are_denied_with_a_clear_result(
    make_runtime: MakeRuntime, ws: Path, tmp_path: Path, name: str, args: dict[str, str]
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("top secret\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "inner.txt").write_text("secret inner\n")
    (ws / "link.txt").symlink_to(secret)
    (ws / "linkdir").symlink_to(outside)
    args = {
        k: v.replace("SECRET_ABS", str(secret)).replace("OUTSIDE_ABS", str(outside))
        for k, v in args.items()
    }
    outcome = await make_runtime().run(call(name, args))
    assert outcome.is_error
    assert outcome.code == "OUTSIDE_WORKSPACE"
    assert outcome.text.startswith("Error: ") and "outside the workspace" in outcome.text
    assert secret.read_text() == "top secret\n"
    assert not (tmp_path / "escape.txt").exists() and not (outside / "new.txt").exists()


async def test_walks_never_follow_links_out(make_runtime: MakeRuntime, ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "leak.txt").write_text("needle outside\n")
    (ws / "linkdir").symlink_to(outside)
    (ws / "mine.txt").write_text("needle inside\n")
    text, _ = await run(make_runtime, "grep", pattern="needle")
    assert text.splitlines() == ["mine.txt:1: needle inside"]
    text, _ = await run(make_runtime, "glob", pattern="**/*.txt")
    assert text.splitlines() == ["mine.txt"]
