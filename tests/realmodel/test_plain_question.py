"""A plain question to the real small model (issue 39 items 1–3): ``--tools none`` is a plain chat
turn (nothing offered, nothing to call), and ``local:smollm2`` — a 135M model — gets the compact
prompt: a short identity with the runtime context inside the system message, and the prompt as
the request's only other message. So it answers the question and ends, instead of talking about
the context or looping to the output limit (what CI saw: ``max-tokens``, 2 of 20 runs on the old
prompt here, 0 of 20 on this one). ``--demo`` puts each run on a fresh demo copy.

Five runs through the CLI, each with its own fixed seed (``--option seed=N``: a failure can be
replayed on the same machine) and the model card's default sampling (not given: the test checks
the defaults reach the request). At least 4 of the 5 must complete; every run's request ends with
the prompt. Structure only, never the model's wording."""

from __future__ import annotations

from pathlib import Path

from dsh_notebook.agent.prompt import COMPACT_IDENTITY
from dsh_notebook.session.requests import request_points
from dsh_notebook.wire.events import RequestHeader, TurnEnd
from tests.realuse.cli import run_cli, session_of
from tests.support.log_checks import assert_valid_log

THREADS = {"DSH_LOCAL_THREADS": "1"}
QUESTION = "Say hello in five words."
SEEDS = (1, 2, 3, 4, 5)


def _one_run(home: Path, seed: int) -> str:
    """One ``run`` of the plain question; its end reason, after checking its request."""
    done = run_cli("run", "--model", "local:smollm2", "--demo", "--tools", "none", "--max-tokens", "256",
                   "--max-steps", "2", "--option", f"seed={seed}", QUESTION, home=home, extra_env=THREADS,
                   timeout=280)
    _sid, log = session_of(done.stdout)
    events = assert_valid_log(log)
    [header] = [e for e in events if isinstance(e, RequestHeader)]
    assert header.tools == ()  # nothing offered
    assert (header.config["temperature"], header.config["top_p"], header.config["seed"]) == (0.2, 0.9, seed)
    [first] = request_points(events)
    assert [m.role for m in first.messages] == ["system", "user"]
    system = first.messages[0].content[0].text
    assert system.startswith(COMPACT_IDENTITY + "\n\nToday's date: ") and "Act through the tools" not in system
    assert "/demo" in system  # --demo: a fresh copy of the demo workspace, named in the runtime context
    assert first.messages[-1].source.kind == "user" and first.messages[-1].content[0].text == QUESTION
    end = [e for e in events if isinstance(e, TurnEnd)][-1]
    assert end.reason.kind in ("completed", "max-tokens"), (end.reason, done.stderr)
    assert (done.returncode == 0) == (end.reason.kind == "completed"), done.stderr
    return end.reason.kind


def test_a_plain_question_with_no_tools_completes_in_four_of_five_runs_and_ends_with_the_prompt(
        tmp_path: Path) -> None:
    reasons = [_one_run(tmp_path / f"home{seed}", seed) for seed in SEEDS]
    assert reasons.count("completed") >= 4, reasons
