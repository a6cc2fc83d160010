"""Fork + replay from the CLI (issue 22): ``fork`` says whether the workspace is as it was at the
fork point, naming the calls that may have changed it; a replay on changed files stops with a
``REPLAY_DIVERGED`` that names what differs; on a workspace nothing changed, it replays to the end."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.support.cli import dsh

REPO = Path(__file__).resolve().parents[2]
FIX = "run the tests; if they fail fix src/math.ts; tell me the result"
README = "read README.md and summarise"


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "DSH_MODEL": "script:auto"}
    return dsh(*args, env=env, timeout=180)


def session_of(done: subprocess.CompletedProcess[str]) -> str:
    return done.stdout.strip().splitlines()[-1].split()[1]


def test_a_fork_on_a_changed_workspace_says_so_and_the_replay_names_the_tool_result() -> None:
    origin = session_of(cli("run", "--quiet", FIX))
    fork = cli("fork", origin, "--at", "4")
    assert fork.returncode == 0, fork.stderr
    assert "as it is now, not as it was at seq 4" in fork.stderr and "edit c3" in fork.stderr, fork.stderr
    replay = cli("run", "--quiet", "--session", session_of(fork), "--model", f"replay:{origin}", FIX)
    assert replay.returncode == 1
    assert "REPLAY_DIVERGED" in replay.stderr and "the result of tool call c1" in replay.stderr, replay.stderr
    assert "replay needs the workspace as it was" in replay.stderr


def test_a_fork_on_an_unchanged_workspace_replays_to_the_end() -> None:
    origin = session_of(cli("run", "--quiet", README))
    fork = cli("fork", origin, "--at", "4")
    assert "as it was at seq 4 (no tool call after it could change files)" in fork.stderr, fork.stderr
    replay = cli("run", "--session", session_of(fork), "--model", f"replay:{origin}", README)
    assert replay.returncode == 0, replay.stderr
    assert "README.md (26 lines) describes **demo-math**" in replay.stdout
