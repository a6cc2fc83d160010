"""``inspect_var`` / namespace diff facts without running user code (real numpy and pandas)."""

from __future__ import annotations

import pytest

from dsh_notebook.notebook.context.inspection import describe, safe_repr, short
from dsh_notebook.notebook.context.notebook_tools import lookup
from dsh_notebook.notebook.context.nsdiff import diff, short_form, snapshot


class Trap:
    """Every computed attribute raises: describing it must not touch any of them."""

    calls = 0

    @property
    def shape(self) -> tuple[int, int]:
        Trap.calls += 1
        raise RuntimeError("user code ran")

    def __len__(self) -> int:
        Trap.calls += 1
        raise RuntimeError("user code ran")

    def __repr__(self) -> str:
        Trap.calls += 1
        raise RuntimeError("user code ran")

    def __getattr__(self, name: str) -> object:
        Trap.calls += 1
        raise RuntimeError("user code ran")


def test_user_objects_are_described_from_their_type_and_dict_only() -> None:
    trap = Trap()
    trap.__dict__["size"] = 3
    info = describe(trap)
    assert info["type"].endswith("Trap") and info["attributes"] == {"size": "int"}
    assert info["repr"].startswith("<") and "Trap" in info["repr"]
    assert "shape" not in info and "length" not in info
    assert "<" in safe_repr([1, trap, "a"]) and Trap.calls == 0
    assert lookup({"t": trap}, "t.size") == 3
    with pytest.raises(AttributeError):
        lookup({"t": trap}, "t.shape")  # a property of a user class is not run
    assert Trap.calls == 0


def test_builtins() -> None:
    assert describe([1, 2, 3]) == {"type": "list", "length": 3, "repr": "[1, 2, 3]"}
    assert describe({"a": (1,)})["repr"] == "{'a': (1,)}"
    assert describe("x" * 1000)["length"] == 1000 and len(describe("x" * 1000)["repr"]) <= 400
    assert short(list(range(5))) == "list[5]" and short(3) == "int"
    assert describe(len)["repr"] == "<function len>"


def test_pandas_dataframe_and_numpy_array() -> None:
    pd = pytest.importorskip("pandas")
    np = pytest.importorskip("numpy")
    df = pd.DataFrame({"city": pd.Series(["Oslo", "Lima"], dtype="string"), "temp": [3.5, 19.0], "rank": [1, 2]})
    info = describe(df)
    assert info["type"].endswith("DataFrame") and info["shape"] == [2, 3]
    assert info["columns"] == ["city", "temp", "rank"]
    assert info["dtypes"]["temp"] == "float64" and info["dtypes"]["rank"] == "int64"
    assert "Lima" in info["repr"] and "19.0" in info["repr"]  # the head, rendered by pandas
    trap = Trap()
    held = describe(pd.DataFrame({"obj": pd.Series([trap, trap], dtype=object)}))
    assert held["dtypes"] == {"obj": "object"} and "object values" in held["repr"] and Trap.calls == 0
    arr = describe(np.zeros((2, 3), dtype="float32"))
    assert arr["shape"] == [2, 3] and arr["dtype"] == "float32" and "0." in arr["repr"]
    assert short(df) == "DataFrame 2×3"


def test_namespace_diff() -> None:
    ns: dict[str, object] = {"keep": 1, "swap": [1], "gone": "x", "_private": 1, "In": []}
    before = snapshot(ns)
    ns["swap"] = [1, 2]
    ns["new"] = {"a": 1}
    ns["keep"] = ns["keep"]
    del ns["gone"]
    ns["_also_private"] = 2
    changes = diff(before, snapshot(ns))
    assert changes == {"added": [{"name": "new", "type": "dict", "length": 1}],
                       "rebound": [{"name": "swap", "type": "list", "length": 2}],
                       "deleted": [{"name": "gone", "type": "str", "length": 1}]}
    assert short_form(changes) == "added new (dict[1]); rebound swap (list[2]); deleted gone (str[1])"
    assert short_form(diff(before, before)) == "no names changed"
