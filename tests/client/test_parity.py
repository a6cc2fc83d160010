"""One fold per language: on every recorded real run (``js/test/fixtures/streams``), the Python
``ClientSessionModel`` and the JS one (``js/src/fold.ts``) have the same state after every item.

The JS side is bundled with esbuild and run by node (``js/test/parity/main.ts``); both drivers
feed their fold the same client-side facts (prompt calls and their answers, follow and control
items)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.client.parity import replay
from tests.fixtures.record_streams import OUT, load

ROOT = Path(__file__).resolve().parents[2]
JS = ROOT / "js"
FIXTURES = sorted(OUT.glob("*.jsonl"))


@pytest.fixture(scope="module")
def js_fold(tmp_path_factory: pytest.TempPathFactory) -> Path:
    node = shutil.which("node")
    esbuild = JS / "node_modules" / "esbuild" / "bin" / "esbuild"
    assert node and esbuild.exists(), "the parity test needs node and js/node_modules (make setup)"
    bundle = tmp_path_factory.mktemp("parity") / "parity.mjs"
    subprocess.run([str(esbuild), str(JS / "test" / "parity" / "main.ts"), "--bundle", "--platform=node",
                    "--format=esm", f"--outfile={bundle}", "--log-level=warning"], check=True, cwd=JS)
    return bundle


def js_states(bundle: Path, fixture: Path) -> list[dict[str, Any]]:
    out = subprocess.run(["node", str(bundle), str(fixture)], check=True, capture_output=True, text=True).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def first_difference(a: Any, b: Any, path: str = "") -> str:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            if a.get(key, "<missing>") != b.get(key, "<missing>"):
                return first_difference(a.get(key, "<missing>"), b.get(key, "<missing>"), f"{path}.{key}")
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                return first_difference(x, y, f"{path}[{i}]")
    return f"{path}: python {json.dumps(a)[:300]} != js {json.dumps(b)[:300]}"


def test_fixtures_exist() -> None:
    assert len(FIXTURES) >= 7


@pytest.mark.parametrize("fixture", FIXTURES, ids=[f.stem for f in FIXTURES])
def test_python_and_js_folds_agree_after_every_item(js_fold: Path, fixture: Path) -> None:
    lines = load(fixture)
    python = replay(lines)
    js = js_states(js_fold, fixture)
    assert [i for i, _ in python] == [s["line"] for s in js]
    assert len(python) > 50
    for (i, state), other in zip(python, js, strict=True):
        assert state == other["state"], f"line {i + 1} of {fixture.name}: {first_difference(state, other['state'])}"
    final = python[-1][1]
    assert final["turnEnds"] and not final["gap"] and final["attempt"] is None
