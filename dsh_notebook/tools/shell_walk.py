"""The allow-list walk of a tree-sitter bash tree (see :mod:`.shell_parse` for what is resolved).

Every node kind not handled here leaves the line unresolved: statements (lists, pipelines,
``!``, ``( … )``, ``{ …; }``), simple commands and ``[ … ]``, their redirections
(:mod:`.shell_redirect`, :mod:`.shell_heredoc`) — read against the source as bash reads it
(:class:`~.shell_source.Source`).
"""

from __future__ import annotations

import re
import threading
from typing import Any

from .shell_line import ParsedLine, SimpleCommand
from .shell_redirect import redirect
from .shell_resolve import command_words, resolve
from .shell_source import ASSIGNMENT, LINE_TOKENS, NOT_RESOLVED, WORDISH, Source
from .shell_words import Unresolved

MAX_PARSE = 65536  # characters; a longer line is unresolved
MAX_NESTING = 64  # nested groups / subshells / `bash -c` levels
_VARREDIR = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*\}[<>&]")  # `{fd}>file` assigns a variable
_TEST_TOKENS = frozenset({"=", "==", "!=", "!", "-a", "-o"})


class Walk(Source):
    def program(self, root: Any) -> None:
        """The whole line: nothing before or after the tree but blanks and newlines."""
        self.gap(0, root.start_byte, True)
        self.gap(root.end_byte, len(self.src), True)
        self.lines(root, 0)

    # -- statements -----------------------------------------------------------------------------

    def lines(self, node: Any, nesting: int) -> None:
        """A node holding statements (the program, a group, a subshell body)."""
        for child in self.children(node, True):
            if child.is_named:
                self.statement(child, True, nesting)
            elif child.type not in LINE_TOKENS:
                raise Unresolved(f"`{child.type}`")

    def statement(self, node: Any, start: bool, nesting: int) -> None:
        if nesting > MAX_NESTING:
            raise Unresolved("nested too deep to check")
        kind = node.type
        if kind == "comment":
            return
        if kind == "command":
            self.simple(node, [], start)
        elif kind == "redirected_statement":
            self.redirected(node, start, nesting)
        elif kind in ("pipeline", "list"):
            for child, at_start in self.chain(node, start):
                self.statement(child, at_start, nesting + 1)
        elif kind in ("subshell", "compound_statement", "negated_command"):
            self.group(node, start, nesting)
        elif kind == "test_command":
            self.test(node, [])
        elif kind in ("variable_assignment", "variable_assignments"):
            raise Unresolved(f"an assignment ({self.text(node.start_byte, node.end_byte)[:30]})")
        elif kind == "for_statement" and node.children:
            raise Unresolved(f"a `{node.children[0].type}` loop")
        else:
            raise Unresolved(NOT_RESOLVED.get(kind) or f"{kind.replace('_', ' ')}")

    def chain(self, node: Any, start: bool) -> list[tuple[Any, bool]]:
        """The statements of a list or pipeline in source order, flattened (tree-sitter nests
        ``a && b && c`` to the left, one level per operator), each with whether it starts a
        pipeline."""
        out: list[tuple[Any, bool]] = []
        stack: list[tuple[Any, bool]] = [(node, start)]
        while stack:
            current, at_start = stack.pop()
            if current.type != node.type:
                out.append((current, at_start))
                continue
            parts: list[tuple[Any, bool]] = []
            for child in self.children(current, True):
                if not child.is_named:
                    if child.type not in LINE_TOKENS:
                        raise Unresolved(f"`{child.type}`")
                    continue
                parts.append((child, at_start if node.type == "list" or not parts else False))
            stack.extend(reversed(parts))
        return out

    def group(self, node: Any, start: bool, nesting: int) -> None:
        kids = node.children
        opener = kids[0].type if kids else ""
        if node.type == "negated_command":
            if opener != "!" or len(kids) != 2 or not start:
                raise Unresolved("`!` where bash does not negate a pipeline")
            if not self.gap(kids[0].end_byte, kids[1].start_byte, True):  # `!x` is a word for bash
                raise Unresolved("`!` joined to a word")
            self.statement(kids[1], True, nesting + 1)
            return
        closer = {"(": ")", "{": "}"}.get(opener)
        if closer is None or kids[-1].type != closer or len(kids) < 3:
            raise Unresolved("`((…))`" if opener == "((" else f"`{opener}`")
        if opener == "{" and (not self.gap(kids[0].end_byte, kids[1].start_byte, True)
                              or kids[-2].type not in (";", "&") and "\n" not in self.gap(
                                  kids[-2].end_byte, kids[-1].start_byte, True)):
            raise Unresolved("`{` or `}` where bash reads a word")  # `{ls;}`: reserved words need blanks
        for child in self.children(node, True)[1:-1]:
            if child.is_named:
                self.statement(child, True, nesting + 1)
            elif child.type not in LINE_TOKENS:
                raise Unresolved(f"`{child.type}`")

    def redirected(self, node: Any, start: bool, nesting: int) -> None:
        body = node.child_by_field_name("body")
        extra: list[Any] = []
        kids = self.children(node, False, extra if body is not None and body.type == "command" else None)
        for i, child in enumerate(kids):
            if child is body or body is not None and child.id == body.id:
                continue
            if node.field_name_for_child(i) != "redirect":
                raise Unresolved(f"{child.type.replace('_', ' ')} after a command")
            extra += self.redirect(child, nesting)
        if body is None:
            if extra:
                raise Unresolved("words after a redirection")
            return
        if body.type == "command":
            self.simple(body, extra, start)
        elif body.type == "test_command":
            self.test(body, extra)
        elif extra:
            raise Unresolved("words after the redirection of a compound command")
        else:
            self.statement(body, start, nesting + 1)

    def redirect(self, node: Any, nesting: int) -> list[Any]:
        """Record one redirection; returns word nodes bash reads as arguments of the command."""
        return redirect(self, node, nesting)

    def simple(self, node: Any, extra: list[Any], start: bool) -> None:
        slot = len(self.line.commands)  # before the commands of its here-document's line
        nodes, seen = list(extra), False
        for i, child in enumerate(self.children(node, False)):
            name = node.field_name_for_child(i)
            if child.type == "variable_assignment":
                raise Unresolved(f"an assignment ({self.text(child.start_byte, child.end_byte)[:30]})")
            if name == "redirect":
                nodes += self.redirect(child, 0)
                start = start and seen  # `<f time ls`: `time` is the program, not the keyword
            elif name in ("name", "argument"):
                nodes.append(child)
                seen = True
            else:
                raise Unresolved(f"{child.type.replace('_', ' ')} in a command")
        self.add(nodes, start, "in an argument", slot)

    def test(self, node: Any, extra: list[Any]) -> None:
        """``[ … ]`` (the ``test`` builtin; ``[[ … ]]`` evaluates arithmetic: unresolved)."""
        kids = node.children
        if not kids or kids[0].type != "[" or kids[-1].type != "]":
            raise Unresolved("`[[ … ]]`" if kids and kids[0].type == "[[" else "a test the parser cannot follow")
        leaves: list[Any] = []
        stack = list(reversed(kids))
        while stack:
            n = stack.pop()
            if n.type in ("unary_expression", "binary_expression", "parenthesized_expression"):
                stack.extend(reversed(n.children))
            elif n.type in WORDISH or n.type in _TEST_TOKENS or n.type in ("[", "]"):
                leaves.append(n)
            else:
                raise Unresolved(NOT_RESOLVED.get(n.type) or f"{n.type.replace('_', ' ')} in a test")
        if not self.ends_word(node.end_byte):
            raise Unresolved("`]` joined to a word")
        leaves.sort(key=lambda n: n.start_byte)
        if not leaves or leaves[0].start_byte != node.start_byte or leaves[-1].end_byte != node.end_byte:
            raise Unresolved("a test the parser cannot follow")
        for before, after in zip(leaves, leaves[1:], strict=False):  # only blanks between the words
            if after.start_byte > before.end_byte:
                self.gap(before.end_byte, after.start_byte, False)
        self.add(leaves + extra, True, "in a test", len(self.line.commands))

    def add(self, nodes: list[Any], start: bool, where: str, slot: int) -> None:
        words, raws = self.words(nodes, where)
        if not words:
            return
        if ASSIGNMENT.match(raws[0]):  # `E\<newline>x=1 cmd`: bash assigns
            raise Unresolved(f"an assignment ({raws[0][:30]})")
        words = command_words(words, raws, start)
        if not words:
            return
        resolved = resolve(words, self.line, self.depth, parse_into)
        self.line.commands.insert(slot, SimpleCommand(tuple(w.text for w in words), (), tuple(resolved),
                                                    tuple(words), self.depth))


_local = threading.local()


def _parser() -> Any:
    parser = getattr(_local, "parser", None)
    if parser is None:
        import tree_sitter  # here: loading the grammar costs a few ms of every CLI start
        import tree_sitter_bash

        parser = _local.parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))
    return parser


def _first_error(node: Any) -> Any:
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == "ERROR" or n.is_missing:
            return n
        if n.has_error:
            stack.extend(reversed(n.children))
    return None


def parse_into(text: str, line: ParsedLine, depth: int) -> None:
    """Parse ``text`` and add its commands to ``line`` (``depth`` > 0: inside ``bash -c``)."""
    if len(text) > MAX_PARSE:
        line.why(f"too long to check ({len(text)} characters)")
        return
    if "\0" in text:
        line.why("a NUL character")
        return
    if _VARREDIR.search(text.replace("\\\n", "")):
        line.why("a redirection that assigns a file descriptor ({fd}>…)")
        return
    try:
        src = text.encode("utf-8")
    except UnicodeEncodeError:
        line.why("text that is not valid UTF-8")
        return
    tree = _parser().parse(src)
    root = tree.root_node
    if root.has_error:
        bad = _first_error(root)
        near = src[bad.start_byte : bad.start_byte + 20].decode("utf-8", "replace") if bad is not None else ""
        line.why(f"a parse error near {near!r}" if near.strip() else "a parse error")
        return
    try:
        Walk(src, line, depth).program(root)
    except Unresolved as exc:
        line.why(str(exc))


__all__ = ["MAX_NESTING", "MAX_PARSE", "Walk", "parse_into"]
