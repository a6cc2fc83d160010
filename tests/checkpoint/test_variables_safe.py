"""Kept variables cannot run code and are sized before they are serialised (issue 35, lows):
JSON, ``.npy`` without pickle, Parquet; a tampered kept file runs nothing; a 400 MB array costs
no memory to refuse."""

from __future__ import annotations

import base64
import json
import math
import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dsh_notebook.checkpoint.varformats import NotKept, decode, encode
from dsh_notebook.checkpoint.variables import VariableKeeper, keep
from tests.checkpoint.support import ROOT


class Local:
    """A class of the notebook: kept only as JSON, NumPy or Parquet data, so not at all."""


def test_values_come_back_as_they_were() -> None:
    values = {
        "nested": {"a": (1, 2.5, None), 3: [True, b"\x00bytes", {"x"}], (1, "k"): frozenset({1, 2})},
        "special": [math.inf, -math.inf, 1 + 2j, 10**40, "é\u2028"],
        "array": np.arange(12, dtype=np.int32).reshape(3, 4),
        "scalar": np.float32(1.5),
        "frame": pd.DataFrame({"a": [1, 2], "b": ["x", "y"], "c": [0.5, None]}),
        "series": pd.Series([1.0, 2.0], name="s"),
    }
    for name, value in values.items():
        fmt, data = encode(value, 20 << 20)
        back = decode(fmt, data)
        assert type(back) is type(value), name
        if isinstance(value, np.ndarray):
            assert fmt == "npy" and (back == value).all() and back.dtype == value.dtype
        elif isinstance(value, (pd.DataFrame, pd.Series)):
            assert fmt == "parquet" and back.equals(value)
        else:
            assert back == value, name
    nan = decode(*encode(math.nan, 100))
    assert isinstance(nan, float) and math.isnan(nan)


@pytest.mark.parametrize(("value", "why"), [
    (Local(), "kept only as JSON, NumPy or Parquet"),
    (np.array([Local()], dtype=object), "Python objects"),
    (lambda: 1, "kept only as JSON"),
    (list(range(1000)), "over DSH_CHECKPOINT_MAX_VARIABLE"),
])
def test_what_cannot_be_kept_safely_is_not_kept_and_says_why(value: object, why: str,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(NotKept, match=why):
        encode(value, 500)
    monkeypatch.setenv("DSH_CHECKPOINT_MAX_VARIABLE", "500")
    kept = keep({"v": value}, "v")
    assert kept.data is None and kept.why is not None


MEMORY = r"""
import resource, sys
import numpy as np
from dsh_notebook.checkpoint.variables import keep
big = np.zeros(400_000_000, dtype=np.uint8)      # 400 MB, its pages never touched
many = ["x" * 1000] * 200_000                     # 200 MB as JSON, one small object in memory
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
reasons = [keep({"big": big}, "big").why, keep({"many": many}, "many").why]
grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
print(grown // 1024, reasons)
"""


def test_the_cap_is_checked_before_the_value_is_serialised() -> None:
    done = subprocess.run([sys.executable, "-c", MEMORY], capture_output=True, text=True, timeout=300, check=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    grown_mb, reasons = done.stdout.split(" ", 1)
    assert "over DSH_CHECKPOINT_MAX_VARIABLE" in reasons and "None" not in reasons, reasons
    assert int(grown_mb) < 100, f"refusing the values grew the process by {grown_mb} MB"


def test_a_tampered_kept_file_runs_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "payload-ran"

    class Payload:
        def __reduce__(self) -> tuple[object, tuple[str]]:
            return (os.system, (f"touch {marker}",))

    folder = tmp_path / "variables" / "s_x"
    folder.mkdir(parents=True)
    raw = base64.b64encode(pickle.dumps(Payload())).decode()
    # an earlier version's pickle, and a .npy whose object array would need pickle to load
    obj = np.array([1, "x"], dtype=object)
    npy = base64.b64encode(b"A" + _npy_with_pickle(obj)).decode()
    (folder / "1.json").write_text(json.dumps({"v": 1, "turn": 1, "changed": {"df": "rebound"},
                                               "kept": {"df": [True, raw, "dict", None]}}))
    (folder / "2.json").write_text(json.dumps({"v": 2, "turn": 2, "changed": {"arr": "rebound"},
                                               "kept": {"arr": [True, npy, "ndarray", None, "npy"]}}))
    keeper = VariableKeeper(folder)
    ns: dict[str, object] = {"df": "now", "arr": "now"}
    keeper.namespace = ns
    plan = keeper.prepare(1)
    assert plan.put == {} and plan.drop == set()
    why = dict(line.split(": ", 1) for line in plan.failed)
    assert "never read" in why["df"] and why["arr"].startswith("CHECKPOINT_VARIABLE_UNREADABLE")
    keeper.apply(plan)
    assert ns == {"df": "now", "arr": "now"} and not marker.exists()


def _npy_with_pickle(arr: np.ndarray) -> bytes:
    import io

    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=True)
    return buf.getvalue()
