"""Here-documents, checked against bash's own rules rather than tree-sitter's reading.

A here-document is resolved when its delimiter is a literal word, nothing else on the line of
its ``<<`` is more than words, redirections and the rest of a pipeline or list — all of it on that
line (``cat <<EOF |`` with the pipeline going on below: tree-sitter takes the delimiter's line
for the next command, bash takes it for the body) —, no other
here-document starts on that line, its body is not expanded by bash (a quoted delimiter, or a
body without ``$``, backquote or backslash — a backslash-newline would join a line with the
delimiter's), and bash's end of the body — the first line that is exactly the delimiter (leading
tabs removed for ``<<-``) — is where tree-sitter ends it too.
"""

from __future__ import annotations

from typing import Any

from .shell_line import Redirect
from .shell_source import LINE_TOKENS, Source
from .shell_words import Unresolved, one_word


def _rest_of_line(walk: Source, node: Any, kids: list[Any], nesting: int) -> tuple[list[Any], int]:
    """Walk what tree-sitter put between the delimiter and the body; (word nodes, end offset)."""
    extra: list[Any] = []
    pos = kids[1].end_byte
    for index, child in enumerate(node.children):
        if index < 2 or child.type in ("heredoc_body", "heredoc_end"):
            continue
        walk.gap(pos, child.start_byte, False)
        pos = child.end_byte
        name = node.field_name_for_child(index)
        if name == "argument":
            extra.append(child)
        elif name == "redirect":
            if child.type == "heredoc_redirect":
                raise Unresolved("two here-documents on one line")
            extra += walk.redirect(child, nesting)
        elif child.type in ("&&", "||", "comment"):
            continue
        elif name == "right":
            walk.statement(child, True, nesting + 1)
        elif child.type == "pipeline":
            for part in walk.children(child, True):
                if part.is_named:
                    walk.statement(part, False, nesting + 1)
                elif part.type not in LINE_TOKENS:
                    raise Unresolved(f"`{part.type}` after a here-document")
        else:
            raise Unresolved(f"{child.type.replace('_', ' ')} after a here-document")
    return extra, pos


def heredoc(walk: Source, node: Any, nesting: int) -> list[Any]:
    """Check one ``heredoc_redirect``; returns word nodes bash reads as arguments of the command."""
    kids = node.children
    if len(kids) < 3 or kids[0].type not in ("<<", "<<-") or kids[1].type != "heredoc_start" \
            or kids[-1].type != "heredoc_end":
        raise Unresolved("a here-document the parser cannot follow")
    strip_tabs = kids[0].type == "<<-"
    walk.gap(node.start_byte, kids[0].start_byte, False)
    walk.token(kids[0])  # `cat -<<E`: tree-sitter's `<<` token holds the `-`
    walk.gap(kids[0].end_byte, kids[1].start_byte, False)
    if not walk.ends_word(kids[1].end_byte):
        raise Unresolved("a here-document delimiter tree-sitter ends where bash does not")
    raw = walk.text(kids[1].start_byte, kids[1].end_byte)
    try:
        delim = one_word(raw)
    except Unresolved as exc:
        raise Unresolved(f"{exc} in a here-document delimiter") from None
    quoted = any(c in raw for c in "'\"\\")
    extra, pos = _rest_of_line(walk, node, kids, nesting)
    src = walk.src
    nl = src.find(b"\n", pos)  # bash reads the body from the line after the `<<` line
    if nl < 0 or src[pos:nl].strip(b" \t") or nl in walk.heredoc_lines or b"\n" in src[node.start_byte : pos]:
        raise Unresolved("a here-document whose body the parser may place differently")
    walk.heredoc_lines.add(nl)
    start = line = nl + 1
    end = kids[-1]
    want = delim.text.encode("utf-8")
    while True:
        stop = src.find(b"\n", line)
        text = src[line : len(src) if stop < 0 else stop]
        check = text.lstrip(b"\t") if strip_tabs else text
        if check == want:
            break
        if stop < 0:
            raise Unresolved("a here-document without its end line")
        line = stop + 1
    if end.start_byte != line + len(text) - len(check) or end.end_byte != line + len(text) \
            or node.end_byte != end.end_byte:
        raise Unresolved("a here-document that ends elsewhere for bash")
    body = src[start:line]
    if not quoted and any(c in body for c in b"$`\\"):
        raise Unresolved("a here-document with expansions")
    walk.line.redirects.append(Redirect("<<-" if strip_tabs else "<<", delim.text))
    return extra


__all__ = ["heredoc"]
