"""Many sessions on one host; callers on many threads and other event loops; coalesced resumes."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from dsh_notebook.client.connection import Connection
from dsh_notebook.client.dsh_client import DshClient, TurnOutcome
from dsh_notebook.client.transport import InProcessTransport
from dsh_notebook.host.host import Host
from dsh_notebook.wire.events import SessionEndSeed

from .support import Models, events_of, make_host


def test_many_concurrent_sessions_on_one_host(host: Host) -> None:
    outcomes: dict[int, TurnOutcome] = {}
    errors: list[BaseException] = []

    def worker(i: int) -> None:
        try:
            with DshClient(host, caller=f"t{i}") as client:
                outcomes[i] = client.run(f"summarize the README ({i})", timeout=60)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(90)
    assert errors == []
    assert len(outcomes) == 16 and all(o.completed for o in outcomes.values())
    assert len({o.session_id for o in outcomes.values()}) == 16
    assert len({o.log_path for o in outcomes.values()}) == 16
    assert all(o.final_answer for o in outcomes.values())


def test_calls_from_another_event_loop_never_block_it(host: Host, client: DshClient) -> None:
    """The host answers only after the caller's loop has run code while all 20 calls were pending:
    a call that blocked its loop would hold the host (and this test) until the gate's timeout."""
    sid = client.create_session().session_id
    conn = Connection(InProcessTransport(host, caller="async"))
    entered, gate, held = threading.Event(), threading.Event(), []

    def hold_the_host() -> None:  # runs on the host loop: nothing is answered until the gate opens
        entered.set()
        held.append(gate.wait(60))

    host.call_soon(hold_the_host)
    assert entered.wait(30)

    async def main() -> tuple[list[object], bool]:
        calls = asyncio.gather(*(conn.acall("session/info", {"sessionId": sid}) for _ in range(20)))
        await asyncio.sleep(0)  # the calls are sent; the caller's loop runs on while they wait
        pending = not calls.done()
        gate.set()
        return list(await calls), pending

    results, pending = asyncio.run(main())  # a plain script's own loop, not the host's
    assert held == [True] and pending  # the caller's loop opened the gate while every call waited
    assert all(r["sessionId"] == sid for r in results)  # type: ignore[index]
    conn.close()


def test_concurrent_resumes_are_coalesced(tmp_path: Path, models: Models) -> None:
    h1 = make_host(tmp_path / "home", models=models)
    with DshClient(h1) as c1:
        sid = c1.create_session().session_id
        c1.wait_turn_end(sid, c1.prompt("summarize the README", sid).request_id, timeout=30)
    h1.shutdown()
    h2 = make_host(tmp_path / "home", models=models)
    try:
        conn = Connection(InProcessTransport(h2))
        exchanges = [conn.request("session/resume", {"sessionId": sid}) for _ in range(10)]
        results = [e.future.result(30) for e in exchanges]
        assert {r["sessionId"] for r in results} == {sid}
        assert sorted(r["resolution"] for r in results).count("resumed") >= 1
        assert h2.registry.resumes_started == 1
        seeds = [e for e in events_of(h2, sid) if isinstance(e, SessionEndSeed)]
        assert len(seeds) == 1
        conn.close()
    finally:
        h2.shutdown()


def test_host_get_is_one_per_process_and_restartable(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "home"))
    first = Host.get()
    try:
        assert Host.get() is first and Host.current() is first
        with DshClient(first) as c:
            assert c.list_sessions() == []
    finally:
        first.shutdown()
    assert Host.current() is None
    second = Host.get()
    assert second is not first
    second.shutdown()


def test_host_run_refuses_the_host_thread(host: Host) -> None:
    async def inner() -> str:
        try:
            host.run(asyncio.sleep(0))
        except Exception as exc:
            return getattr(exc, "code", "")
        return "no error"

    assert host.run(inner()) == "DEADLOCK"
