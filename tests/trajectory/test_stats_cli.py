"""``run`` then ``show --stats [--json]`` in real subprocesses against the loopback server that
streams with a KNOWN delay before the first chunk and KNOWN usage (the issue's outside check)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from dsh_notebook.demo import copy_demo_workspace
from tests.support.cli import dsh
from tests.support.fake_openai import FakeOpenAIServer
from tests.support.fake_openai_chunks import text_reply, tool_call_reply

REPO = Path(__file__).resolve().parents[2]
DELAY_S = 0.35
USAGE_1 = {"prompt_tokens": 1200, "completion_tokens": 40, "total_tokens": 1240,
           "prompt_tokens_details": {"cached_tokens": 1000}}
USAGE_2 = {"prompt_tokens": 1500, "completion_tokens": 25, "total_tokens": 1525}


def cli(*args: str, home: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k not in ("DSH_PRICES_FILE", "DSH_CONTEXT_WINDOW")}
    full = {**base, "DSH_HOME": str(home), "PYTHONPATH": str(REPO),
            "DSH_API_KEY": FakeOpenAIServer.api_key or "", **(env or {})}
    return dsh(*args, env=full, timeout=120)


def run_session(tmp_path: Path, env: dict[str, str]) -> tuple[str, Path]:
    ws = copy_demo_workspace(tmp_path / "ws")
    with FakeOpenAIServer() as server:
        server.enqueue(
            tool_call_reply([("call_1", "read", json.dumps({"file_path": "README.md"}))], text="Reading.",
                            usage=USAGE_1, first_delay=DELAY_S),
            text_reply("It is a tiny TypeScript project.", usage=USAGE_2, head_delay=DELAY_S),
        )
        done = cli("run", "--model", "fake-model", "--base-url", server.base_url, "--cwd", str(ws),
                   "summarise README.md", home=tmp_path / "home", env=env)
    assert done.returncode == 0, done.stderr
    last = done.stdout.strip().splitlines()[-1]
    sid, log = last.split()[1], Path(last.split(" log: ")[1])
    return sid, log


def test_show_stats_json_has_the_delay_and_the_servers_tokens(tmp_path: Path) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"fake-model": {"input": 2.0, "cachedInput": 0.5, "output": 8.0,
                                                 "contextWindow": 10_000}}))
    env = {"DSH_PRICES_FILE": str(prices)}
    sid, log = run_session(tmp_path, env)
    done = cli("show", "--stats", "--json", sid, home=tmp_path / "home", env=env)
    assert done.returncode == 0, done.stderr
    stats: dict[str, Any] = json.loads(done.stdout)
    assert set(stats) == {"requests", "tools", "turns", "totals", "decisions"}
    r1, r2 = stats["requests"]
    events = [json.loads(line) for line in log.read_text().splitlines()[1:]]
    frozen = [e["seq"] for e in events if e["type"] == "request/frozen"]
    assert [r1["seq"], r2["seq"]] == frozen
    for r in (r1, r2):
        assert r["model"] == "fake-model"
        assert r["ttftMs"] >= DELAY_S * 1000 and r["durationMs"] >= r["ttftMs"]
    # the head came at once, then the delay: only lower bounds are facts under load (a stalled client
    # may read the head late), so the order of the two marks is what is checked, never an upper bound
    assert r1["firstByteMs"] <= r1["ttftMs"] and r1["ttftMs"] >= DELAY_S * 1000
    assert r2["firstByteMs"] >= DELAY_S * 1000  # the head itself was late
    assert (r1["inputTokens"], r1["cachedInputTokens"], r1["outputTokens"]) == (1200, 1000, 40)
    assert (r2["inputTokens"], r2["outputTokens"]) == (1500, 25)
    assert r1["costUsd"] == (200 * 2.0 + 1000 * 0.5 + 40 * 8.0) / 1e6
    assert r2["costUsd"] == (1500 * 2.0 + 25 * 8.0) / 1e6
    assert r1["contextUsed"] == 0.12 and r2["contextUsed"] == 0.15
    (tool,) = stats["tools"]
    assert tool["callId"] == "call_1" and tool["name"] == "read"
    assert tool["durationMs"] >= 0 and tool["approvalWaitMs"] is None  # --approve auto: never asked
    totals = stats["totals"]
    assert (totals["inputTokens"], totals["outputTokens"]) == (2700, 65)
    assert totals["costUsd"] == r1["costUsd"] + r2["costUsd"]
    (turn,) = stats["turns"]
    assert totals["durationMs"] == turn["durationMs"] >= r1["durationMs"] + r2["durationMs"]
    assert len(turn["steps"]) == 2 and all(s["durationMs"] is not None for s in turn["steps"])
    assert turn["requests"] == 2 and turn["toolCalls"] == 1 and turn["reason"] == "completed"

    text = cli("show", "--stats", str(log), home=tmp_path / "home", env=env)
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert lines[0] == "requests" and lines[1].split()[:3] == ["SEQ", "T.S.A", "MODEL"]
    assert any(line.split()[0] == str(r1["seq"]) and "openai:fake-model" in line for line in lines)
    assert lines[-1].startswith("total: ") and "2,700 in / 65 out tokens" in lines[-1]


def test_unknown_model_cost_is_null_and_window_override(tmp_path: Path) -> None:
    sid, _ = run_session(tmp_path, {})
    done = cli("show", "--stats", "--json", "--context-window", "3000", sid, home=tmp_path / "home")
    stats = json.loads(done.stdout)
    assert [r["costUsd"] for r in stats["requests"]] == [None, None]
    assert stats["totals"]["costUsd"] is None
    assert [r["contextUsed"] for r in stats["requests"]] == [0.4, 0.5]
    plain = cli("show", "--stats", "--json", sid, home=tmp_path / "home")
    assert [r["contextUsed"] for r in json.loads(plain.stdout)["requests"]] == [None, None]
    bad = cli("show", "--stats", "--context-window", "lots", sid, home=tmp_path / "home")
    assert bad.returncode == 2 and "--context-window" in bad.stderr


def test_a_commands_exit_code_is_its_result_not_ok(tmp_path: Path) -> None:
    """The failing test run of script:fix-tests ran fine as a tool and exited 1: stats say exit 1."""
    ws = copy_demo_workspace(tmp_path / "ws")
    home = tmp_path / "home"
    done = cli("run", "--model", "script:fix-tests", "--approve", "auto", "--cwd", str(ws),
               "run the tests; if they fail, fix src/math.ts; tell me the result", home=home)
    assert done.returncode == 0, done.stderr
    sid = done.stdout.strip().splitlines()[-1].split()[1]
    stats = json.loads(cli("show", "--stats", "--json", sid, home=home).stdout)
    assert [(t["name"], t["error"], t["exitCode"]) for t in stats["tools"]] == [
        ("bash", None, 1), ("read", None, None), ("edit", None, None), ("bash", None, 0)]
    text = cli("show", "--stats", sid, home=home).stdout.splitlines()
    rows = [line.split() for line in text[text.index("tools") + 2:] if line.strip()][:4]
    assert [r[3] for r in rows] == ["bash", "read", "edit", "bash"]
    assert [r[-1] for r in rows] == ["1", "ok", "ok", "0"] and [r[-2] for r in rows] == ["exit", "(auto)", "(auto)", "exit"]
    # each call's decision (DECIDED, before RESULT): --approve auto is the legacy mode auto, which decided them all
    decided = [" ".join(r[-6:-2] if r[-2] == "exit" else r[-5:-1]) for r in rows]
    assert decided == ["allow by mode (auto)"] * 4
