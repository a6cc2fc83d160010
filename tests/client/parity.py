"""What the parity tests (Python against JS, ``tests/client/test_*parity.py``) share.

- the recorded real runs (``FIXTURES``, one test a run with :data:`each_recorded_run`) and
  :func:`followed_events`, the events a widget's fold holds at the end of one;
- :func:`js_driver`: a driver of ``js/test/parity/`` bundled by esbuild for node, and
  :func:`run_js`, which runs it on one JSON input (:func:`priced`: events and the widgets' price
  table) and reads its JSON answer;
- :func:`first_difference`: where a Python result and a JS one first differ;
- :func:`schema_problems`: where fold states break the generated shape (``$defs/FoldState`` of the
  wire's schema, from ``dsh_notebook/wire/fold_state.py``: the shape the JS fold is typed by);
- :func:`replay`: the client side of a recorded transcript, folded by the Python
  ClientSessionModel exactly as ``js/test/parity/driver.ts`` folds it with the JS one: the client's
  own prompt calls (submit → accepted / rejected) and every item of its follow and control streams.
"""

from __future__ import annotations

import functools
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from dsh_notebook.client.model import ClientSessionModel
from dsh_notebook.models.price_table import pricing_table
from dsh_notebook.wire.fold_state import FoldState
from tests.fixtures.record_streams import OUT
from tests.wire.schema_support import document

ROOT = Path(__file__).resolve().parents[2]
JS = ROOT / "js"
FIXTURES = sorted(OUT.glob("*.jsonl"))
each_recorded_run = pytest.mark.parametrize("fixture", FIXTURES, ids=[f.stem for f in FIXTURES])


def js_driver(tmp_path_factory: pytest.TempPathFactory, entry: str) -> Path:
    """``js/test/parity/<entry>`` bundled (esbuild, ESM for node) into a temporary file."""
    node = shutil.which("node")
    esbuild = JS / "node_modules" / "esbuild" / "bin" / "esbuild"
    assert node and esbuild.exists(), "the parity test needs node and js/node_modules (make setup)"
    bundle = tmp_path_factory.mktemp(Path(entry).stem) / (Path(entry).stem + ".mjs")
    subprocess.run([str(esbuild), str(JS / "test" / "parity" / entry), "--bundle", "--platform=node",
                    "--format=esm", f"--outfile={bundle}", "--log-level=warning"], check=True, cwd=JS)
    return bundle


def run_js(bundle: Path, tmp: Path, given: dict[str, Any]) -> Any:
    """What the bundled driver prints (one JSON value) for the input ``given`` (written to a file
    in ``tmp``, the driver's one argument)."""
    src = tmp / "input.json"
    src.write_text(json.dumps(given))
    return json.loads(subprocess.run(["node", str(bundle), str(src)], check=True, capture_output=True, text=True).stdout)


def priced(events: list[dict[str, Any]], override: int | None = None) -> dict[str, Any]:
    """The input of the figures' drivers: ``events``, the price table the widgets get, a context
    window ``override``."""
    return {"events": events, "pricing": pricing_table(), "override": override}


def followed_events(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events a widget's fold holds at the end of a recorded run (snapshot + event items)."""
    follows = {m["msg"]["streamId"] for m in lines if m["dir"] == "out" and m["msg"]["type"] == "open"
               and m["msg"]["endpoint"] == "session/follow"}
    by_seq: dict[int, dict[str, Any]] = {}
    for m in lines:
        msg = m["msg"]
        if m["dir"] != "in" or msg["type"] != "item" or msg["streamId"] not in follows:
            continue
        value = msg["value"]
        for ev in value.get("events") or [] if value["type"] == "snapshot" else [value["event"]] if value["type"] == "event" else []:
            by_seq[ev["seq"]] = ev
    return [by_seq[s] for s in sorted(by_seq)]


def first_difference(a: Any, b: Any, path: str = "") -> str:
    """Where ``a`` (Python) and ``b`` (JS) first differ: a path and the two values."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            if a.get(key, "<missing>") != b.get(key, "<missing>"):
                return first_difference(a.get(key, "<missing>"), b.get(key, "<missing>"), f"{path}.{key}")
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                return first_difference(x, y, f"{path}[{i}]")
    return f"{path}: python {json.dumps(a)[:300]} != js {json.dumps(b)[:300]}"


@functools.cache
def _fold_validators() -> tuple[Draft202012Validator, Draft202012Validator]:
    defs = document()["$defs"]
    return (Draft202012Validator({"$ref": "#/$defs/FoldState", "$defs": defs}),
            Draft202012Validator({**defs["FoldState"]["properties"]["events"]["items"], "$defs": defs}))


def schema_problems(steps: list[tuple[int, FoldState]]) -> list[str]:
    """Where the states of :func:`replay` do not validate as ``FoldState``: every state whole but
    its events, and each event (by seq) once — the events are the wire's, validated as such."""
    state_check, event_check = _fold_validators()
    seen: set[int] = set()
    out = []
    for i, state in steps:
        for err in state_check.iter_errors({**state, "events": []}):
            out.append(f"line {i + 1}: {'/'.join(map(str, err.absolute_path))}: {err.message[:200]}")
        for event in state["events"]:
            seq = event["seq"]
            if isinstance(seq, int) and seq not in seen:
                seen.add(seq)
                out += [f"line {i + 1}: events seq {seq}: {err.message[:200]}" for err in event_check.iter_errors(event)]
    return out


def replay(lines: list[dict[str, Any]], window: int | None = None) -> list[tuple[int, FoldState]]:
    """``(line index, state)`` after every line that reached the model; with ``window``, the
    model holds at most that many events (``trim`` after each follow item, as a widget does)."""
    model: ClientSessionModel | None = None
    streams: dict[str, str] = {}
    prompts: dict[str, str] = {}
    steps: list[tuple[int, FoldState]] = []
    for i, line in enumerate(lines):
        msg = line["msg"]
        if line["dir"] == "out":
            if msg["type"] == "open":
                streams[msg["streamId"]] = msg["endpoint"]
                args = (msg.get("payload") or {}).get("args") or {}
                if msg["endpoint"] == "session/follow" and model is None:
                    cursor = args.get("cursor")
                    model = ClientSessionModel(args.get("sessionId"), cursor=-1 if cursor is None else cursor)
            elif msg["type"] == "client-request" and msg["method"] == "session/prompt" and model is not None:
                req = msg["payload"]["args"]["request"]
                content = req["content"]
                text = content if isinstance(content, str) else "".join(b.get("text", "") for b in content)
                prompts[msg["rpcId"]] = req["requestId"]
                model.submit(req["requestId"], text, req.get("mode") or "queue")
                steps.append((i, model.state()))
            continue
        if model is None:
            continue
        if msg["type"] == "server-response" and msg.get("rpcId") in prompts:
            rid = prompts[msg["rpcId"]]
            if msg["result"]["ok"]:
                model.accepted(rid, msg["rpcId"])
            else:
                model.rejected(rid, msg["result"]["error"])
            steps.append((i, model.state()))
        elif msg["type"] == "item":
            endpoint = streams.get(msg["streamId"])
            if endpoint == "session/follow":
                model.apply(msg["value"])
                if window is not None:
                    model.trim(window)
            elif endpoint == "session/control":
                model.apply_control(msg["value"])
            else:
                continue
            steps.append((i, model.state()))
    return steps
