"""``session/page`` (issue 38 item 1): a window of a session in the widget, the rest in pages the
host computes where the log is — checked against the package's own answers to the same questions
(``show --search``, ``show --stats``, the Core Session's ``derive_messages``, the frozen requests'
messageSeqs), through the real Host and its Gateway, on recorded real runs and a 12,000-event log."""

from __future__ import annotations

import io
import json
import threading
from pathlib import Path
from typing import Any

import pytest

from dsh_notebook.analysis.stats import session_stats
from dsh_notebook.client.dsh_client import DshClient
from dsh_notebook.host.host import Host
from dsh_notebook.launcher import process_host
from dsh_notebook.observe.query_view import export_rows
from dsh_notebook.pages.query import parse_query, search_events
from dsh_notebook.session.persistence import load_log
from dsh_notebook.session.requests import resolve_message_seqs
from dsh_notebook.session.saved import read_saved_fast
from dsh_notebook.session.session import Session
from dsh_notebook.wire.pages import Page
from tests.benchmarks._widget_logs import write_log
from tests.client.parity import FIXTURES, followed_events
from tests.fixtures.record_streams import load


class Client:
    """A connection to a Host serving one saved log, its replies read back by rpcId / streamId."""

    def __init__(self, host: Host, path: Path) -> None:
        self.saved = read_saved_fast(path)
        self.got: dict[str, list[Any]] = {}
        self.cond = threading.Condition()
        self.conn = host.connect_saved(self._send, self.saved)
        self.n = 0

    def _send(self, text: str) -> None:
        msg = json.loads(text)
        with self.cond:
            self.got.setdefault(msg.get("rpcId") or msg.get("streamId"), []).append(msg)
            self.cond.notify_all()

    def wait(self, key: str, n: int = 1) -> list[Any]:
        with self.cond:
            assert self.cond.wait_for(lambda: len(self.got.get(key, ())) >= n, timeout=120), key
            return self.got[key]

    def page(self, **query: Any) -> dict[str, Any]:
        self.n += 1
        rpc = f"r{self.n}"
        self.conn.receive(json.dumps({"type": "client-request", "rpcId": rpc, "method": "session/page",
                                      "payload": {"args": {"sessionId": self.saved.session_id, "query": query}}}))
        reply = self.wait(rpc)[0]
        assert reply["result"]["ok"], reply
        page: dict[str, Any] = reply["result"]["value"]["page"]
        return page

    def error(self, **query: Any) -> dict[str, Any]:
        self.n += 1
        rpc = f"r{self.n}"
        self.conn.receive(json.dumps({"type": "client-request", "rpcId": rpc, "method": "session/page",
                                      "payload": {"args": {"sessionId": self.saved.session_id, "query": query}}}))
        reply = self.wait(rpc)[0]
        assert not reply["result"]["ok"], reply
        err: dict[str, Any] = reply["result"]["error"]
        return err


@pytest.fixture(scope="module")
def shared() -> Any:
    """The kernel's Host (a replay widget's saved logs are served by it), shut down after the module
    (a later test of this process that starts the process's host gets a fresh one)."""
    h = process_host()
    yield h
    h.shutdown()


def saved_fixture(tmp_path: Path, name: str) -> Path:
    """A recorded real run's events as a log file."""
    events = followed_events(load(next(f for f in FIXTURES if f.stem == name)))
    path = tmp_path / f"s_{name.replace('-', '')}.jsonl"
    header = {"type": "session", "version": 1, "id": path.stem, "cwd": "/ws", "createdAt": events[0]["time"]}
    path.write_text("".join(json.dumps(x, separators=(",", ":")) + "\n" for x in [header, *events]))
    return path


@pytest.mark.parametrize("name", ["approvals", "steering", "checkpoints", "fix-tests"])
def test_pages_answer_what_the_package_answers(shared: Host, tmp_path: Path, name: str) -> None:
    path = saved_fixture(tmp_path, name)
    c = Client(shared, path)
    loaded = load_log(path)
    events, dicts = loaded.events, [json.loads(x) for x in loaded.lines]
    n = len(events)
    # the whole list, every row with its turn, tool, citations and (complete) durations
    rows = c.page(kind="rows", limit=1000, complete=True)
    assert rows["count"] == rows["total"] == n and not rows["partial"]
    assert [r["event"] for r in rows["rows"]] == dicts
    cites = {e.seq: [x.seq for x in events if e.seq in (x.source_event_seqs or ())] for e in events}
    assert all(r["citedBy"] == cites[r["event"]["seq"]] for r in rows["rows"])
    stats = session_stats(events)
    for r in stats.requests:
        assert rows["rows"][r.seq]["durationMs"] == r.duration_ms
    # the query language: the same rows as show --search, with snippets
    for query in ("type:tool/result", "name:bash", "exit:1", "turn:1 type:tool", "test", '"the tests"', "seq:3..9"):
        page = c.page(kind="rows", filter={"text": query}, limit=1000)
        want = [h.event["seq"] for h in search_events(dicts, parse_query(query))]
        assert [r["event"]["seq"] for r in page["rows"]] == want and page["total"] == len(want), query
        if parse_query(query).texts:
            assert all(r["snippet"]["text"] for r in page["rows"])
    # the selects and a query together; a seq found in its page
    turn = next(e["turn"] for e in dicts if e["type"] == "tool/call")
    page = c.page(kind="rows", filter={"turn": turn, "type": "tool/call"}, limit=1000)
    assert page["rows"] and all(r["turn"] == turn and r["event"]["type"] == "tool/call" for r in page["rows"])
    target = dicts[n // 2]["seq"]
    at = c.page(kind="rows", seq=target, limit=10)
    assert at["rows"][at["index"] - at["offset"]]["event"]["seq"] == target
    hidden = c.page(kind="rows", filter={"type": "no/such"}, seq=target)
    assert hidden["index"] is None and hidden["total"] == 0
    bad = c.page(kind="rows", filter={"text": "turn:x"})
    assert bad["error"].startswith("BAD_QUERY") and bad["rows"] == []
    # facets
    facets = c.page(kind="facets")
    assert facets["types"] == sorted({e["type"] for e in dicts})
    assert facets["turns"] == sorted({e.turn for e in events if e.type == "turn/start"})  # type: ignore[attr-defined]
    changes = [e["mode"] for e in dicts if e["type"] == "mode/changed"]  # the header's mode past a window
    assert facets["mode"] == (changes[-1] if changes else None)
    # stats: the rows of show --stats --json, paged (decisions: a row per permission mode)
    for table in ("requests", "tools", "turns", "decisions"):
        want_rows = [x.model_dump(mode="json") for x in getattr(stats, table)]
        got_rows = [x for off in range(0, max(1, len(want_rows)), 2)
                    for x in c.page(kind="stats", table=table, offset=off, limit=2)["rows"]]
        assert got_rows == want_rows, table
    assert stats.decisions and sum(d.decisions for d in stats.decisions) == sum(1 for e in dicts if e["type"] == "approval/decided")
    assert c.page(kind="stats", table="decisions", seq=0)["index"] is None  # a mode's row has no event
    # derived messages at every request, and each request's own messages
    for e in events:
        if e.type != "request/frozen":
            continue
        derived = c.page(kind="messages", seq=e.seq, limit=1000)
        oracle = Session.restore("x", events[: e.seq + 1], mark_seed=False).derive_messages()
        assert [m["seq"] for m in derived["messages"]] == list(oracle.seqs) and derived["total"] == len(oracle.seqs)
        sent = c.page(kind="messages", seq=e.seq, request=True, limit=1000)
        assert [m["seq"] for m in sent["messages"]] == [s for s in resolve_message_seqs(events, e.seq)
                                                       if events[s].type != "assistant/message" or events[s].message.content]  # type: ignore[attr-defined]
        tail = c.page(kind="messages", seq=e.seq, limit=2)
        assert tail["messages"] == derived["messages"][-2:] and tail["offset"] == max(0, derived["total"] - 2)
    # the request diff: added = what the request sends that the one before did not
    frozen = [e.seq for e in events if e.type == "request/frozen"]
    for k, seq in enumerate(frozen):
        d = c.page(kind="request-diff", seq=seq, limit=1000)
        before = set(resolve_message_seqs(events, frozen[k - 1])) if k else set()
        after = resolve_message_seqs(events, seq)
        assert (d["toSeq"], d["fromSeq"]) == (seq, frozen[k - 1] if k else None)
        assert [i["seq"] for i in d["items"] if i["kind"] != "removed"] == [s for s in after if s not in before]
        assert d["kept"] + d["added"] == len(after)
    # export: what show --search … --export csv writes
    for fmt in ("csv", "jsonl"):
        part = c.page(kind="export", filter={"text": "type:tool"}, format=fmt)
        buf = io.StringIO()
        export_rows(search_events(dicts, parse_query("type:tool")), fmt, buf)
        assert part["text"] == buf.getvalue() and part["rows"] == part["total"]


@pytest.mark.scale  # a 12,000-event log indexed and folded whole
def test_a_long_log_first_rows_at_once_then_the_figures(shared: Host, tmp_path: Path) -> None:
    n = 12_000
    path = write_log(tmp_path / "s_longpagesaaa.jsonl", n, chained=True)
    c = Client(shared, path)
    c.conn.receive(json.dumps({"type": "open", "streamId": "f", "endpoint": "session/follow",
                               "payload": {"args": {"sessionId": c.saved.session_id, "window": 300}}}))
    snap = c.wait("f")[0]["value"]
    # the window: the last 300 events, and where they start
    assert snap["type"] == "snapshot" and snap["cursor"] == n - 1 and snap["start"] == n - 301
    assert [e["seq"] for e in snap["events"]] == list(range(n - 300, n))
    first = c.page(kind="rows", limit=40)
    assert [r["event"]["seq"] for r in first["rows"]] == list(range(40)) and first["total"] == n
    full = c.page(kind="rows", limit=40, complete=True)
    assert not full["partial"] and full["rows"][3]["durationMs"] is not None  # a request's duration
    assert [r["turn"] for r in full["rows"]] == [r["turn"] for r in first["rows"]]
    last = c.page(kind="rows", seq=n - 1, limit=40)
    assert last["index"] == n - 1 and last["rows"][-1]["event"]["seq"] == n - 1
    tl = c.page(kind="timeline", limit=30, axis=True)
    turns = session_stats(load_log(path).events).turns
    assert tl["total"] == len(turns) + tl["bars"] and tl["rows"][0]["kind"] == "turn"
    busy = tl["busy"]
    assert busy == sorted(busy) and all(a <= b for a, b in busy) and all(busy[i][1] < busy[i + 1][0] for i in range(len(busy) - 1))
    bar = c.page(kind="timeline", bar=tl["bars"] - 1, limit=10)
    assert bar["rows"][bar["index"] - bar["offset"]]["bar"] == tl["bars"] - 1
    wf = c.page(kind="turn", seq=n // 2)
    assert wf["turn"]["seq"] <= n // 2 and wf["previous"] == wf["turn"]["turn"] - 1 and wf["last"] == turns[-1].turn
    assert {r["turn"] for r in wf["requests"]} == {wf["turn"]["turn"]}


def test_a_bad_line_is_a_coded_error_of_the_page(shared: Host, tmp_path: Path) -> None:
    n = 6_000
    path = write_log(tmp_path / "s_badpagesaaa.jsonl", n, chained=True)
    lines = path.read_text().split("\n")
    lines[4000] = '{"seq":3999,"time":1,"type":"no/such-event"}'
    path.write_text("\n".join(lines))
    c = Client(shared, path)
    assert c.page(kind="rows", limit=5)["rows"]  # the first rows still come (from the lines)
    err = c.error(kind="stats", table="requests")
    assert err["code"] == "LOG_CORRUPT" and "line 4001" in err["message"]


@pytest.mark.scale  # a 7,000-event log indexed and folded whole
def test_an_index_started_before_the_host_is_taken_over(shared: Host, tmp_path: Path) -> None:
    """A widget's replay starts indexing its log at construction (host/pages.py prebuild); the
    host's page source takes that index over instead of reading the log again."""
    from dsh_notebook.host import pages as host_pages

    path = write_log(tmp_path / "s_prebuiltaaaa.jsonl", 7_000, chained=True)
    saved = read_saved_fast(path)
    host_pages.prebuild(saved)
    early = host_pages._PREBUILT[id(saved.lines)][1]
    c = Client.__new__(Client)
    c.saved, c.got, c.cond, c.n = saved, {}, threading.Condition(), 0
    c.conn = shared.connect_saved(c._send, saved)
    page = c.page(kind="stats", table="turns", limit=3)
    assert page["total"] == len(session_stats(load_log(path).events).turns)
    assert id(saved.lines) not in host_pages._PREBUILT  # taken over
    # Stats, the Timeline and a turn wait for the figures only: the same pages as from a log
    # indexed first (the package's own functions over an index and its figures)
    from dsh_notebook.pages.indexed import SessionPages
    from dsh_notebook.pages.stats import timeline_page, turn_page
    from dsh_notebook.wire.pages import PageArgs

    indexed = SessionPages("s_prebuiltaaaa", host_pages._saved_models(saved))
    indexed.extend(saved.lines)
    for q in ({"kind": "timeline", "axis": True, "limit": 50}, {"kind": "timeline", "bar": 600, "limit": 9},
              {"kind": "turn", "turn": 3}, {"kind": "turn"}):
        query = PageArgs.model_validate({"sessionId": "s_prebuiltaaaa", "query": q}).query
        want = Page.model_validate({"page": (timeline_page if q["kind"] == "timeline" else turn_page)(indexed, query)})  # type: ignore[arg-type]
        assert Page.model_validate({"page": c.page(**q)}) == want, q
    # the complete rows wait for the index too
    rows = c.page(kind="rows", limit=5, complete=True)
    assert (rows["total"], rows["partial"]) == (7_000, False) and rows["rows"][0]["durationMs"] is not None
    assert early.count == 7_000 and early.figures_ready


def test_a_saved_logs_figures_come_before_its_index() -> None:
    """The figures are folded from the typed events alone (a prebuilt log's before its index, so
    its Stats tables wait for the fold only): the same figures, approvals and durations as when
    folded after the index, and kept — not folded again — while the index catches up."""
    from dsh_notebook.pages.indexed import SessionPages
    from dsh_notebook.wire.events import EventAdapter

    fixture = next(f for f in FIXTURES if f.stem == "approvals")
    events = followed_events(load(fixture))
    typed = [EventAdapter.validate_python(e) for e in events]
    lines = [json.dumps(e, separators=(",", ":")) for e in events]
    n = len(events)
    ahead = SessionPages("s_ahead", lambda k: typed[:k])
    early = ahead.figures(n)
    assert (ahead.count, early.count) == (0, n) and ahead.figures_ready
    ahead.extend(lines[:5])
    assert ahead.figures() is early and ahead.figures_ready  # the index behind the figures: no second fold
    ahead.extend(lines[5:])
    assert ahead.figures() is early
    after = SessionPages("s_after", lambda k: typed[:k])
    after.extend(lines)
    late = after.figures()
    assert early.approvals and early.durations  # the run asked for approvals: their waits are durations
    assert (early.stats, early.approvals, early.durations) == (late.stats, late.approvals, late.durations)
    asked_decided: dict[str, dict[str, int]] = {}  # from the log's JSON, as the browser reads it
    for e in events:
        if e["type"] == "approval/asked":
            asked_decided[e["callId"]] = {"asked": e["seq"]}
        elif e["type"] == "approval/decided":
            asked_decided.setdefault(e["callId"], {})["decided"] = e["seq"]
    assert early.approvals == asked_decided


def test_a_live_session_pages_as_it_grows(client: DshClient) -> None:
    """A live session's pages (the host's Session, its lines as they are appended): a second turn
    makes the next pages longer; the figures are those of the Session's events."""
    first = client.run("read README.md and summarise", timeout=60)
    sid = first.session_id

    def page(**query: Any) -> Any:
        return client.remote.session.page(session_id=sid, query=query).page

    n = client.info(sid).last_seq + 1
    rows = page(kind="rows", limit=1000, complete=True)
    assert (rows.count, rows.total, rows.partial) == (n, n, False)
    assert [r.event.seq for r in rows.rows] == list(range(n))
    assert page(kind="stats", table="turns").total == 1
    client.run("read README.md and summarise", session_id=sid, timeout=60)
    m = client.info(sid).last_seq + 1
    assert m > n
    again = page(kind="rows", limit=1000, complete=True)
    assert again.total == m and [r.event.seq for r in again.rows] == list(range(m))
    turns = page(kind="stats", table="turns")
    assert turns.total == 2 and turns.rows[1]["turn"] == 2
    tail = page(kind="messages", seq=m - 1, limit=2)
    assert tail.total >= 4 and len(tail.messages) == 2


def test_derived_messages_are_folded_on_from_the_last_page_asked() -> None:
    """A replay asks for the history a step later each time: ``derive`` folds on from the seqs it
    gave last instead of from seq 0 — the same messages at every seq, asked forward, backward or
    at random, as a fresh fold (the debugger fixture replaces a message: surfaceOp replace)."""
    import random

    from dsh_notebook.pages.indexed import SessionPages
    from dsh_notebook.pages.requests import derive

    for fixture in FIXTURES:
        events = followed_events(load(fixture))
        lines = [json.dumps(e, separators=(",", ":")) for e in events]
        p = SessionPages("s_derive", lambda k: [])
        p.extend(lines)
        fresh = {}
        for s in range(len(events)):
            p.derived = None
            fresh[s] = derive(p, s)
        order = [*range(len(events)), *reversed(range(len(events)))]
        order += random.Random(7).sample(range(len(events)), len(events))
        for s in order:
            assert derive(p, s) == fresh[s], (fixture.stem, s)
        assert p.derived is not None


@pytest.mark.scale  # a 12,000-event log, as the long-log test above
def test_a_long_logs_parts_and_first_history_do_not_wait_for_its_index(tmp_path: Path) -> None:
    """The loop widget's replay of a long log starts at its first call and reads parts of it
    anywhere: the rows of the unfiltered list at any offset and the history at the start (the
    derived messages, a frozen request's) are answered from the log's lines while its index is
    still being built — here held back by its lock for the whole time — and the history is the
    page the index gives once it is built."""
    import asyncio

    from dsh_notebook.host.pages import saved_source
    from dsh_notebook.pages.indexed import SessionPages
    from dsh_notebook.pages.requests import messages_page
    from dsh_notebook.wire.pages import MessagesQuery, RowsQuery

    n = 12_000
    saved = read_saved_fast(write_log(tmp_path / "s_earlymsgsaaa.jsonl", n, chained=True))
    source = saved_source(saved)
    queries: list[MessagesQuery | RowsQuery] = [MessagesQuery(seq=4), MessagesQuery(seq=9, request=True), MessagesQuery(seq=3_000, limit=5),
               RowsQuery(offset=7_000, limit=1_000)]
    loop = asyncio.new_event_loop()
    try:
        with source.pages.lock:  # the index cannot take a line meanwhile
            got = [loop.run_until_complete(asyncio.wait_for(source.page(q), 60)).page for q in queries]
            assert source.pages.count == 0
        for task in asyncio.all_tasks(loop):
            task.cancel()
        loop.run_until_complete(asyncio.gather(*asyncio.all_tasks(loop), return_exceptions=True))
        loop.run_until_complete(loop.shutdown_default_executor())
    finally:
        loop.close()
    rows = got.pop().model_dump(mode="json")
    assert rows["partial"] and [r["event"]["seq"] for r in rows["rows"]] == list(range(7_000, 8_000))
    indexed = SessionPages(saved.session_id, lambda k: [])
    indexed.extend(saved.lines)
    for q, page in zip(queries, got, strict=False):
        assert isinstance(q, MessagesQuery)
        assert page == Page.model_validate({"page": messages_page(indexed, q)}).page, q
    first, _, later = (x.model_dump() for x in got)
    assert [m["seq"] for m in first["messages"]] == [2, 4] and first["count"] == n  # the prompt, the call; of the whole log
    assert later["total"] == 1_000 and len(later["messages"]) == 5


@pytest.mark.scale  # a 12,000-event log
def test_pages_of_what_a_half_built_index_holds_do_not_wait_for_the_rest(tmp_path: Path) -> None:
    """A long log half indexed (the rest held back here): the unfiltered rows anywhere come from
    its lines, and the history and a request's diff at a seq the index holds come from the index
    as far as it has gone — the pages the whole index gives — not after the rest is read."""
    import asyncio

    from dsh_notebook.host.pages import saved_source
    from dsh_notebook.pages.indexed import SessionPages
    from dsh_notebook.pages.requests import messages_page, request_diff_page
    from dsh_notebook.wire.pages import MessagesQuery, RequestDiffQuery, RowsQuery

    n, half = 12_000, 6_000
    saved = read_saved_fast(write_log(tmp_path / "s_halfindexaaa.jsonl", n, chained=True))
    source = saved_source(saved)
    source.pages.extend(saved.lines[:half])
    source._seen = half  # what the index was handed; the rest of it (its lines) waits for `rest`
    rest = threading.Event()
    lines = source._lines
    source._lines = lambda a, b: (rest.wait(60), lines(a, b))[1] if (a, b) == (half, n) else lines(a, b)  # type: ignore[assignment]
    frozen = 12 * 400 + 9  # write_log: turn 401's second request
    queries: list[RowsQuery | MessagesQuery | RequestDiffQuery] = [
        RowsQuery(offset=0, limit=1_000), RowsQuery(offset=9_000, limit=100),
        MessagesQuery(seq=5_000), MessagesQuery(seq=frozen, request=True, limit=10), RequestDiffQuery(seq=frozen)]
    loop = asyncio.new_event_loop()
    try:
        got = [loop.run_until_complete(asyncio.wait_for(source.page(q), 60)).page.model_dump(mode="json") for q in queries]
        assert source.pages.count == half and not rest.is_set()  # answered with half the log indexed
        rest.set()
        for task in asyncio.all_tasks(loop):
            task.cancel()
        loop.run_until_complete(asyncio.gather(*asyncio.all_tasks(loop), return_exceptions=True))
        loop.run_until_complete(loop.shutdown_default_executor())
    finally:
        rest.set()
        loop.close()
    assert [r["event"]["seq"] for r in got[0]["rows"]] == list(range(1_000)) and got[0]["partial"]
    assert [r["event"]["seq"] for r in got[1]["rows"]] == list(range(9_000, 9_100))
    whole = SessionPages(saved.session_id, lambda k: [])
    whole.extend(saved.lines)
    for q, page in zip(queries[2:], got[2:], strict=True):
        answer = (messages_page if isinstance(q, MessagesQuery) else request_diff_page)(whole, q)  # type: ignore[arg-type]
        assert page == Page.model_validate({"page": answer}).page.model_dump(mode="json"), q
    assert got[2]["total"] > 1_000 and got[4]["added"] == 2  # the call and its result
