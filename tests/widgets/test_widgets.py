"""The widget models and their message handling, without a front end (real Host, real agent)."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from dsh_notebook.notebook.widgets import LoopWidget, SessionInspector
from dsh_notebook.notebook.widgets import loop as widgets
from dsh_notebook.wire.endpoints import SessionInfo

from .conftest import FrontEnd


def _events(fe: FrontEnd, stream_id: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for item in fe.stream(stream_id):
        value = item.get("value") or {}
        if value.get("type") == "snapshot":
            out += value["events"]
        elif value.get("type") == "event":
            out.append(value["event"])
    return out


def _turn_ended(fe: FrontEnd, stream_id: str) -> bool:
    return any(e["type"] == "turn/end" for e in _events(fe, stream_id))


def test_widget_state_points_at_the_bundle() -> None:
    w = LoopWidget("s_0123456789ab")
    assert w.kind == "loop" and w.session_id == "s_0123456789ab" and not w.readonly
    # anywidget inlines the bundle's text: ours, not the "missing bundle" fallback
    assert "dsh widget failed to render" in str(w._esm), "build js/ first (make widget)"
    assert ".dsh-stage" in str(w._css)
    assert SessionInspector("s_0123456789ab").kind == "inspector"
    assert LoopWidget(model="script:readme", approve="ask").create_args == {"model": "script:readme", "approve": "ask"}


def test_prompt_through_the_gateway_accepted_then_answer_by_follow(host: Any) -> None:
    w = LoopWidget(host=host)
    fe = FrontEnd(w)
    rpc = fe.call("session/create", {"model": "script:readme"})
    created = fe.wait(lambda: fe.response(rpc))
    assert created["result"]["ok"], created
    sid = created["result"]["value"]["sessionId"]
    follow = fe.open("session/follow", {"sessionId": sid})
    snap = fe.wait(lambda: fe.stream(follow))
    assert snap[0]["value"]["type"] == "snapshot" and snap[0]["value"]["cursor"] == -1
    rpc = fe.call("session/prompt", {"request": {"sessionId": sid, "requestId": "req_w1", "mode": "queue",
                                                 "content": "Read README.md and summarize this project."}})
    accepted = fe.wait(lambda: fe.response(rpc))
    assert accepted["result"] == {"ok": True, "value": {"accepted": True}}
    fe.wait(lambda: _turn_ended(fe, follow))
    events = _events(fe, follow)
    assert [e["seq"] for e in events] == list(range(len(events)))  # dense, in order, no duplicates
    call = next(e for e in events if e["type"] == "tool/call")
    result = next(e for e in events if e["type"] == "tool/result")
    assert call["callId"] == "c1" and result["sourceEventSeqs"] == [call["seq"]]
    # the accepted reply came before the answer: its batch precedes the assistant's final message
    kinds = [(i.get("type"), (i.get("value") or {}).get("type")) for i in fe.items()]
    assert kinds.index(("server-response", None)) < len(kinds) - 1
    frames = {(i.get("value") or {}).get("type") for i in fe.stream(follow)}
    assert {"assistant-stream", "tool-runtime", "status"} <= frames
    w.close()


def test_batches_coalesce_a_fast_stream(host: Any) -> None:
    w = LoopWidget(host=host, interval=0.05)
    fe = FrontEnd(w)
    rpc = fe.call("session/create", {"model": "script:readme"})
    sid = fe.wait(lambda: fe.response(rpc))["result"]["value"]["sessionId"]
    follow = fe.open("session/follow", {"sessionId": sid})
    fe.call("session/prompt", {"request": {"sessionId": sid, "requestId": "r", "content": "summarize the README"}})
    fe.wait(lambda: _turn_ended(fe, follow))
    n_items, n_batches = len(fe.items()), len(fe.batches)
    assert n_items > n_batches * 2, (n_items, n_batches)
    # no two batches closer than the interval (minus scheduling slack), after the leading edge
    times = [b["t"] for b in fe.batches]
    gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
    assert min(gaps) > 0.03, gaps
    w.close()


def test_each_view_has_its_own_connection_and_bye_closes_it(host: Any) -> None:
    w = LoopWidget(host=host)
    a, b = FrontEnd(w, "v_a"), FrontEnd(w, "v_b")
    b.batches = a.batches  # one widget, one comm: both views see every batch, filtered by cid
    b.lock = a.lock
    ra = a.call("session/list", {})
    rb = b.call("session/list", {})
    a.wait(lambda: a.response(ra) and b.response(rb))
    assert a.response(rb) is None and b.response(ra) is None
    assert sorted(w.bridge.views) == ["v_a", "v_b"]
    a.custom({"kind": "bye", "cid": "v_a"})
    assert w.bridge.views == ["v_b"]
    w.close()


def test_handler_is_thread_safe_under_concurrent_views(host: Any) -> None:
    """ipykernel 7.0–7.3 + JupyterLab subshells run comm handlers on other threads."""
    w = LoopWidget(host=host)
    fes = [FrontEnd(w, f"v{i}") for i in range(6)]
    for fe in fes[1:]:
        fe.batches, fe.lock = fes[0].batches, fes[0].lock
    rpcs: dict[str, list[str]] = {fe.cid: [] for fe in fes}

    def hammer(fe: FrontEnd) -> None:
        for _ in range(20):
            rpcs[fe.cid].append(fe.call("session/list", {}))

    threads = [threading.Thread(target=hammer, args=(fe,)) for fe in fes]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for fe in fes:
        fe.wait(lambda fe=fe: all(fe.response(r) for r in rpcs[fe.cid]))
        assert all(fe.response(r)["result"]["ok"] for r in rpcs[fe.cid])
    assert len(w.bridge.views) == 6
    w.close()


def test_views_beyond_the_limit_evict_the_oldest(host: Any) -> None:
    w = LoopWidget(host=host)
    w.bridge.max_views = 2
    fes = [FrontEnd(w, f"v{i}") for i in range(3)]
    for fe in fes:
        fe.call("session/list", {})
    assert w.bridge.views == ["v1", "v2"]
    w.close()


def _saved_log(host: Any, fe_widget: LoopWidget) -> Path:
    fe = FrontEnd(fe_widget)
    rpc = fe.call("session/create", {"model": "script:readme"})
    value = fe.wait(lambda: fe.response(rpc))["result"]["value"]
    follow = fe.open("session/follow", {"sessionId": value["sessionId"]})
    fe.call("session/prompt", {"request": {"sessionId": value["sessionId"], "requestId": "r", "content": "read the README"}})
    fe.wait(lambda: _turn_ended(fe, follow))
    return Path(value["logPath"])


def test_saved_log_replays_read_only_through_the_gateway(host: Any) -> None:
    path = _saved_log(host, LoopWidget(host=host))
    w = LoopWidget(path=path)
    assert w.readonly and w.session_id == path.stem and w.error == ""
    fe = FrontEnd(w)
    follow = fe.open("session/follow", {"sessionId": w.session_id})
    snap = fe.wait(lambda: fe.stream(follow))[0]["value"]
    lines = path.read_text().splitlines()[1:]
    assert snap["type"] == "snapshot" and snap["cursor"] == len(lines) - 1
    assert snap["events"] == [json.loads(line) for line in lines]
    assert snap["live"]["attached"] is False
    rpc = fe.call("session/prompt", {"request": {"sessionId": w.session_id, "requestId": "x", "content": "hi"}})
    assert fe.wait(lambda: fe.response(rpc))["result"]["error"]["code"] == "READ_ONLY"
    info_rpc = fe.call("session/info", {"sessionId": w.session_id})
    info = SessionInfo.model_validate(fe.wait(lambda: fe.response(info_rpc))["result"]["value"])
    assert info.live is False and info.status == "idle" and info.last_seq == len(lines) - 1
    assert info.model.startswith("script:") and info.log_path == str(path)  # the model the log used
    # catch up from a cursor (a reloaded view that already had part of the log)
    follow2 = fe.open("session/follow", {"sessionId": w.session_id, "cursor": 5})
    snap2 = fe.wait(lambda: fe.stream(follow2))[0]["value"]
    assert [e["seq"] for e in snap2["events"]] == list(range(6, len(lines)))
    # the inspector takes a path too
    assert SessionInspector(str(path)).readonly


def test_broken_and_missing_logs_say_so(tmp_path: Path) -> None:
    broken = tmp_path / "broken.jsonl"
    broken.write_text("this is not a session log\n")
    w = SessionInspector(broken)
    assert w.error.startswith("LOG_HEADER")
    fe = FrontEnd(w)
    follow = fe.open("session/follow", {"sessionId": w.session_id})
    err = fe.wait(lambda: fe.stream(follow))[0]
    assert err["type"] == "error" and err["error"]["code"] == "LOG_HEADER"
    missing = LoopWidget(path=tmp_path / "nope.jsonl")
    assert missing.error.startswith("LOG_NOT_FOUND")


def test_unknown_session_is_a_coded_stream_error(host: Any) -> None:
    w = LoopWidget("s_000000000000", host=host)
    fe = FrontEnd(w)
    follow = fe.open("session/follow", {"sessionId": "s_000000000000"})
    err = fe.wait(lambda: fe.stream(follow))[0]
    assert err["type"] == "error" and err["error"]["code"] == "UNKNOWN_SESSION"


def test_malformed_custom_messages_are_ignored(host: Any) -> None:
    w = LoopWidget(host=host)
    fe = FrontEnd(w)
    for junk in (None, "x", {"kind": "envelope"}, {"kind": "envelope", "cid": "v", "envelope": "nope"}, {"kind": "?", "cid": "v"}):
        fe.custom(junk)  # type: ignore[arg-type]
    assert w.bridge.views == [] and fe.batches == []
    fe.envelope({"type": "client-request", "rpcId": "r_bad", "method": "session/nope", "payload": {"args": {}}})
    assert fe.wait(lambda: fe.response("r_bad"))["result"]["error"]["code"] == "UNKNOWN_METHOD"


def test_missing_bundle_renders_a_clear_message(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(widgets, "STATIC", tmp_path)
    assert "missing" in str(widgets._esm()) and "make widget" in str(widgets._esm())


def test_repr_is_cheap_text_naming_the_session_or_log(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from dsh_notebook.notebook.widgets import LoopWidget, SessionInspector

    missing = tmp_path / "s_missing.jsonl"
    inspector = SessionInspector(str(missing))
    text = repr(inspector)  # a widget that cannot show anything says why, in its text form too
    assert text.startswith(f"<SessionInspector of {missing}: LOG_NOT_FOUND") and "no session log at" in text
    assert repr(LoopWidget()).startswith("<LoopWidget of a new session") and "%dsh show" in repr(LoopWidget())


def test_without_a_host_every_envelope_gets_a_coded_wire_error() -> None:
    import json as _json

    from dsh_notebook.errors import HostError
    from dsh_notebook.notebook.widgets.comm_transport import WidgetBridge
    from tests.wire.schema_support import problems

    sent: list[dict[str, Any]] = []

    def no_host(send: Any) -> Any:
        raise HostError("the host is shut down", code="HOST_CLOSED")

    bridge = WidgetBridge(sent.append, no_host, interval=0)
    bridge.handle({"kind": "envelope", "cid": "v", "envelope": {"type": "client-request", "rpcId": "r1", "method": "session/list"}})
    bridge.handle({"kind": "envelope", "cid": "v", "envelope": {"type": "open", "streamId": "f1", "endpoint": "session/follow"}})
    bridge.handle({"kind": "envelope", "cid": "v", "envelope": {"type": "cancel", "streamId": "f1"}})
    bridge.batcher.flush()
    replies = [_json.loads(item) for batch in sent for item in batch["items"]]
    assert [(r["type"], r.get("rpcId", r.get("streamId"))) for r in replies] == [("server-response", "r1"), ("error", "f1")]
    assert all(problems("ServerMessage", r) == [] for r in replies)
    assert {r["result"]["error"]["code"] if r["type"] == "server-response" else r["error"]["code"] for r in replies} == {"HOST_CLOSED"}
    bridge.close()


def test_presenter_mode_is_a_synced_trait_of_both_widgets() -> None:
    """``LoopWidget(..., present=True)`` (and ``%dsh show --present``) reach the browser as the
    synced ``present`` trait; the header's Present toggle writes it back."""
    from dsh_notebook.notebook.widgets import SessionInspector

    w = LoopWidget("s_0123456789ab", present=True)
    assert w.present is True and w.get_state()["present"] is True
    assert LoopWidget("s_0123456789ab").get_state()["present"] is False
    w.set_state({"present": False})  # the toggle in the browser
    assert w.present is False
    assert SessionInspector("s_0123456789ab", present=True).get_state()["present"] is True
