"""Reading a tree-sitter bash tree against its source text, as bash reads the text.

:class:`Source` is what the walk (:mod:`.shell_walk`) stands on: between the children of a node
only blanks (and, between statements, newlines) may stand, so bash reads no text the walk did not
see; a line continuation may join only two word nodes (read as one word); a word must start and end
where bash starts and ends one (after and before a blank or a metacharacter), else tree-sitter cut
it where bash does not. Words are never taken from tree-sitter's leaves: the source text of each
run of adjacent word nodes goes to :func:`~.shell_words.split_words`, which reads it as bash does.
"""

from __future__ import annotations

from typing import Any

from .shell_line import ParsedLine
from .shell_words import ASSIGNMENT, Unresolved, Word, split_words

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
WORDISH = frozenset({"word", "string", "raw_string", "concatenation", "number", "ansi_c_string",
                      "command_name", "test_operator", "string_content"})
_TEST_TOKENS = frozenset({"=", "==", "!=", "!", "-a", "-o"})
BOUNDARY = tuple(c.encode() for c in " \t\n;&|()<>")  # what ends a word for bash


def wordish(node: Any) -> bool:
    return node.is_named and node.type in WORDISH


def reason(node: Any, where: str) -> str | None:
    """The first non-literal part of a word node, said in the words of the issue."""
    stack = [node]
    while stack:
        n = stack.pop()
        what = NOT_RESOLVED.get(n.type)
        if what is not None:
            return f"{what} {where}"
        stack.extend(n.children)
    return None


class _Span:
    """A word node made by the walk: two adjacent word nodes read as one (a redirection target
    tree-sitter cut in two), or a word tree-sitter dropped."""

    def __init__(self, first: Any, second: Any, children: list[Any] | None = None) -> None:
        self.start_byte, self.end_byte = first.start_byte, second.end_byte
        self.type, self.is_named = "word", True
        self.children = [first, second] if children is None else children


class _At:
    def __init__(self, start: int, end: int) -> None:
        self.start_byte, self.end_byte = start, end


class Source:
    """The source of one line (bytes, as tree-sitter's offsets count) and the line being built."""

    def __init__(self, src: bytes, line: ParsedLine, depth: int) -> None:
        self.src, self.line, self.depth = src, line, depth
        self.heredoc_lines: set[int] = set()  # the newline each here-document's body follows

    def statement(self, node: Any, start: bool, nesting: int) -> None:  # the walk's (.shell_walk)
        raise NotImplementedError

    def redirect(self, node: Any, nesting: int) -> list[Any]:  # the walk's (.shell_walk)
        raise NotImplementedError

    def text(self, start: int, end: int) -> str:
        return self.src[start:end].decode("utf-8")

    def gap(self, start: int, end: int, newlines: bool, joins: bool = False) -> str:
        """Check the text between two nodes; returns it without line continuations. Only
        continuations between them (``ec\\<newline>ho``) join them into one token for bash: an
        error unless ``joins`` (two word nodes, which :meth:`words` reads as one word)."""
        raw = self.text(start, end)
        gap = raw.replace("\\\n", "")
        allowed = " \t\n" if newlines else " \t"
        if any(c not in allowed for c in gap):
            raise Unresolved(f"text the parser skipped ({raw.strip()[:20]!r})")
        if raw and not gap and not joins:
            raise Unresolved("a line continuation that joins two tokens")
        return gap

    def children(self, node: Any, newlines: bool, dropped: list[Any] | None = None) -> list[Any]:
        """The children of ``node``, checking that only blanks stand between them. With
        ``dropped``: a lone ``-`` before a here-document (tree-sitter drops it from ``python -
        <<'EOF'``) is added to it as a word."""
        pos, prev = node.start_byte, None
        words = node.type in ("command", "file_redirect", "herestring_redirect")
        out = []
        for child in node.children:
            joins = words and prev is not None and wordish(prev) and wordish(child)
            raw = self.src[pos : child.start_byte]
            if dropped is not None and child.type == "heredoc_redirect" and raw.split() == [b"-"] \
                    and raw[:1] in (b" ", b"\t") and raw[-1:] in (b" ", b"\t"):
                dash = pos + raw.index(b"-")
                dropped.append(_Span(_At(dash, dash), _At(dash + 1, dash + 1), []))
                raw = b""
            if raw:
                self.gap(pos, child.start_byte, newlines, joins)
            self.token(child)
            pos, prev = max(pos, child.end_byte), child
            out.append(child)
        self.gap(pos, max(pos, node.end_byte), newlines)
        return out

    def token(self, node: Any) -> None:
        """An operator's text is the operator (tree-sitter reads `cat -<<E` as `cat` and `-<<`)."""
        if not node.is_named and self.src[node.start_byte : node.end_byte] != node.type.encode():
            raise Unresolved(f"an operator tree-sitter reads differently ({self.text(node.start_byte, node.end_byte)!r})")

    def joined(self, nodes: list[Any]) -> list[Any]:
        """``nodes`` with the first two merged while they touch (one word for bash: a redirection
        target or here-string tree-sitter cut in two); the first must then end a bash word."""
        while len(nodes) > 1 and not self.text(nodes[0].end_byte, nodes[1].start_byte).replace("\\\n", ""):
            nodes = [_Span(nodes[0], nodes[1]), *nodes[2:]]
        if nodes and not self.ends_word(nodes[0].end_byte):
            raise Unresolved("a word tree-sitter ends where bash does not")
        return nodes

    def starts_word(self, pos: int) -> bool:
        """Whether bash starts a word at ``pos``: after a blank or metacharacter (line
        continuations skipped), or at the start."""
        while self.src[max(pos - 2, 0) : pos] == b"\\\n":
            pos -= 2
        return pos == 0 or self.src[pos - 1 : pos] in BOUNDARY

    def next_char(self, pos: int) -> bytes:
        """The byte bash reads after ``pos`` (line continuations skipped; ``b""`` at the end)."""
        while self.src[pos : pos + 2] == b"\\\n":
            pos += 2
        return self.src[pos : pos + 1]

    def ends_word(self, pos: int) -> bool:
        """Whether bash ends a word at ``pos``: before a blank or metacharacter, or the end."""
        return self.next_char(pos) in (b"", *BOUNDARY)

    def words(self, nodes: list[Any], where: str) -> tuple[list[Word], list[str]]:
        """The bash words of word nodes in source order, and the source text of each run of
        touching nodes (line continuations removed)."""
        nodes = sorted(nodes, key=lambda n: n.start_byte)
        for n in nodes:
            why = reason(n, where)
            if why:
                raise Unresolved(why)
            if n.type == "$":  # tree-sitter reads `$"…"` as `$` and a string
                raise Unresolved(f'locale translation ($"…") {where}')
            if n.type not in WORDISH and not (where == "in a test" and not n.is_named):
                raise Unresolved(f"{n.type.replace('_', ' ')} {where}")
        runs: list[tuple[int, int]] = []  # adjacent nodes are one bash word (the text between
        for n in nodes:  # runs was checked by `children`, or is a redirection)
            if runs and (n.start_byte <= runs[-1][1] or not self.text(runs[-1][1], n.start_byte).replace("\\\n", "")):
                runs[-1] = (runs[-1][0], max(runs[-1][1], n.end_byte))
            else:
                runs.append((n.start_byte, n.end_byte))
        out: list[Word] = []
        for a, b in runs:
            if not self.starts_word(a) or not self.ends_word(b):
                raise Unresolved("a word tree-sitter cuts where bash does not")
            if self.text(a, b).replace("\\\n", "").isdigit() and self.next_char(b) in (b"<", b">"):
                raise Unresolved("a number before a redirection (bash reads it as the file descriptor)")
            out += split_words(self.text(a, b))
        return out, [self.text(a, b).replace("\\\n", "") for a, b in runs]


__all__ = ["ASSIGNMENT", "BOUNDARY", "FD_OPS", "LINE_TOKENS", "NOT_RESOLVED", "READ_OPS", "WORDISH", "WRITE_OPS",
           "Source", "reason", "wordish"]
