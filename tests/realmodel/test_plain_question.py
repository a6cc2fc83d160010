"""A plain question to the real small model (issue 39 items 1–2): ``--tools none`` is a plain chat
turn (no tool offered, so nothing to call and nothing to end ``stuck``), the runtime context goes
before the prompt and the request ends with the prompt — so SmolLM2 answers the question, not the
date. ``--demo`` puts it on a fresh demo copy. Structure only, never the model's wording."""

from __future__ import annotations

from pathlib import Path

from dsh_notebook.session.requests import request_points
from dsh_notebook.wire.events import RequestHeader, TurnEnd
from tests.realuse.cli import run_cli, session_of
from tests.support.log_checks import assert_valid_log

THREADS = {"DSH_LOCAL_THREADS": "1"}
QUESTION = "Say hello in five words."


def test_a_plain_question_with_no_tools_completes_and_its_request_ends_with_the_prompt(tmp_path: Path) -> None:
    # the card's recommended sampling, given here so the check does not depend on the defaults
    done = run_cli("run", "--model", "local:smollm2", "--demo", "--tools", "none", "--max-tokens", "256",
                   "--max-steps", "2", "--option", "temperature=0.2", "--option", "top_p=0.9", QUESTION,
                   home=tmp_path / "home", extra_env=THREADS, timeout=280)
    _sid, log = session_of(done.stdout)
    events = assert_valid_log(log)
    end = [e for e in events if isinstance(e, TurnEnd)][-1]
    assert done.returncode == 0 and end.reason.kind == "completed", (end.reason, done.stderr)
    [header] = [e for e in events if isinstance(e, RequestHeader)]
    assert header.tools == ()  # nothing offered
    [first] = request_points(events)
    roles = [m.role for m in first.messages]
    assert roles == ["system", "user", "user"]
    assert first.messages[1].source.kind == "plugin" and "Today's date" in first.messages[1].content[0].text
    assert first.messages[-1].source.kind == "user" and first.messages[-1].content[0].text == QUESTION
    assert "Act through the tools" not in first.messages[0].content[0].text
    assert "/demo" in Path(log).read_text().splitlines()[0]  # --demo: a fresh copy of the demo workspace
