"""The schema document: its shape, determinism, closed payloads, and real logs against it."""

from __future__ import annotations

import json
import os
from pathlib import Path

from jsonschema import Draft202012Validator

from dsh_notebook.wire.schema import TOP_LEVEL, schema_json
from tests.support.cli import dsh
from tests.wire.schema_support import document, problems


def test_the_document_is_draft_2020_12_with_the_three_unions() -> None:
    doc = document()
    assert doc["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(doc)
    assert set(TOP_LEVEL) <= set(doc["$defs"])
    assert doc["anyOf"] == [{"$ref": f"#/$defs/{n}"} for n in ("LogLine", "ClientMessage", "ServerMessage")]


def test_the_document_is_deterministic_across_processes() -> None:
    again = dsh("schema", check=True)
    assert again.stdout == schema_json()
    assert json.loads(again.stdout) == document()


def test_every_object_is_closed_and_every_tag_required() -> None:
    for name, node in document()["$defs"].items():
        if node.get("type") == "object" and "properties" in node:
            assert node.get("additionalProperties") is False, name
            for prop, spec in node["properties"].items():
                if "const" in spec:
                    assert prop in node.get("required", ()), f"{name}.{prop}"


def test_a_frame_with_one_extra_field_does_not_validate() -> None:
    status = {"type": "status", "status": "idle", "turn": None, "step": None}
    item = {"type": "item", "streamId": "f1", "value": status}
    assert problems("ServerMessage", item) == []
    assert problems("ServerMessage", {**item, "value": {**status, "extra": 1}})
    assert problems("ServerMessage", {**item, "extra": 1})
    event = {"seq": 0, "time": 1, "type": "turn/start", "turn": 1}
    assert problems("LogLine", event) == []
    assert problems("LogLine", {**event, "colour": "red"})
    assert problems("ClientMessage", {"type": "cancel", "streamId": "f1"}) == []
    assert problems("ClientMessage", {"type": "cancel", "streamId": "f1", "rpcId": "x"})


def test_follow_and_control_status_never_both_match() -> None:
    control = {"type": "status", "sessionId": "s_1", "status": "running"}
    follow = {"type": "status", "status": "running", "turn": 1, "step": 2}
    for value in (control, follow):
        assert problems("ServerMessage", {"type": "item", "streamId": "c", "value": value}) == []
    assert problems("ServerMessage", {"type": "item", "streamId": "c", "value": {**follow, "sessionId": "s_1"}})


def test_every_line_of_a_real_run_log_validates(tmp_path: Path) -> None:
    env = {**os.environ, "DSH_HOME": str(tmp_path / "home")}
    dsh("run", "--quiet", "run the tests; if they fail fix src/math.ts; tell me the result", check=True, env=env, timeout=120)
    [log] = list((tmp_path / "home" / "sessions").glob("*.jsonl"))
    lines = log.read_text().splitlines()
    assert json.loads(lines[0])["type"] == "session" and len(lines) > 10
    for n, line in enumerate(lines, 1):
        assert problems("LogLine", json.loads(line)) == [], f"line {n}: {line[:200]}"


def test_x_endpoints_match_the_descriptors_and_resolve() -> None:
    from dsh_notebook.host.contract import DESCRIPTORS
    from dsh_notebook.wire.endpoints import ENDPOINTS

    mismatched = sorted(
        name for name in set(DESCRIPTORS) | set(ENDPOINTS)
        if name not in ENDPOINTS or name not in DESCRIPTORS
        or ENDPOINTS[name][0] is not DESCRIPTORS[name].args
        or (DESCRIPTORS[name].result or "stream") != (ENDPOINTS[name][1] if not isinstance(ENDPOINTS[name][1], str) else "stream")
    )  # fmt: skip
    assert mismatched == [], f"add or fix these endpoints in wire/endpoints.py ENDPOINTS: {mismatched}"
    doc = document()
    for name, entry in doc["x-endpoints"].items():
        for key in ("args", "result", "items"):
            if key in entry:
                assert entry[key]["$ref"].removeprefix("#/$defs/") in doc["$defs"], (name, key)
    assert problems("ServerMessage", {"type": "server-response", "rpcId": "r", "result": {"ok": True, "value": {"accepted": True}}}) == []
