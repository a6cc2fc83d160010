"""Breakpoint conditions (``--break 03 --break-when 'name==bash and command~"rm "'``).

A small expression over one tool call, read by hand (never ``eval``): a breakpoint with a
condition pauses only for calls it holds for.

    expr  := term ("or" term)*
    term  := factor ("and" factor)*
    factor:= "not" factor | "(" expr ")" | test
    test  := FIELD OP VALUE           OP: ==  !=  ~ (contains)  !~ (does not contain)
    FIELD := name | args | any argument of the call (command, file_path, pattern …)
    VALUE := "a string" | 'a string' (\\" \\' \\\\ escapes) | a bare word (bash, src/x.py, 3)

``name`` is the tool's name, ``args`` the arguments' JSON text, any other field the argument of
that name (a string as is, anything else as JSON; a missing argument equals nothing, so ``==`` and
``~`` are false and ``!=`` and ``!~`` true). Comparisons are exact and case-sensitive. Keywords
``and or not`` are case-insensitive. Where a stage concerns several calls (01: the assistant's
message; 05 and 06: the batch just run, names only) it pauses when the condition holds for any.

Anything that is not such an expression is ``BAD_BREAK_WHEN`` saying where; an expression is at
most 2,000 characters and 64 levels deep; evaluating one never raises.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ..errors import DshError, ErrorCode
from ..wire.events import AssistantMessageEvent
from ..wire.pause import PausePayload, ResultPayload

MAX_LENGTH = 2000
MAX_DEPTH = 64
_TOKEN = re.compile(r"""\s*(?:(?P<op>==|!=|!~|~|\(|\))|(?P<str>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')|(?P<word>[^\s()=!~"']+))""",
                    re.DOTALL)
Op = Literal["==", "!=", "~", "!~"]


class BreakWhenError(DshError):
    """A ``--break-when`` expression that cannot be read."""

    code: ErrorCode = "BAD_BREAK_WHEN"


@dataclass(frozen=True)
class Test:
    field: str
    op: Op
    value: str


@dataclass(frozen=True)
class Not:
    arg: Node


@dataclass(frozen=True)
class Bool:
    op: Literal["and", "or"]
    args: tuple[Node, ...]


Node = Test | Not | Bool


@dataclass(frozen=True)
class Call:
    """What a condition looks at: the tool's name and its arguments (raw JSON text)."""

    name: str
    arguments: str | None = None

    def get(self, key: str) -> str | None:
        if key == "name":
            return self.name
        if key == "args":
            return self.arguments
        try:
            parsed = json.loads(self.arguments) if self.arguments else None
        except (ValueError, RecursionError):
            return None
        if not isinstance(parsed, dict) or key not in parsed:
            return None
        value = parsed[key]
        return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _unquote(text: str) -> str:
    body, out, i = text[1:-1], [], 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            i += 1
            ch = body[i]
        out.append(ch)
        i += 1
    return "".join(out)


def _tokens(text: str) -> list[tuple[str, str, int]]:
    out, at = [], 0
    while at < len(text):
        if text[at:].strip() == "":
            break
        m = _TOKEN.match(text, at)
        if m is None or m.end() == at:
            raise BreakWhenError(f"cannot read {text[at:].strip()[:20]!r} at character {at + 1} "
                                 "(an unclosed quote?)")
        kind = m.lastgroup or ""
        out.append((kind, m.group(kind), m.start(kind)))
        at = m.end()
    return out


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = _tokens(text)
        self.i = 0

    def peek(self) -> tuple[str, str, int] | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def keyword(self, word: str) -> bool:
        tok = self.peek()
        if tok is not None and tok[0] == "word" and tok[1].lower() == word:
            self.i += 1
            return True
        return False

    def fail(self, what: str) -> BreakWhenError:
        tok = self.peek()
        where = f"{tok[1][:20]!r} at character {tok[2] + 1}" if tok else "the end"
        return BreakWhenError(f"expected {what}, found {where}")

    def expr(self, depth: int) -> Node:
        if depth > MAX_DEPTH:
            raise BreakWhenError(f"nested more than {MAX_DEPTH} levels deep")
        args = [self.term(depth)]
        while self.keyword("or"):
            args.append(self.term(depth))
        return args[0] if len(args) == 1 else Bool("or", tuple(args))

    def term(self, depth: int) -> Node:
        args = [self.factor(depth)]
        while self.keyword("and"):
            args.append(self.factor(depth))
        return args[0] if len(args) == 1 else Bool("and", tuple(args))

    def factor(self, depth: int) -> Node:
        if depth > MAX_DEPTH:
            raise BreakWhenError(f"nested more than {MAX_DEPTH} levels deep")
        if self.keyword("not"):
            return Not(self.factor(depth + 1))
        tok = self.peek()
        if tok is not None and tok[:2] == ("op", "("):
            self.i += 1
            node = self.expr(depth + 1)
            close = self.peek()
            if close is None or close[:2] != ("op", ")"):
                raise self.fail("')'")
            self.i += 1
            return node
        if tok is None or tok[0] != "word" or tok[1].lower() in ("and", "or", "not"):
            raise self.fail("a test like name==bash or command~\"rm \"")
        self.i += 1
        op = self.peek()
        if op is None or op[0] != "op" or op[1] not in ("==", "!=", "~", "!~"):
            raise self.fail(f"==, !=, ~ or !~ after {tok[1][:20]!r}")
        self.i += 1
        value = self.peek()
        if value is None or value[0] not in ("str", "word"):
            raise self.fail(f"a value after {op[1]}")
        self.i += 1
        text = _unquote(value[1]) if value[0] == "str" else value[1]
        return Test(tok[1], op[1], text)  # type: ignore[arg-type]


def parse_when(text: str) -> Node:
    """Read an expression; raises :class:`BreakWhenError` (``BAD_BREAK_WHEN``) saying where."""
    if not isinstance(text, str):
        raise BreakWhenError("a condition is text, e.g. 'name==bash and command~\"rm \"'")
    if len(text) > MAX_LENGTH:
        raise BreakWhenError(f"a condition is at most {MAX_LENGTH} characters")
    p = _Parser(text)
    if not p.toks:
        raise BreakWhenError("the condition is empty (e.g. 'name==bash and command~\"rm \"')")
    node = p.expr(0)
    if p.peek() is not None:
        raise p.fail("and, or or the end")
    return node


def holds(node: Node, call: Call) -> bool:
    """Does the condition hold for ``call``? Never raises (the depth is bounded by the parser)."""
    return _eval(node, call)


def _eval(node: Node, call: Call) -> bool:
    if isinstance(node, Test):
        got = call.get(node.field)
        if node.op == "==":
            return got == node.value
        if node.op == "!=":
            return got != node.value
        found = got is not None and node.value in got
        return found if node.op == "~" else not found
    if isinstance(node, Not):
        return not _eval(node.arg, call)
    results = (_eval(a, call) for a in node.args)
    return all(results) if node.op == "and" else any(results)


def calls_of(stage: str, payload: PausePayload, name: str | None, value: Any, tools: tuple[str, ...],
             known: Mapping[str, str]) -> list[Call]:
    """The calls a pause point concerns: one call at 02–04, the message's calls at 01, the
    batch's names at 05/06 (``known``: the arguments seen per call id, for stage 04)."""
    if stage in ("02", "03") and name is not None:
        return [Call(name, value if isinstance(value, str) else None)]
    if stage == "04" and name is not None:
        call_id = payload.call_id if isinstance(payload, ResultPayload) else None
        return [Call(name, known.get(str(call_id)))]
    if stage == "01" and isinstance(payload, AssistantMessageEvent):
        return [Call(c.name, c.arguments) for c in payload.message.tool_calls]
    return [Call(t) for t in tools]
