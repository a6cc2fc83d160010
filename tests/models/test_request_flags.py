"""Issue 20 items 1/2/5/7 end to end: the ``run`` flags reach every request (and the log), bad
values are coded errors, ``%dsh`` parses the same flags; the CLI in a subprocess, the real SDK,
the loopback OpenAI-compatible server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dsh_notebook.cmdline.dsh_line import parse_line
from dsh_notebook.demo import copy_demo_workspace
from dsh_notebook.errors import UserError
from dsh_notebook.models.request_options import parse_option, parse_options, parse_tools
from dsh_notebook.wire.events import RequestHeader
from tests.realuse.cli import run_cli, session_of
from tests.support.fake_openai import FakeOpenAIServer
from tests.support.fake_openai_chunks import text_reply
from tests.support.log_checks import assert_valid_log


def test_max_tokens_and_options_reach_every_request_and_the_log(tmp_path: Path) -> None:
    workspace = copy_demo_workspace(tmp_path / "ws")
    with FakeOpenAIServer() as server:
        server.enqueue(text_reply("hello there"))
        done = run_cli("run", "--model", "fake-model", "--base-url", server.base_url, "--cwd", str(workspace),
                       "--approve", "deny", "--max-tokens", "64", "--option", "temperature=0.2",
                       "--option", "seed=7", "--option", "top_k=40", "--option", "reasoning_effort=low",
                       "--first-byte-timeout", "30", "--idle-timeout", "20", "Say hello.", home=tmp_path / "home")
        body = server.requests[-1].body
    assert done.returncode == 0, done.stderr
    assert (body["max_tokens"], body["temperature"], body["seed"], body["top_k"]) == (64, 0.2, 7, 40)
    assert body["reasoning_effort"] == "low"  # not JSON: kept as the string typed
    _sid, log = session_of(done.stdout)
    header = [e for e in assert_valid_log(log) if isinstance(e, RequestHeader)][-1]
    assert {k: header.config[k] for k in ("max_tokens", "temperature", "seed", "top_k")} == {
        "max_tokens": 64, "temperature": 0.2, "seed": 7, "top_k": 40}
    stats = run_cli("show", "--stats", str(log), home=tmp_path / "home")
    assert 'sent from 1.1.1: max_tokens=64 temperature=0.2 seed=7 top_k=40 reasoning_effort="low"' in stats.stdout
    as_json = json.loads(run_cli("show", "--stats", "--json", str(log), home=tmp_path / "home").stdout)
    assert as_json["requests"][0]["maxTokens"] == 64 and as_json["requests"][0]["options"]["seed"] == 7


@pytest.mark.parametrize(("flag", "value", "says"), [
    ("--max-tokens", "0", "--max-tokens must be a positive number of tokens"),
    ("--max-tokens", "lots", "--max-tokens must be a positive number of tokens"),
    ("--option", "temperature", "--option takes KEY=VALUE"),
    ("--option", "model=gpt-4o", "the harness sets 'model' itself"),
    ("--option", "max_tokens=-1", "--option max_tokens must be a positive number"),
    ("--tools", "none,read", "none and all stand alone"),
    ("--tools", ",", "--tools needs tool names"),
    ("--max-repeats", "-1", "--max-repeats must be a whole number"),
    ("--first-byte-timeout", "0", "--first-byte-timeout must be a positive number of seconds"),
    ("--idle-timeout", "soon", "--idle-timeout must be a positive number of seconds"),
])
def test_bad_flag_values_are_coded_errors_before_anything_starts(tmp_path: Path, flag: str, value: str,
                                                                  says: str) -> None:
    done = run_cli("run", flag, value, "hi", home=tmp_path / "home")
    assert done.returncode == 2 and "[BAD_CONFIG]" in done.stderr and says in done.stderr, done.stderr
    assert not (tmp_path / "home" / "sessions").exists() or not list((tmp_path / "home" / "sessions").iterdir())


def test_a_bad_env_output_limit_is_a_coded_error(tmp_path: Path) -> None:
    done = run_cli("run", "hi", home=tmp_path / "home", extra_env={"DSH_MAX_TOKENS": "-5"})
    assert done.returncode == 2 and "[BAD_CONFIG] DSH_MAX_TOKENS" in done.stderr


def test_option_values_are_json_else_strings() -> None:
    assert parse_option("temperature=0.2") == ("temperature", 0.2)
    assert parse_option('stop=["\\n", "END"]') == ("stop", ["\n", "END"])
    assert parse_option("reasoning_effort=low") == ("reasoning_effort", "low")
    assert parse_option("note=a=b") == ("note", "a=b")
    assert parse_option("seed=null") == ("seed", None)  # removes an option set before
    assert parse_options({"top_p": 0.9}) == {"top_p": 0.9}
    with pytest.raises(UserError) as info:
        parse_option("temperature=NaN")
    assert info.value.code == "BAD_CONFIG"


def test_tool_choices() -> None:
    assert parse_tools("none") == () and parse_tools("all") is None and parse_tools(None) is None
    assert parse_tools("read, grep,read") == ("read", "grep")


def test_the_magic_takes_the_same_flags_and_repeats_option() -> None:
    args = parse_line("--max-tokens 50 --option temperature=0.2 --option 'stop=[\"x\"]' --tools none "
                      "--max-repeats 1 --first-byte-timeout 900 --idle-timeout 60 what is 2+2?")
    assert (args.max_tokens, args.tools, args.max_repeats) == ("50", "none", "1")
    assert args.option == ["temperature=0.2", 'stop=["x"]']
    assert (args.first_byte_timeout, args.idle_timeout) == ("900", "60")
    assert args.text == "what is 2+2?"
    assert json.loads(args.option[1].partition("=")[2]) == ["x"]


def test_a_request_that_received_nothing_is_retried_and_one_cut_by_the_idle_timeout_is_not(tmp_path: Path) -> None:
    workspace = copy_demo_workspace(tmp_path / "ws")
    flags = ("--approve", "deny", "--first-byte-timeout", "0.5", "--idle-timeout", "0.5", "--cwd", str(workspace))
    with FakeOpenAIServer() as server:
        server.enqueue(text_reply("too late", head_delay=5.0), text_reply("on time"))
        slow_start = run_cli("run", "--model", "fake-model", "--base-url", server.base_url, *flags, "hi",
                             home=tmp_path / "home")
        retried = len(server.requests)
        server.enqueue(text_reply("half of an answer", pieces=4, stall_after=2))
        stalled = run_cli("run", "--model", "fake-model", "--base-url", server.base_url, *flags, "hi",
                          home=tmp_path / "home")
        cut = len(server.requests) - retried
    assert slow_start.returncode == 0 and "on time" in slow_start.stdout, slow_start.stderr
    assert retried == 2  # nothing had arrived: asked again
    assert "MODEL_TIMEOUT" in slow_start.stderr and "first-byte timeout" in slow_start.stderr
    assert stalled.returncode == 1 and cut == 1  # something had arrived: never thrown away and asked again
    assert "MODEL_TIMEOUT" in stalled.stderr and "idle timeout" in stalled.stderr
    _sid, log = session_of(stalled.stdout)
    assert_valid_log(log)


def test_extra_body_must_be_a_json_object() -> None:
    """Every other option goes into ``extra_body``: a scalar there was a TypeError at request time."""
    assert parse_options(["extra_body={\"top_k\": 5}"]) == {"extra_body": {"top_k": 5}}
    with pytest.raises(UserError) as err:
        parse_options(["extra_body=5"])
    assert err.value.code == "BAD_CONFIG" and "JSON object" in err.value.message
    with pytest.raises(UserError) as err:
        parse_options({"seed": object()}, "options")
    assert err.value.code == "BAD_CONFIG"
