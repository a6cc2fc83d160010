"""The allow-list walk of a tree-sitter bash tree (see :mod:`.shell_parse` for what is resolved).

Every node kind not handled here leaves the line unresolved. Between the children of a node only
blanks (and, between statements, newlines) may stand, so no text is read by bash that the walk did
not see. Words are not taken from tree-sitter's leaves: the source text of each run of adjacent
word nodes goes to :func:`~.shell_words.split_words`, which reads it as bash does.
"""

from __future__ import annotations

from typing import Any

from .shell_parse import MAX_NESTING, ParsedLine, Redirect, SimpleCommand, literal_target
from .shell_resolve import command_words, resolve
from .shell_words import Unresolved, Word, one_word, split_words

FD_OPS = frozenset({">&", "<&"})
WRITE_OPS = frozenset({">", ">>", "&>", "&>>", ">|", ">&"})
READ_OPS = frozenset({"<", "<&", ">&-", "<&-"})
LINE_TOKENS = frozenset({";", "&", "&&", "||", "|", "|&", "\n"})
NOT_RESOLVED = {
    "variable_assignment": "an assignment", "variable_assignments": "an assignment",
    "declaration_command": "a declaration (declare / export / local …)", "unset_command": "`unset`",
    "function_definition": "a function definition", "if_statement": "`if`", "while_statement": "a loop",
    "for_statement": "a `for` loop", "c_style_for_statement": "a `for` loop", "case_statement": "`case`",
    "command_substitution": "command substitution", "process_substitution": "process substitution",
    "arithmetic_expansion": "arithmetic expansion", "expansion": "parameter expansion",
    "simple_expansion": "parameter expansion", "brace_expression": "brace expansion",
    "translated_string": 'locale translation ($"…")', "subscript": "an array subscript",
}  # fmt: skip
_WORDISH = frozenset({"word", "string", "raw_string", "concatenation", "number", "ansi_c_string",
                      "command_name", "test_operator", "string_content"})
_TEST_TOKENS = frozenset({"=", "==", "!=", "!", "-a", "-o"})


def _reason(node: Any, where: str) -> str | None:
    """The first non-literal part of a word node, said in the words of the issue."""
    stack = [node]
    while stack:
        n = stack.pop()
        what = NOT_RESOLVED.get(n.type)
        if what is not None:
            return f"{what} {where}"
        stack.extend(n.children)
    return None


class Walk:
    def __init__(self, src: bytes, line: ParsedLine, depth: int) -> None:
        self.src, self.line, self.depth = src, line, depth
        self.heredoc_lines: set[int] = set()  # the newline each here-document's body follows

    def text(self, start: int, end: int) -> str:
        return self.src[start:end].decode("utf-8")

    def gap(self, start: int, end: int, newlines: bool) -> str:
        """Check the text between two nodes; returns it without line continuations."""
        raw = self.text(start, end)
        gap = raw.replace("\\\n", "")
        allowed = " \t\n" if newlines else " \t"
        if any(c not in allowed for c in gap):
            raise Unresolved(f"text the parser skipped ({raw.strip()[:20]!r})")
        return gap  # only continuations: bash joins the two sides (one word: see `words`)

    def children(self, node: Any, newlines: bool, start: int | None = None) -> list[Any]:
        pos = node.start_byte if start is None else start
        out = []
        for child in node.children:
            self.gap(pos, child.start_byte, newlines)
            pos = max(pos, child.end_byte)
            out.append(child)
        return out

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
            self.gap(kids[0].end_byte, kids[1].start_byte, False)
            self.statement(kids[1], True, nesting + 1)
            return
        closer = {"(": ")", "{": "}"}.get(opener)
        if closer is None or kids[-1].type != closer or len(kids) < 3:
            raise Unresolved("`((…))`" if opener == "((" else f"`{opener}`")
        for child in self.children(node, True)[1:-1]:
            if child.is_named:
                self.statement(child, True, nesting + 1)
            elif child.type not in LINE_TOKENS:
                raise Unresolved(f"`{child.type}`")

    def redirected(self, node: Any, start: bool, nesting: int) -> None:
        body = node.child_by_field_name("body")
        extra: list[Any] = []
        for i, child in enumerate(self.children(node, False)):
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

    # -- redirections ---------------------------------------------------------------------------

    def redirect(self, node: Any, nesting: int) -> list[Any]:
        """Record one redirection; returns word nodes bash reads as arguments of the command."""
        if node.type == "heredoc_redirect":
            from .shell_heredoc import heredoc

            return heredoc(self, node, nesting)
        kids = self.children(node, False)
        if node.type == "herestring_redirect":
            words = [k for k in kids if k.is_named]
            if not kids or kids[0].type != "<<<" or not words:
                raise Unresolved("a here-string the parser cannot follow")
            why = _reason(words[0], "in a here-string")
            if why:
                raise Unresolved(why)
            self.line.redirects.append(Redirect("<<<", one_word(self.text(words[0].start_byte, words[0].end_byte)).text))
            return words[1:]
        if node.type != "file_redirect":
            raise Unresolved(f"{node.type.replace('_', ' ')}")
        ops = [k.type for k in kids if not k.is_named]
        dests = [k for k in kids if k.is_named and k.type != "file_descriptor"]
        if len(ops) != 1 or ops[0] not in WRITE_OPS | READ_OPS:
            raise Unresolved(f"a redirection the parser does not know ({' '.join(ops)})")
        op = ops[0]
        if op in (">&-", "<&-"):
            self.line.redirects.append(Redirect(op, "-"))
            return dests
        if not dests:
            raise Unresolved("a redirection without a target")
        why = _reason(dests[0], "in a redirect")
        if why:
            raise Unresolved(why)
        target = literal_target(self.text(dests[0].start_byte, dests[0].end_byte))
        self.line.redirects.append(Redirect(op, target))
        fd_dup = op in FD_OPS and (target.isdigit() or target == "-")
        if op in WRITE_OPS and not fd_dup and target != "/dev/null":
            self.line.writes = True
        return dests[1:]

    # -- words ----------------------------------------------------------------------------------

    def words(self, nodes: list[Any], where: str) -> tuple[list[Word], str]:
        """The bash words of word nodes in source order, and the raw text of the first one."""
        nodes = sorted(nodes, key=lambda n: n.start_byte)
        for n in nodes:
            why = _reason(n, where)
            if why:
                raise Unresolved(why)
            if n.type == "$":  # tree-sitter reads `$"…"` as `$` and a string
                raise Unresolved(f'locale translation ($"…") {where}')
            if n.type not in _WORDISH and not (where == "in a test" and not n.is_named):
                raise Unresolved(f"{n.type.replace('_', ' ')} {where}")
        runs: list[tuple[int, int]] = []  # adjacent nodes are one bash word (the text between
        for n in nodes:  # runs was checked by `children`, or is a redirection)
            if runs and (n.start_byte <= runs[-1][1] or not self.text(runs[-1][1], n.start_byte).replace("\\\n", "")):
                runs[-1] = (runs[-1][0], max(runs[-1][1], n.end_byte))
            else:
                runs.append((n.start_byte, n.end_byte))
        out: list[Word] = []
        for a, b in runs:
            out += split_words(self.text(a, b))
        first = self.text(*runs[0]).split()[0] if runs else ""
        return out, first

    def simple(self, node: Any, extra: list[Any], start: bool) -> None:
        slot = len(self.line.commands)  # before the commands of its here-document's line
        nodes = list(extra)
        for i, child in enumerate(self.children(node, False)):
            name = node.field_name_for_child(i)
            if child.type == "variable_assignment":
                raise Unresolved(f"an assignment ({self.text(child.start_byte, child.end_byte)[:30]})")
            if name == "redirect":
                nodes += self.redirect(child, 0)
            elif name in ("name", "argument"):
                nodes.append(child)
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
            elif n.type in _WORDISH or n.type in _TEST_TOKENS or n.type in ("[", "]"):
                leaves.append(n)
            else:
                raise Unresolved(NOT_RESOLVED.get(n.type) or f"{n.type.replace('_', ' ')} in a test")
        leaves.sort(key=lambda n: n.start_byte)
        for before, after in zip(leaves, leaves[1:], strict=False):  # only blanks between the words
            if after.start_byte > before.end_byte:
                self.gap(before.end_byte, after.start_byte, False)
        self.add(leaves + extra, True, "in a test", len(self.line.commands))

    def add(self, nodes: list[Any], start: bool, where: str, slot: int) -> None:
        words, first = self.words(nodes, where)
        if not words:
            return
        words = command_words(words, first, start)
        if not words:
            return
        resolved = resolve(words, self.line, self.depth)
        self.line.commands.insert(slot, SimpleCommand(tuple(w.text for w in words), (), tuple(resolved),
                                                    tuple(words), self.depth))


__all__ = ["LINE_TOKENS", "NOT_RESOLVED", "Walk"]
