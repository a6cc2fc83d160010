"""A second local user racing for a ``local:`` server's address (issue 35 finding 2).

Run as that user with the system's ``python3`` (standard library only): ``racer.py RECORD PARENT``.
Until SIGTERM it watches ``/proc`` for the llama.cpp workers of ``dsh_notebook`` whose parent is
PARENT (the test's process: it never touches the servers of anything else on the machine), and at
once tries to take or reach the address on a worker's command line: it binds that TCP port or Unix
socket (serving a fake llama.cpp that answers every question "pwned" and writes down what it was
sent), connects to it and asks ``GET /props`` without a key, lists and writes into its folder.
``racer.py RECORD serve PATH`` only plays the server on the Unix socket PATH. Each fact is a JSON
line appended to RECORD:

- ``{"ready": true}`` once it watches;
- ``{"saw": PID, "argv": [...]}`` a worker's command line;
- ``{"try": WHAT, "pid": PID, "target": T, "ok": bool, "errno": N, "answer": S}`` an attempt;
- ``{"heard": TEXT}`` what a client sent to one of its fake servers.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import socketserver
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

RECORD, PARENT = sys.argv[1], sys.argv[2]
_lock = threading.Lock()


def note(**fact: Any) -> None:
    with _lock, open(RECORD, "a") as out:
        out.write(json.dumps(fact) + "\n")


class Fake(BaseHTTPRequestHandler):
    """llama.cpp as an impostor plays it: healthy, any window, every answer "pwned"."""

    def log_message(self, *args: Any) -> None:
        pass

    def address_string(self) -> str:
        return "peer"

    def _json(self, body: object) -> None:
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802
        note(heard=f"GET {self.path}")
        if self.path.startswith("/props"):
            self._json({"chat_template": "", "default_generation_settings": {"n_ctx": 4096}})
        else:
            self._json({"status": "ok"})

    def do_POST(self) -> None:  # noqa: N802
        body = self.rfile.read(int(self.headers.get("content-length") or 0)).decode(errors="replace")
        note(heard=f"POST {self.path} {body[:4000]}")
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("connection", "close")
        self.end_headers()
        for delta, finish in (({"role": "assistant", "content": "pwned"}, None), ({}, "stop")):
            chunk = {"id": "x", "object": "chat.completion.chunk", "created": 0, "model": "m",
                     "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")


class UnixFake(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


def serve(server: socketserver.BaseServer) -> None:
    threading.Thread(target=server.serve_forever, daemon=True).start()


def attempt(what: str, pid: int | None, target: str, fn: Any) -> None:
    try:
        answer = fn()
        note(**{"try": what, "pid": pid, "target": target, "ok": True, "errno": None, "answer": answer})
    except OSError as exc:
        note(**{"try": what, "pid": pid, "target": target, "ok": False, "errno": exc.errno, "answer": None})


def bind_tcp(port: int) -> str:
    serve(ThreadingHTTPServer(("127.0.0.1", port), Fake))
    return "serving"


def bind_unix(path: str) -> str:
    serve(UnixFake(path, Fake))
    return "serving"


def ask_props(path: str) -> str:
    with socket.socket(socket.AF_UNIX) as sock:
        sock.settimeout(5)
        sock.connect(path)
        sock.sendall(b"GET /props HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        return sock.recv(200).decode(errors="replace").split("\r\n")[0]


def go_after(pid: int | None, argv: list[str]) -> None:
    if "--port" in argv:
        port = int(argv[argv.index("--port") + 1])
        attempt("bind-tcp", pid, str(port), lambda: bind_tcp(port))
    if "--socket" in argv:
        path = argv[argv.index("--socket") + 1]
        attempt("bind-unix", pid, path, lambda: bind_unix(path))
        attempt("connect-unix", pid, path, lambda: ask_props(path))
        folder = os.path.dirname(path)
        attempt("list", pid, folder, lambda: ",".join(os.listdir(folder)))
        attempt("write", pid, folder, lambda: open(os.path.join(folder, "planted"), "w").close())


def parent_of(pid: str) -> str | None:
    try:
        with open(f"/proc/{pid}/status") as f:
            return next((line.split()[1] for line in f if line.startswith("PPid:")), None)
    except OSError:
        return None


def main() -> None:
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    if PARENT == "serve":
        bind_unix(sys.argv[3])
        note(ready=True)
        signal.pause()
    seen: set[int] = set()
    note(ready=True)
    while True:
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) in seen:
                continue
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    argv = [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
            except OSError:
                continue
            if "dsh_notebook.models.local_worker" in argv and parent_of(entry) == PARENT:
                seen.add(int(entry))
                note(saw=int(entry), argv=argv)
                go_after(int(entry), argv)
        time.sleep(0.002)


if __name__ == "__main__":
    main()
