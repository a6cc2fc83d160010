"""``compare`` aligns a fork's replay with its origin (issue 38 item 5): a fork made inside turn 1
ends that turn at the fork point and the replay runs as the fork's turn 2 — compared turn by turn,
that turn 2 is the origin's turn 1, so an exact replay reports "no divergence" (it used to report
"B has no request at turn 1 step 1"). Real ``python -m dsh_notebook`` runs on the scripted model."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from dsh_notebook.analysis.align import align_turns
from dsh_notebook.analysis.compare import compare_events
from dsh_notebook.notebook.widgets.compare import comparison_data
from dsh_notebook.session.persistence import load_log
from tests.support.cli import dsh

REPO = Path(__file__).resolve().parents[2]
README = "read README.md and summarise"


def cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DSH_HOME": str(home), "PYTHONPATH": str(REPO), "DSH_MODEL": "script:auto"}
    return dsh(*args, env=env, timeout=180)


def session_of(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1].split()[1]


@pytest.fixture
def replayed(tmp_path: Path) -> tuple[Path, str, str]:
    """An origin of one turn, a fork inside that turn (at its first step/start) and the fork's
    exact replay of the same prompt."""
    home = tmp_path / "home"
    origin = session_of(cli(home, "run", "--quiet", README))
    events = load_log(home / "sessions" / f"{origin}.jsonl").events
    at = next(e.seq for e in events if e.type == "step/start")
    fork = session_of(cli(home, "fork", origin, "--at", str(at)))
    session_of(cli(home, "run", "--quiet", "--session", fork, "--model", f"replay:{origin}", README))
    return home, origin, fork


def test_compare_after_an_exact_replay_reports_no_divergence(replayed: tuple[Path, str, str]) -> None:
    home, origin, fork = replayed
    fork_events = load_log(home / "sessions" / f"{fork}.jsonl").events
    assert [e.turn for e in fork_events if e.type == "turn/end"] == [1, 2]  # the cut turn, then the replay
    done = cli(home, "compare", origin, fork)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "no divergence: the sessions agree on all 2 steps" in lines, done.stdout
    assert not any("has no request" in x for x in lines)
    rows = [x.split() for x in lines if x.strip().startswith("1 ")]
    assert [r[:2] for r in rows] == [["1", "1"], ["1", "2"]] and all("(B turn 2)" in x for x in lines if x.strip().startswith("1 "))
    as_json = json.loads(cli(home, "compare", origin, fork, "--json").stdout)
    assert as_json["divergence"] is None
    assert [(s["turn"], s["step"], s["same"], s["aTurn"], s["bTurn"]) for s in as_json["steps"]] == [
        (1, 1, True, 1, 2), (1, 2, True, 1, 2)]
    # either order: the fork is found from its session/forked event, not from the argument order
    back = json.loads(cli(home, "compare", fork, origin, "--json").stdout)
    assert back["divergence"] is None and [s["aTurn"] for s in back["steps"]] == [2, 2]


def test_the_compare_widget_rows_of_a_replay(replayed: tuple[Path, str, str]) -> None:
    home, origin, fork = replayed
    a = load_log(home / "sessions" / f"{origin}.jsonl").events
    b = load_log(home / "sessions" / f"{fork}.jsonl").events
    data = comparison_data(origin, a, fork, b)
    assert data["divergence"] is None and data["agreeing"] == 2
    assert [(r["turn"], r["step"], r["state"], r["a"]["turn"], r["b"]["turn"]) for r in data["rows"]] == [
        (1, 1, "same", 1, 2), (1, 2, "same", 1, 2)]


def test_a_different_prompt_after_the_fork_diverges_at_the_origins_turn(tmp_path: Path) -> None:
    home = tmp_path / "home"
    origin = session_of(cli(home, "run", "--quiet", README))
    events = load_log(home / "sessions" / f"{origin}.jsonl").events
    at = next(e.seq for e in events if e.type == "step/start")
    fork = session_of(cli(home, "fork", origin, "--at", str(at)))
    session_of(cli(home, "run", "--quiet", "--session", fork, "what is in src/math.ts?"))
    b = load_log(home / "sessions" / f"{fork}.jsonl").events
    pairs, d = compare_events(events, b)
    assert d is not None and (d.what, d.turn, d.step) == ("request", 1, 1)
    # the prompt, not the runtime context sent before it in the same turn
    prompt = next(e for e in b if e.type == "user/message" and e.turn == 2  # type: ignore[attr-defined]
                  and e.message.content[0].text == "what is in src/math.ts?")  # type: ignore[attr-defined]
    assert d.b_seq == prompt.seq and pairs[0].b_turn == 2


def test_logs_that_are_no_fork_of_each_other_keep_their_numbers(tmp_path: Path) -> None:
    home = tmp_path / "home"
    one = session_of(cli(home, "run", "--quiet", README))
    two = session_of(cli(home, "run", "--quiet", README))
    a = load_log(home / "sessions" / f"{one}.jsonl").events
    b = load_log(home / "sessions" / f"{two}.jsonl").events
    al_a, al_b = align_turns(a, b)
    assert not al_a.renumbered and not al_b.renumbered
    same = compare_events(a, a)
    assert same[1] is None and all(p.same and p.a_turn == p.turn == p.b_turn for p in same[0])
