"""Run to stage N of call cK: a one-shot breakpoint on a real Agent loop and over ``session/debug``
(serve --stdio, the scripted model); a target the turn is past, or never reaches, is said — never
waited for."""

from __future__ import annotations

import json
from typing import Any

import pytest

from dsh_notebook.agent.runto import parse_run_to
from dsh_notebook.errors import HostError
from tests.agent.fakes import ChunkModel, calls, echo_tool, make_agent, text
from tests.engineer.stdio_debug import debug_refused, followed_session
from tests.engineer.test_breakwhen import Person


def _three() -> ChunkModel:
    """c1 alone in step 1; c2 and c3 in one message in step 2; a final answer in step 3."""
    return ChunkModel(calls(("c1", "echo", '{"text":"a"}')),
                      calls(("c2", "echo", '{"text":"b"}'), ("c3", "echo", '{"text":"c"}')), text("done"))


@pytest.mark.parametrize(("text", "want"), [
    ("05 c3", ("05", "c3")), ("5 c3", ("05", "c3")), ("stage 5 of c3", ("05", "c3")),
    ("c3 05", ("05", "c3")), ("run to stage 02 of call call_ab-1", ("02", "call_ab-1")), ("1, c1", ("01", "c1")),
])
def test_the_target_is_read_in_the_forms_a_person_types(text: str, want: tuple[str, str]) -> None:
    assert parse_run_to(text) == want


@pytest.mark.parametrize("text", ["", "05", "c3", "07 c3", "00 c1", "05 c3 c4", "05 06 c3", "05 c/3"])
def test_a_target_that_cannot_be_read_is_bad_run_to(text: str) -> None:
    with pytest.raises(HostError) as err:
        parse_run_to(text)
    assert err.value.code == "BAD_RUN_TO"


@pytest.mark.parametrize("stage", ["01", "02", "03", "04", "05", "06"])
async def test_run_to_pauses_exactly_once_at_that_stage_of_that_call(stage: str) -> None:
    person = Person()
    agent = make_agent(_three(), echo_tool(), frames=person)
    state = agent.debugger.run_to(stage, "c3")  # before the turn: no breakpoint at all
    assert (state.stage, state.call) == (stage, "c3")
    agent.followup("go")
    p = await person.next()
    call = {"02": "c3", "03": "c3", "04": "c3"}.get(stage)
    assert (p["stage"], p.get("callId")) == (stage, call)
    if stage == "01":  # the message that makes c3 (with c2)
        assert [b["id"] for b in p["payload"]["message"]["content"] if b["type"] == "tool-call"] == ["c2", "c3"]
    if stage in ("05", "06"):  # the next step carries c3's result
        msgs = p["payload"]["messages"]
        assert msgs[-1]["role"] == "tool" and msgs[-1]["toolCallId"] == "c3"
    assert agent.debugger.describe()["run_to"] is None  # used up: one-shot
    agent.debugger.resume("continue")
    await agent.wait_idle()
    assert person.pauses.empty()  # it paused there and nowhere else
    assert agent.session.events[-1].type == "turn/end"


async def test_run_to_from_a_pause_goes_on_and_a_passed_target_is_refused() -> None:
    person = Person()
    agent = make_agent(_three(), echo_tool(), frames=person)
    agent.debugger.set_breakpoints(["03"])
    agent.followup("go")
    assert (await person.next())["callId"] == "c1"
    with pytest.raises(HostError) as err:  # where it is now is not ahead
        agent.debugger.run_to("03", "c1")
    assert err.value.code == "RUN_TO_PASSED" and "stage 03 of c1" in err.value.message
    with pytest.raises(HostError) as err:
        agent.debugger.run_to("09", "c1")
    assert err.value.code == "BAD_RUN_TO"
    assert agent.debugger.paused is not None  # a refused run-to changes nothing
    agent.debugger.run_to("06", "c1")  # continues: the 03 breakpoint of c2 is not on the way
    p = await person.next()
    assert (p["stage"], p["payload"]["messages"][-1]["toolCallId"]) == ("06", "c1")
    with pytest.raises(HostError) as err:
        agent.debugger.run_to("04", "c1")
    assert err.value.code == "RUN_TO_PASSED"
    agent.debugger.set_breakpoints([])
    agent.debugger.run_to("02", "c3")
    assert (await person.next())["callId"] == "c3"
    agent.debugger.resume("continue")
    await agent.wait_idle()
    assert person.pauses.empty()


async def test_a_target_the_turn_never_reaches_is_missed_at_its_end_never_waited_for() -> None:
    person = Person()
    agent = make_agent(_three(), echo_tool(), frames=person)
    agent.debugger.run_to("02", "c7")
    agent.followup("go")
    await agent.wait_idle()  # no hang: the turn ends, the target is dropped and said
    state = agent.debugger.describe()
    assert state["run_to"] is None and state["paused"] is None
    assert state["run_to_missed"] == "the turn ended before stage 02 of c7 (3 tool calls made)"
    assert person.pauses.empty()


async def test_a_call_id_names_the_call_as_the_pause_line_shows_it() -> None:
    person = Person()
    model = ChunkModel(calls(("call_x", "echo", '{"text":"a"}'), ("call_y", "echo", '{"text":"b"}')), text("ok"))
    agent = make_agent(model, echo_tool(), frames=person)
    agent.debugger.run_to("04", "call_y")
    agent.followup("go")
    p = await person.next()
    assert (p["stage"], p["callId"]) == ("04", "call_y")
    with pytest.raises(HostError) as err:  # c2 is the second call: call_y, at 04 now
        agent.debugger.run_to("03", "c2")
    assert err.value.code == "RUN_TO_PASSED" and "c2 (call_y)" in err.value.message
    agent.debugger.resume("continue")
    await agent.wait_idle()


# -- over session/debug: the host, a real scripted run (bash c1, read c2, edit c3, bash c4) ----------

def test_session_debug_run_to_over_stdio(tmp_path: Any) -> None:
    from tests.host.test_debug_stdio import Stdio

    srv = Stdio(tmp_path / "home")
    try:
        sid = followed_session(srv)
        assert debug_refused(srv, sessionId=sid, action="run-to", stage="05") == "BAD_RUN_TO"
        state = srv.call("session/debug", sessionId=sid, action="break", stages=["02"])
        srv.call("session/prompt", request={"sessionId": sid, "requestId": "req_1", "mode": "queue",
                                            "content": "run the tests"})

        def paused() -> dict[str, Any]:
            return srv.until(lambda m: m.get("type") == "item" and m["value"].get("type") == "paused")["value"]

        p = paused()
        assert (p["stage"], p["callId"]) == ("02", "c1")
        state = srv.call("session/debug", sessionId=sid, action="run-to", stage="04", call="c3")
        assert state["runTo"] == {"stage": "04", "call": "c3"} and state.get("paused") is None
        p = paused()  # the 02 breakpoint still pauses on the way (c2), then c3 at 04
        assert (p["stage"], p["callId"], p["name"]) == ("02", "c2", "read")
        srv.call("session/debug", sessionId=sid, action="continue")
        p = paused()  # c3's own 02 breakpoint comes before its 04
        assert (p["stage"], p["callId"]) == ("02", "c3")
        srv.call("session/debug", sessionId=sid, action="continue")
        p = paused()
        assert (p["stage"], p["callId"], p["name"]) == ("04", "c3", "edit")
        assert debug_refused(srv, sessionId=sid, action="run-to", stage="02", call="c2") == "RUN_TO_PASSED"
        srv.call("session/debug", sessionId=sid, action="break", stages=[])
        state = srv.call("session/debug", sessionId=sid, action="run-to", stage="01", call="c9")
        assert state["runTo"] == {"stage": "01", "call": "c9"}
        srv.until(lambda m: m.get("type") == "item" and (m["value"].get("event") or {}).get("type") == "turn/end")
        state = srv.call("session/debug", sessionId=sid, action="state")
        assert state.get("runTo") is None
        assert state["runToMissed"].startswith("the turn ended before stage 01 of c9 (4 tool calls made)")
        assert json.dumps(state)  # plain wire data
    finally:
        srv.close()


# -- the stdin debugger at a terminal (the run CLI asks like the notebook cell) ---------------------

def _spawn(tmp_path: Any, *argv: str) -> Any:
    import os
    import sys
    from pathlib import Path

    import pexpect

    repo = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(repo), "DSH_HOME": str(tmp_path / "home"), "TERM": "dumb"}
    return pexpect.spawn(sys.executable, ["-m", "dsh_notebook", "run", *argv, "run the tests"],
                         env=env, encoding="utf-8", timeout=120)


DEBUG = r"debug \[c/s/r/p/e/q\]> "
WHERE = r"run to \(stage, call\)[^>]*> "


def _pause(child: Any) -> str:
    """The || paused line of the pause the prompt is about (after expect(DEBUG))."""
    line: str = " paused" + child.before.split("|| paused", 1)[1].splitlines()[0]
    return line


def test_r_at_the_pause_prompt_runs_to_a_stage_of_a_call_at_a_terminal(tmp_path: Any) -> None:
    import pexpect

    child = _spawn(tmp_path, "--break", "02")
    try:
        child.expect(DEBUG)
        assert _pause(child).startswith(" paused at stage 02 (tool call registered) · bash c1")
        child.sendline("r")
        child.expect(WHERE)
        child.sendline("02 c1")  # where it is now: not ahead
        child.expect(DEBUG)
        assert "[RUN_TO_PASSED] stage 02 of c1 has already happened" in child.before
        child.sendline("r")
        child.expect(WHERE)
        child.sendline("stage 4 of c3")
        seen = []
        while child.expect([DEBUG, pexpect.EOF]) == 0:
            seen.append(_pause(child).split(" · ")[0:2])
            if seen[-1][0].startswith(" paused at stage 04"):
                child.sendline("r")
                child.expect(WHERE)
                child.sendline("01 c9")  # never made: said at the turn's end
            else:
                child.sendline("c")
        out = child.before
    finally:
        child.close(force=True)
    assert [s[1] for s in seen] == ["read c2", "edit c3", "edit c3", "bash c4"]
    assert [s[0].strip()[:18] for s in seen] == ["paused at stage 02", "paused at stage 02", "paused at stage 04",
                                                 "paused at stage 02"]
    assert "run to stage 01 of c9: not reached — the turn ended before stage 01 of c9 (4 tool calls made)" in out
    assert child.exitstatus == 0


def test_run_to_flag_alone_pauses_only_there(tmp_path: Any) -> None:
    import pexpect

    child = _spawn(tmp_path, "--run-to", "stage 3 of c2")
    pauses = []
    try:
        while child.expect([DEBUG, pexpect.EOF]) == 0:
            pauses.append(_pause(child))
            child.sendline("c")
    finally:
        child.close(force=True)
    assert len(pauses) == 1 and pauses[0].startswith(" paused at stage 03 (tool executes) · read c2")
    assert child.exitstatus == 0
