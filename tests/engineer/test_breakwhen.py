"""Conditional breakpoints: the ``--break-when`` language (property-tested: no input runs code or
raises anything but BAD_BREAK_WHEN) and a real Agent loop that pauses only on matching calls."""

from __future__ import annotations

import ast
import asyncio
import inspect
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dsh_notebook.agent import breakwhen
from dsh_notebook.agent.breakwhen import BreakWhenError, Call, holds, parse_when
from dsh_notebook.wire.base import dump
from tests.agent.fakes import ChunkModel, calls, echo_tool, make_agent, text
from tests.engineer.stdio_debug import debug_refused, followed_session
from tests.support.cli import dsh

# -- the language -------------------------------------------------------------------------------

RM = Call("bash", json.dumps({"command": "rm -rf build", "timeout": 30}))
LS = Call("bash", json.dumps({"command": "ls"}))
READ = Call("read", json.dumps({"file_path": "src/x.py"}))


@pytest.mark.parametrize(("expr", "want"), [
    ('name==bash and command~"rm "', [True, False, False]),
    ("name==bash", [True, True, False]),
    ("name!=bash", [False, False, True]),
    ('not command~"rm "', [False, True, True]),
    ('command!~"rm "', [False, True, True]),
    ("file_path==src/x.py or timeout==30", [True, False, True]),
    ('name==read or name==bash and command~rm', [True, False, True]),  # and binds tighter
    ('(name==read or name==bash) and command~rm', [True, False, False]),
    ("NOT (name==read)", [True, True, False]),
    ("args~timeout", [True, False, False]),
    (r"command=='rm -rf build'", [True, False, False]),
    (r'command=="say \"hi\""', [False, False, False]),
])
def test_examples(expr: str, want: list[bool]) -> None:
    node = parse_when(expr)
    assert [holds(node, c) for c in (RM, LS, READ)] == want


@pytest.mark.parametrize("bad", ["", "   ", "name", "name==", "name bash", "(name==a", "name==a)", 'name=="x',
                                 "and", "name==a and", "a==1 b==2", "name=bash", "name===bash", "!", "()",
                                 "(" * 70 + "a==b" + ")" * 70, "not " * 100 + "a==b", "a==b" * 1000])
def test_bad_expressions_are_coded_errors(bad: str) -> None:
    with pytest.raises(BreakWhenError) as err:
        parse_when(bad)
    assert err.value.code == "BAD_BREAK_WHEN" and err.value.message


def test_the_module_never_evaluates_code() -> None:
    tree = ast.parse(inspect.getsource(breakwhen))
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    attrs = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    assert not names & {"eval", "exec", "compile", "__import__", "getattr", "setattr", "globals", "vars"}
    assert not attrs & {"literal_eval", "import_module", "eval", "exec"}


ALPHABET = st.sampled_from(list('abnotdrmsx=!~()"\' \\\t\n_.-/*0é') + ["and", "or", "not", "name", "==", "~"])


@settings(max_examples=400, deadline=None)
@given(st.lists(ALPHABET, max_size=40).map("".join) | st.text(max_size=80), st.text(max_size=30), st.text(max_size=60))
def test_any_text_parses_or_is_bad_break_when_and_never_raises_when_held(expr: str, name: str, args: str) -> None:
    try:
        node = parse_when(expr)
    except BreakWhenError as err:
        assert err.code == "BAD_BREAK_WHEN"
        return
    assert isinstance(holds(node, Call(name, args)), bool)


# a reference: generate the AST and its text together, evaluate the AST directly
FIELDS = st.sampled_from(["name", "command", "args", "missing", "n"])
VALUES = st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\x00"), max_size=8)


def _quote(v: str) -> str:
    return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _tests() -> st.SearchStrategy[tuple[str, Any]]:
    return st.tuples(FIELDS, st.sampled_from(["==", "!=", "~", "!~"]), VALUES).map(
        lambda t: (f"{t[0]}{t[1]}{_quote(t[2])}", ("test", *t)))


EXPRS = st.recursive(_tests(), lambda inner: st.one_of(
    inner.map(lambda e: (f"not ({e[0]})", ("not", e[1]))),
    st.tuples(st.sampled_from(["and", "or"]), inner, inner).map(
        lambda t: (f"({t[1][0]}) {t[0]} ({t[2][0]})", (t[0], t[1][1], t[2][1])))), max_leaves=8)


def _ref(tree: Any, call: Call) -> bool:
    kind = tree[0]
    if kind == "test":
        _, field, op, value = tree
        got = call.get(field)
        return {"==": got == value, "!=": got != value, "~": got is not None and value in got,
                "!~": not (got is not None and value in got)}[op]
    if kind == "not":
        return not _ref(tree[1], call)
    a, b = _ref(tree[1], call), _ref(tree[2], call)
    return (a and b) if kind == "and" else (a or b)


@settings(max_examples=300, deadline=None)
@given(EXPRS, VALUES, VALUES, st.integers(-3, 3))
def test_generated_expressions_mean_what_they_say(expr: tuple[str, Any], name: str, command: str, n: int) -> None:
    call = Call(name, json.dumps({"command": command, "n": n}))
    assert holds(parse_when(expr[0]), call) == _ref(expr[1], call)


# -- on a real Agent loop ------------------------------------------------------------------------

class Person:
    def __init__(self) -> None:
        self.pauses: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    def __call__(self, item: Any) -> None:
        frame = dump(item)
        if frame.get("type") == "paused":
            self.pauses.put_nowait(frame)

    async def next(self) -> dict[str, Any]:
        return await asyncio.wait_for(self.pauses.get(), 10)


def _batch() -> ChunkModel:
    return ChunkModel(calls(("c1", "echo", '{"text":"hi"}'), ("c2", "echo", '{"text":"rm -rf build"}'),
                            ("c3", "echo", '{"text":"bye"}')), text("done"))


@pytest.mark.parametrize("stages", [["03"], ["02", "04"], ["01", "03"]])
async def test_a_conditional_breakpoint_pauses_only_on_the_matching_call(stages: list[str]) -> None:
    person = Person()
    agent = make_agent(_batch(), echo_tool(), frames=person)
    agent.debugger.set_breakpoints(stages, when='name==echo and text~"rm "')
    assert agent.debugger.describe()["when"] == 'name==echo and text~"rm "'
    agent.followup("go")
    seen = []
    for _ in range(len(stages)):
        p = await person.next()
        seen.append((p["stage"], p.get("callId")))
        agent.debugger.resume("continue")
    await agent.wait_idle()
    assert person.pauses.empty()
    want = {"01": None, "02": "c2", "03": "c2", "04": "c2"}
    assert seen == [(s, want[s]) for s in stages]
    assert agent.session.events[-1].type == "turn/end"


async def test_a_condition_nothing_matches_never_pauses_and_a_bad_one_changes_nothing() -> None:
    person = Person()
    agent = make_agent(_batch(), echo_tool(), frames=person)
    agent.debugger.set_breakpoints(["03"], ["echo"])
    with pytest.raises(BreakWhenError):
        agent.debugger.set_breakpoints(["02"], when="name==")
    with pytest.raises(BreakWhenError):
        agent.debugger.set_breakpoints([], when="name==echo")
    assert agent.debugger.describe()["stages"] == ["03"]  # the old breakpoints stay
    agent.debugger.set_breakpoints(["02", "03", "04", "05", "06"], when="name==nope")
    agent.followup("go")
    await agent.wait_idle()
    assert person.pauses.empty()
    assert agent.session.events[-1].type == "turn/end"


# -- over session/debug, as a check from outside drives it (serve --stdio, the scripted model) ----

def test_session_debug_break_with_when_over_stdio(tmp_path: Any) -> None:
    from tests.host.test_debug_stdio import Stdio

    srv = Stdio(tmp_path / "home")
    try:
        sid = followed_session(srv)
        assert debug_refused(srv, sessionId=sid, action="break", stages=["03"], when="name==") == "BAD_BREAK_WHEN"
        when = 'name==bash and command~"run.mjs"'
        state = srv.call("session/debug", sessionId=sid, action="break", stages=["03"], when=when)
        assert state["when"] == when and state["stages"] == ["03"]
        srv.call("session/prompt", request={"sessionId": sid, "requestId": "req_1", "mode": "queue",
                                            "content": "run the tests"})
        names = []
        while True:  # every pause until the turn ends: only the two bash runs of the tests
            msg = srv.until(lambda m: m.get("type") == "item" and (
                m["value"].get("type") == "paused" or (m["value"].get("event") or {}).get("type") == "turn/end"))
            if msg["value"].get("type") != "paused":
                break
            names.append((msg["value"]["name"], json.loads(msg["value"]["payload"]["arguments"])["command"]))
            srv.call("session/debug", sessionId=sid, action="continue")
        assert names == [("bash", "node test/run.mjs")] * 2
        calls_made = [m["value"]["event"]["name"] for m in srv.seen if m.get("type") == "item"
                      and (m["value"].get("event") or {}).get("type") == "tool/call"]
        assert set(calls_made) > {"bash"}  # other tools ran without pausing
    finally:
        srv.close()


def test_run_breaks_only_on_matching_calls_at_a_terminal(tmp_path: Any) -> None:
    import os
    import sys
    from pathlib import Path

    import pexpect

    repo = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(repo), "DSH_HOME": str(tmp_path / "home"), "TERM": "dumb"}
    bad = dsh("run", "--break", "03", "--break-when", "name==", "hi", env=env, timeout=60)
    assert bad.returncode == 2 and "BAD_BREAK_WHEN" in bad.stderr
    assert not (tmp_path / "home" / "sessions").exists() or not list((tmp_path / "home" / "sessions").iterdir())
    child = pexpect.spawn(sys.executable, ["-m", "dsh_notebook", "run", "--break", "03", "--break-when",
                                           'name==bash and command~"run.mjs"', "run the tests"],
                          env=env, encoding="utf-8", timeout=120)
    paused = []
    try:
        while child.expect([r"debug \[c/s/r/p/e/q\]> ", pexpect.EOF]) == 0:
            paused.append(" paused" + child.before.split("|| paused", 1)[1].splitlines()[0])
            child.sendline("c")
    finally:
        child.close(force=True)
    assert [p.split(" · ")[1] for p in paused] == ["bash c1", "bash c4"]  # not read c2, not edit c3
    assert child.exitstatus == 0
