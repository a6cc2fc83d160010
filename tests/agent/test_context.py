"""The small Cordis equivalent: services, contributions, hooks, scope, disposal, describe."""

from __future__ import annotations

import pytest

from dsh_notebook.context import HarnessContext
from dsh_notebook.errors import UserError


def test_services_by_name_with_shadowing_and_lifecycle() -> None:
    root = HarnessContext("host")
    disposed: list[str] = []
    root.provide("model", "global-model", dispose=lambda: disposed.append("model"))
    child = root.child("agent:s1")
    child.provide("model", "agent-model")
    assert child.service("model") == "agent-model" and root.service("model") == "global-model"
    assert child.services() == {"model": "agent-model"}
    with pytest.raises(UserError) as e:
        child.service("nope")
    assert e.value.code == "UNKNOWN_SERVICE"
    with pytest.raises(UserError):
        root.provide("model", "again")
    root.dispose()
    assert disposed == ["model"] and child.disposed and root.children == []
    with pytest.raises(UserError) as e:
        child.section("x", 0, "y")
    assert e.value.code == "CONTEXT_DISPOSED"


async def test_hooks_waterfall_global_first_and_disposable() -> None:
    root = HarnessContext()
    child = root.child("a")
    root.on("agent/pre-step", lambda v: v + ["global"])
    off = child.on("agent/pre-step", lambda v: v + ["agent"])

    async def async_none(v):
        return None  # keeps the value

    child.on("agent/pre-step", async_none)
    scope = child.scope()
    assert await scope.waterfall("agent/pre-step", []) == ["global", "agent"]
    off()
    assert await scope.waterfall("agent/pre-step", []) == ["global"]
    with pytest.raises(UserError):
        root.on("agent/unknown", lambda v: v)


def test_scope_sees_chain_and_describe_lists_it() -> None:
    root = HarnessContext("host")
    root.provide("sessions", object())
    root.section("persona", 0, "g")
    child = root.child("agent:s1")
    child.section("persona", 0, "a")
    child.context("todo", 1, "t")
    scope = child.scope()
    assert [c.value for c in scope.sections()] == ["a"]
    d = scope.describe()
    assert d["sections"] == [{"name": "persona", "order": 0, "from": "agent:s1"}]
    assert d["contexts"][0]["name"] == "todo" and "sessions" in d["services"]
    tree = root.describe()
    assert tree["services"][0]["name"] == "sessions" and tree["services"][0]["state"] == "active"
    assert tree["children"][0]["name"] == "agent:s1"
    # disposal of a contribution is seen by the scope
    child.dispose()
    assert [c.value for c in scope.sections()] == ["g"]
