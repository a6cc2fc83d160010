"""The ``%dsh`` summary line and ``TurnResult.usage / .duration_ms / .cost_usd`` against the
loopback server (known delay, known usage): a live turn shows the same figures as
``show --stats`` of its saved log; ``%dsh sessions --search``; ``--context-window``."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from dsh_notebook.notebook.cell.result import TurnResult
from dsh_notebook.notebook.magic.magics import DshMagicError
from dsh_notebook.notebook.magic.views import SearchResults, StatsView
from tests.support.cli import dsh
from tests.support.fake_openai import FakeOpenAIServer
from tests.support.fake_openai_chunks import text_reply, tool_call_reply

from .conftest import REPO

USAGE_1 = {"prompt_tokens": 3000, "completion_tokens": 50, "total_tokens": 3050,
           "prompt_tokens_details": {"cached_tokens": 2000}}
USAGE_2 = {"prompt_tokens": 3200, "completion_tokens": 20, "total_tokens": 3220}


@pytest.fixture
def priced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"fake-model": {"input": 1.0, "cachedInput": 0.1, "output": 4.0,
                                                 "contextWindow": 16_000}}))
    monkeypatch.setenv("DSH_PRICES_FILE", str(prices))
    monkeypatch.setenv("DSH_CONTEXT_WINDOW", "")  # recorded: whatever %dsh sets is undone after the test
    monkeypatch.delenv("DSH_CONTEXT_WINDOW")
    return prices


def test_live_turn_figures_equal_show_stats_of_its_log(shell: Any, fake_server: FakeOpenAIServer, priced: Path,
                                                       tmp_path: Path, isolated_dsh_home: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "notes.txt").write_text("wombatquill\n")
    fake_server.enqueue(
        tool_call_reply([("n1", "read", json.dumps({"file_path": "notes.txt"}))], usage=USAGE_1, first_delay=0.2),
        text_reply("It says wombatquill.", usage=USAGE_2),
    )
    line = f"--model fake-model --base-url {fake_server.base_url} --cwd {tmp_path} --approve auto read notes.txt"
    result = shell.run_cell(f"%dsh {line}").result
    assert isinstance(result, TurnResult) and result.ok, capsys.readouterr()
    usage = result.usage  # one meaning per number: the turn's sums of show --stats (issue 38 item 6)
    assert (usage.input_tokens, usage.cached_input_tokens, usage.output_tokens, usage.requests) == (6200, 2000, 70, 2)
    assert usage.uncached_input_tokens == 6200 - 2000
    expected_cost = ((1000 + 3200) * 1.0 + 2000 * 0.1 + 70 * 4.0) / 1e6
    assert result.cost_usd == pytest.approx(expected_cost)
    assert result.duration_ms is not None and result.duration_ms >= 200
    summary = result.summary()
    assert "6,200 in / 70 out tokens" in summary and f"${expected_cost:.4f}" in summary
    assert summary.startswith(f"completed · session {result.session_id} · turn 1 · 1 tool call · ")
    assert "6,200 in / 70 out tokens" in result._repr_markdown_()

    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = dsh("show", "--stats", "--json", result.session_id, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    saved = json.loads(done.stdout)
    (turn,) = saved["turns"]
    assert result.stats is not None
    assert turn == result.stats.model_dump(mode="json")  # the same figures, live and saved
    assert (usage.input_tokens, usage.cached_input_tokens, usage.output_tokens, usage.reasoning_tokens, usage.requests) == (
        turn["inputTokens"], turn["cachedInputTokens"], turn["outputTokens"], turn["reasoningTokens"], turn["requests"])
    assert turn["durationMs"] == result.duration_ms and turn["costUsd"] == result.cost_usd
    assert saved["requests"][0]["ttftMs"] >= 200

    view = shell.run_cell("%dsh show --stats").result  # the cell's value (not the last line: displayed there)
    assert isinstance(view, StatsView)
    text = repr(view)
    assert text.startswith(f"session {result.session_id}\n")
    assert "6,200 in / 70 out tokens" in text.splitlines()[-1]
    as_text = dsh("show", "--stats", result.session_id, env=env, timeout=60).stdout
    assert as_text.strip().splitlines()[-1] == text.splitlines()[-1]  # the same totals as the CLI's

    found = shell.run_cell("%dsh sessions --search wombatquill").result
    assert isinstance(found, SearchResults) and found.session_ids() == [result.session_id]
    assert {row[2] for row in found.rows} == {"tool/result", "assistant/message"}
    assert "wombatquill" in repr(found)


def test_context_window_flag_sets_the_kernels_window(shell: Any, fake_server: FakeOpenAIServer, priced: Path,
                                                     tmp_path: Path) -> None:
    fake_server.enqueue(text_reply("hi", usage=USAGE_2))
    result = shell.run_cell(f"%dsh --context-window 6400 --model fake-model --base-url {fake_server.base_url} "
                            f"--cwd {tmp_path} hello").result
    assert isinstance(result, TurnResult) and result.ok
    assert os.environ["DSH_CONTEXT_WINDOW"] == "6400"
    assert result.stats is not None and result.stats.context_used == 0.5
    # the window in effect is recorded on request/frozen: the saved log shows the same fill
    env = {k: v for k, v in os.environ.items() if k not in ("DSH_CONTEXT_WINDOW", "DSH_PRICES_FILE")}
    done = dsh("show", "--stats", "--json", result.session_id, env={**env, "PYTHONPATH": str(REPO)}, timeout=60)
    (request,) = json.loads(done.stdout)["requests"]
    assert (request["contextWindow"], request["contextUsed"]) == (6400, 0.5)
    config = shell.run_cell("%dsh config").result
    assert config.items["context window"] == "6400 tokens (from the flag)"  # --context-window sets DSH_CONTEXT_WINDOW: source `flag`
    assert config.items["prices"].startswith(str(priced)) and config.items["OpenTelemetry"].startswith("off")
    with pytest.raises(DshMagicError) as err:
        shell.run_line_magic("dsh", "--context-window lots hello")
    assert err.value.error.code == "BAD_FLAG"
    with pytest.raises(DshMagicError):
        shell.run_line_magic("dsh", "sessions --search")
