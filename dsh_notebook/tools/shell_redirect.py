"""Redirections of a simple command: to literal paths and file descriptors only.

``<`` ``>`` ``>>`` ``&>`` ``&>>`` ``>|`` ``>&N`` ``<&N`` ``>&-`` to a literal target, here-strings
of a literal word, here-documents (:mod:`.shell_heredoc`). A target that is not one literal word
(an expansion, a pattern, ``~``), ``/dev/tcp`` / ``/dev/udp``, ``>&-v`` (bash closes, then reads
``v`` as a word), a file descriptor joined to a word and an operator tree-sitter does not know
(``<>``) leave the line unresolved. Output to anything but ``/dev/null`` or a descriptor sets
:attr:`.ParsedLine.writes`.
"""

from __future__ import annotations

from typing import Any

from .shell_heredoc import heredoc
from .shell_line import Redirect
from .shell_source import FD_OPS, READ_OPS, WRITE_OPS, Source, reason
from .shell_words import Unresolved, one_word

_NETWORK = ("/dev/tcp/", "/dev/udp/")


def literal_target(src: str) -> str:
    """A redirection target as one literal word (raises :class:`Unresolved`)."""
    word = one_word(src)
    if word.dynamic or word.glob:
        raise Unresolved("a pattern or `~` in a redirect")
    if word.text.startswith(_NETWORK):
        raise Unresolved("a network redirect (/dev/tcp, /dev/udp)")
    return word.text


def redirect(walk: Source, node: Any, nesting: int) -> list[Any]:
    """Record one redirection; returns word nodes bash reads as arguments of the command."""
    if node.type == "heredoc_redirect":
        return heredoc(walk, node, nesting)
    kids = walk.children(node, False)
    fd = next((k for k in kids if k.type == "file_descriptor"), None)
    if fd is not None and (not walk.src[fd.start_byte : fd.end_byte].isdigit() or not walk.starts_word(fd.start_byte)):
        raise Unresolved("a redirection joined to a word (bash reads its number as part of the word)")
    if node.type == "herestring_redirect":
        words = walk.joined([k for k in kids if k.is_named])
        if not kids or kids[0].type != "<<<" or not words:
            raise Unresolved("a here-string the parser cannot follow")
        why = reason(words[0], "in a here-string")
        if why:
            raise Unresolved(why)
        walk.line.redirects.append(Redirect("<<<", one_word(walk.text(words[0].start_byte, words[0].end_byte)).text))
        return words[1:]
    if node.type != "file_redirect":
        raise Unresolved(f"{node.type.replace('_', ' ')}")
    ops = [k.type for k in kids if not k.is_named]
    dests = walk.joined([k for k in kids if k.is_named and k.type != "file_descriptor"])
    if len(ops) != 1 or ops[0] not in WRITE_OPS | READ_OPS:
        raise Unresolved(f"a redirection the parser does not know ({' '.join(ops)})")
    op = ops[0]
    if op in (">&-", "<&-"):
        walk.line.redirects.append(Redirect(op, "-"))
        return dests
    if not dests:
        raise Unresolved("a redirection without a target")
    why = reason(dests[0], "in a redirect")
    if why:
        raise Unresolved(why)
    target = literal_target(walk.text(dests[0].start_byte, dests[0].end_byte))
    walk.line.redirects.append(Redirect(op, target))
    fd_dup = op in FD_OPS and (target.isdigit() or target == "-")
    if op in FD_OPS and not fd_dup and (op == "<&" or target.startswith("-") or target.endswith("-")):
        raise Unresolved(f"a redirection `{op}{target}` bash reads as more than a file")  # `>&-v`: close, then `v`
    if op in WRITE_OPS and not fd_dup and target != "/dev/null":
        walk.line.writes = True
    return dests[1:]


__all__ = ["literal_target", "redirect"]
