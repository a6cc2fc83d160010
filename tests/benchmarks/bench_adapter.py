"""Adapter throughput vs the raw ``openai`` SDK on the same 10k-chunk local stream.

Both sides use the real SDK over real HTTP/SSE to the loopback server (tests/support/fake_openai):
the baseline only iterates the SDK's chunk objects; the adapter iterates them too and assembles
them into normalized stream chunks (:class:`OpenAICompatAdapter.stream`). The SSE body is encoded
once up front, so the server costs the same for both. Runs alternate; medians are compared, on
the client thread's CPU time (robust to other load on the machine; the server runs on its own
thread) and on wall time.

    python tests/benchmarks/bench_adapter.py [--chunks 10000] [--rounds 7]

Target: adapter throughput ≥ 0.9× raw.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import openai  # noqa: E402

from dsh_notebook.models.base import ModelRequest  # noqa: E402
from dsh_notebook.models.openai_compat import OpenAICompatAdapter  # noqa: E402
from dsh_notebook.wire.messages import user_text  # noqa: E402
from tests.support.fake_openai import FakeOpenAIServer, Reply, chunk  # noqa: E402

MESSAGES = [{"role": "user", "content": "go"}]


def stream_chunks(total: int) -> list[dict[str, Any]]:
    """``total`` chunks: 60% text deltas, then four tool calls' argument deltas, finish, usage."""
    text = int(total * 0.6)
    out = [chunk({"role": "assistant", "content": ""})]
    out += [chunk({"content": f"word{n} "}) for n in range(text)]
    calls = 4
    per_call = (total - text - 3) // calls
    for c in range(calls):
        out.append(chunk({"tool_calls": [{"index": c, "id": f"call_{c}", "type": "function",
                                          "function": {"name": "write", "arguments": '{"content": "'}}]}))
        out += [chunk({"tool_calls": [{"index": c, "function": {"arguments": f"line {n}\\n"}}]})
                for n in range(per_call - 1)]
    out.append(chunk({"tool_calls": [{"index": calls - 1, "function": {"arguments": '"}'}}]}))
    out.append(chunk({}, finish="tool_calls"))
    out.append(chunk(usage={"prompt_tokens": 10, "completion_tokens": total}))
    return out


async def run_raw(client: openai.AsyncOpenAI) -> int:
    n = 0
    stream = await client.chat.completions.create(  # type: ignore[call-overload]
        model="fake-model", messages=MESSAGES, stream=True,
        stream_options={"include_usage": True},
    )
    async for _ in stream:
        n += 1
    return n


async def run_adapter(adapter: OpenAICompatAdapter, request: ModelRequest) -> int:
    n = 0
    async for _ in adapter.stream(request):
        n += 1
    return n


async def main(total: int, rounds: int) -> None:
    body = Reply(stream_chunks(total)).body()
    sent = body.count(b"\ndata: ") + 1 - 1  # [DONE] excluded
    with FakeOpenAIServer() as server:
        key = server.api_key or ""
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key=key, max_retries=0)
        adapter = OpenAICompatAdapter("openai", server.base_url, key)
        request = ModelRequest(provider="openai", model="fake-model", messages=[user_text("go")])
        times: dict[tuple[str, str], list[float]] = {}
        raw_n = out_n = 0
        for r in range(rounds + 1):  # round 0 warms up both paths; order alternates per round
            for side in ("raw", "adapter") if r % 2 else ("adapter", "raw"):
                server.enqueue(Reply(raw=body))
                gc.collect()
                t0, c0 = time.perf_counter(), time.thread_time()
                if side == "raw":
                    raw_n = await run_raw(client)
                else:
                    out_n = await run_adapter(adapter, request)
                c1, t1 = time.thread_time(), time.perf_counter()
                if r:
                    times.setdefault((side, "wall"), []).append(t1 - t0)
                    times.setdefault((side, "cpu"), []).append(c1 - c0)
        await client.close()
        await adapter.aclose()
    print(f"stream: {sent} SSE chunks ({len(body) / 1e6:.2f} MB), {rounds} rounds each, alternating")
    for clock in ("cpu", "wall"):
        raw, ours = statistics.median(times["raw", clock]), statistics.median(times["adapter", clock])
        print(f"[{clock} median] raw openai SDK iteration : {raw * 1000:8.1f} ms {raw_n / raw:9.0f} chunks/s")
        print(f"[{clock} median] OpenAICompatAdapter      : {ours * 1000:8.1f} ms {raw_n / ours:9.0f} chunks/s "
              f"({out_n} normalized chunks out)")
        ratio = raw / ours
        verdict = "OK" if ratio >= 0.9 else "MISSED"
        print(f"[{clock} median] adapter throughput / raw : {ratio:.3f}x (target >= 0.9x) {verdict}")

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    asyncio.run(main(args.chunks, args.rounds))
