"""The reference pages of docs/reference/ are what ``python docs/gen.py`` makes from the code now
(issue 40 item 1): a changed flag, setting, variable, tool, event, endpoint or error code fails here
until the pages are regenerated — and the generator refuses a variable or an event type it has no
words for."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
GEN = ROOT / "docs" / "gen.py"


def load_gen() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_gen", GEN)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def gen() -> ModuleType:
    return load_gen()


@pytest.fixture(scope="module")
def pages(gen: ModuleType) -> dict[Path, str]:
    """The pages as the code makes them now (generated once for the tests that only read them)."""
    return dict(gen.generate())


def test_every_reference_page_is_a_fresh_generation(gen: ModuleType, pages: dict[Path, str]) -> None:
    assert set(pages) == {gen.OUT / name for name in gen.PAGES}
    committed = {p.name for p in (ROOT / "docs" / "reference").glob("*.md")}
    assert committed == set(gen.PAGES), "docs/reference/ holds only generated pages"
    stale = [p.relative_to(ROOT).as_posix() for p, text in pages.items()
             if not p.is_file() or p.read_text(encoding="utf-8") != text]
    assert stale == [], f"run `python docs/gen.py`: these differ from the code: {stale}"


def test_the_pages_hold_what_the_code_has(gen: ModuleType, pages: dict[Path, str]) -> None:
    """Spot checks that the generation reads the code, not a copy of it."""
    from dsh_notebook.cli import build_parser
    from dsh_notebook.cmdline.dsh_line import FLAGS
    from dsh_notebook.wire.codes import ERROR_CODES
    from dsh_notebook.wire.events import EVENT_TYPES

    by_name = {p.name: text for p, text in pages.items()}
    commands = gen._subparsers(build_parser())
    assert len(commands) > 10 and all(f"## `{name}`" in by_name["cli.md"] for name, _, _ in commands)
    assert all(f"`{flag.name}`" in by_name["magics.md"] for flag in FLAGS)
    assert all(f"`{code}`" in by_name["error-codes.md"] for code in ERROR_CODES)
    assert all(f"`{kind}`" in by_name["events.md"] for kind in EVENT_TYPES)
    assert "`DSH_HOME`" in by_name["env.md"] and "`DEEPSEEK_API_KEY`" in by_name["env.md"]


def test_an_undescribed_variable_stops_the_generation(gen: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(gen.ENV, "DSH_HOME")
    with pytest.raises(SystemExit, match="DSH_HOME"):
        gen.env_page()


def test_an_event_type_without_words_stops_the_generation(gen: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(gen.EVENT_NOTES, "turn/start")
    with pytest.raises(SystemExit, match="turn/start"):
        gen.events_page()


def test_check_mode_names_a_stale_page(gen: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    for name in gen.PAGES:
        (tmp_path / name).write_text((gen.OUT / name).read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.setattr(gen, "OUT", tmp_path)
    assert gen.main(["--check"]) == 0
    (tmp_path / "env.md").write_text("old\n", encoding="utf-8")
    assert gen.main(["--check"]) == 1
    assert "env.md" in capsys.readouterr().err
