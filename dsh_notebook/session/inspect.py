"""``python -m dsh_notebook show`` and ``sessions`` (DESIGN §6).

``show ID_OR_PATH`` prints one readable line per event (seq, time, type, key fields), then what
crash repair would append on resume (marked ``+``); ``--json`` prints the log's events as JSON
lines; ``--messages`` prints ONE JSON array in OpenAI Chat Completions form: exactly the messages
the next request of that session would carry (derived, then repaired) — for any log, however
broken (see :mod:`.lenient`). Warnings go to stderr. The log file is never written.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from glob import escape as glob_escape
from pathlib import Path
from typing import Any

from ..config import settings_from_env
from ..errors import LogFormatError
from ..redaction import redact, redact_data
from ..wire.base import tag
from ..wire.events import (
    AnyEvent,
    ApprovalAsked,
    ApprovalDecided,
    AssistantAttempt,
    AssistantMessageEvent,
    ContextCompacted,
    InboxSpliced,
    LlmRetry,
    RequestFrozen,
    RequestHeader,
    StepEnd,
    StepStart,
    SystemMessageEvent,
    ToolCall,
    ToolResult,
    TurnEnd,
    TurnStart,
    UserMessageEvent,
)
from .lenient import inspect_log
from .store import SessionStore

__all__ = ["describe_event", "refuse_overwriting_a_log", "resolve_target", "sessions_main", "show_main"]


def resolve_target(target: str) -> Path:
    """A path to a log, or a session id (or a unique prefix of one, 4+ characters) under
    ``$DSH_HOME/sessions``. A directory, a FIFO or a device is refused without being opened;
    a prefix that several sessions share is ``AMBIGUOUS_SESSION`` naming them."""
    path = Path(target).expanduser()
    if path.is_file():
        return path
    looks_like_id = bool(target) and "/" not in target and not target.endswith(".jsonl")
    sessions = settings_from_env().sessions_dir
    by_id = sessions / f"{target}.jsonl"
    if looks_like_id and by_id.is_file():
        return by_id
    if looks_like_id and not path.exists() and (by_id.exists() or by_id.is_symlink()):
        path = by_id  # in the store, but not a regular file: say what it is (below)
    if path.exists() or path.is_symlink():
        kind = "a directory" if path.is_dir() else "a FIFO" if path.is_fifo() else "not a regular file"
        raise LogFormatError(f"{path} is {kind}, not a session log (a .jsonl file or a session id)",
                             code="LOG_NOT_FOUND")
    if not looks_like_id:
        raise LogFormatError(f"no session log at {path}", code="LOG_NOT_FOUND")
    matches = sorted(p for p in sessions.glob(f"{glob_escape(target)}*.jsonl") if p.is_file()) if sessions.is_dir() else []
    if len(matches) == 1 and len(target) >= 4:
        return matches[0]
    if len(matches) > 1:
        names = ", ".join(p.stem for p in matches[:5]) + (f" and {len(matches) - 5} more" if len(matches) > 5 else "")
        raise LogFormatError(f"{target!r} is the start of {len(matches)} sessions ({names}); give more of the id",
                             code="AMBIGUOUS_SESSION")
    raise LogFormatError(
        f"no session {target!r} (looked for {by_id}); `python -m dsh_notebook sessions` lists them",
        code="LOG_NOT_FOUND",
    )


def refuse_overwriting_a_log(output: str) -> None:
    """An output file (``export-html -o``) that is a session log is ``OUTPUT_IS_A_LOG``: writing
    the page there would replace the session's only record."""
    path = Path(output).expanduser()
    if not path.is_file():
        return
    try:
        with open(path, "rb") as f:
            first = f.readline(4096)
        header = json.loads(first)
    except (OSError, ValueError):
        return
    if isinstance(header, dict) and tag(header) == "session":
        raise LogFormatError(f"{path} is a session log ({header.get('id')!r}); it is never overwritten: "
                             "name another file for the page, e.g. -o session.html", code="OUTPUT_IS_A_LOG")


def _short(text: str, n: int = 72) -> str:
    text = text.replace("\n", "\\n")
    return json.dumps(text[: n - 3] + "..." if len(text) > n else text, ensure_ascii=False)


def _fields(ev: AnyEvent) -> str:
    if isinstance(ev, TurnStart):
        return f"turn={ev.turn}"
    if isinstance(ev, TurnEnd):
        r = ev.reason
        extra = f" cause={r.cause}" if r.cause else ""
        extra += f" error={r.error.code}" if r.error else ""
        extra += f" limit={r.limit}" if r.limit is not None else ""
        return f"turn={ev.turn} reason={r.kind}{extra}"
    if isinstance(ev, StepStart | StepEnd):
        return f"turn={ev.turn} step={ev.step}"
    if isinstance(ev, UserMessageEvent):
        src = ev.message.source
        who = f" plugin={src.plugin}" if src.kind == "plugin" else ""
        who += f" replaces {ev.surface_op.start_seq}..{ev.surface_op.end_seq}" if ev.surface_op else ""
        return f"turn={ev.turn}{who} {_short(''.join(b.text for b in ev.message.content))}"
    if isinstance(ev, SystemMessageEvent):
        return f"{len(''.join(b.text for b in ev.message.content))} chars"
    if isinstance(ev, AssistantMessageEvent):
        m = ev.message
        calls = " ".join(f"{c.name}({c.id})" for c in m.tool_calls)
        parts = [f"turn={ev.turn} step={ev.step}"]
        if m.text:
            parts.append(_short(m.text, 60))
        if calls:
            parts.append(f"calls: {calls}")
        if ev.interrupted:
            parts.append("interrupted")
        if ev.usage:
            parts.append(f"tokens in={ev.usage.input_tokens} out={ev.usage.output_tokens}")
        return " ".join(parts)
    if isinstance(ev, AssistantAttempt):
        return f"turn={ev.turn} step={ev.step} attempt={ev.attempt} error={ev.error.code if ev.error else '-'}"
    if isinstance(ev, ToolCall):
        return f"{ev.name}({ev.call_id}) {_short(ev.arguments, 60)}"
    if isinstance(ev, ToolResult):
        tm = ev.message
        flag = f" error={ev.error.code}" if ev.error else (" isError" if tm.is_error else "")
        op = f" replaces {ev.surface_op.start_seq}..{ev.surface_op.end_seq}" if ev.surface_op else ""
        return f"{tm.tool_call_id}{flag}{op} {_short(tm.text, 60)}"
    if isinstance(ev, RequestHeader):
        return f"reason={ev.reason} tools={len(ev.tools)} config={json.dumps(ev.config)[:60]}"
    if isinstance(ev, RequestFrozen):
        return f"{ev.provider}:{ev.model} turn={ev.turn} step={ev.step} attempt={ev.attempt} messages={len(ev.message_seqs)}"
    if isinstance(ev, InboxSpliced):
        return f"target={ev.target} start={ev.start} removed={ev.removed_count} inserted={len(ev.inserted)} {ev.outcome or ''}".rstrip()
    if isinstance(ev, ApprovalAsked):
        return f"{ev.name}({ev.call_id}) {ev.reason or ''}".rstrip()
    if isinstance(ev, ApprovalDecided):
        rule = f" rule={ev.rule}" if ev.rule else ""
        grant = f' grant={ev.grant.tool}:"{ev.grant.pattern}"' if ev.grant else ""
        return f"{ev.name}({ev.call_id}) {ev.decision} by={ev.by or '-'}{rule}{grant}"
    if isinstance(ev, ContextCompacted):
        window = f"/{ev.context_window}" if ev.context_window else ""
        return (f"trigger={ev.trigger} replaced {ev.replaced} nodes {ev.start_seq}..{ev.end_seq} by #{ev.summary_seq} "
                f"tokens~{ev.tokens_before}->{ev.tokens_after}{window} ({ev.provider}:{ev.model})")
    if isinstance(ev, LlmRetry):
        return f"attempt={ev.attempt} error={ev.error.code} delay={ev.delay_ms}ms"
    return ""


def describe_event(ev: AnyEvent, mark: str = " ") -> str:
    """One readable line: seq, local time, type, key fields (and provenance)."""
    t = time.strftime("%H:%M:%S", time.localtime(ev.time / 1000)) + f".{ev.time % 1000:03d}"
    src = f"  → {list(ev.source_event_seqs)}" if ev.source_event_seqs else ""  # cites (as the inspector's →)
    return f"{mark}{ev.seq:>6}  {t}  {ev.type:<20} {_fields(ev)}{src}".rstrip()


def show_main(args: argparse.Namespace, chat_format: Callable[[Any], Any] | None = None) -> int:
    """``show``; with ``--messages``, ``chat_format`` turns the next request's messages into the
    provider's chat format (the CLI passes the models' converter: the session sits below models)."""
    path = resolve_target(args.target)
    report = inspect_log(path)
    for w in report.warnings:
        print(f"warning: {w}", file=sys.stderr)
    out = sys.stdout
    if getattr(args, "messages", False) and chat_format is not None:
        json.dump(redact_data(chat_format(report.next_messages)), out, ensure_ascii=False, indent=2)
        out.write("\n")
        for r in report.repairs:
            print(f"repair: {r.kind} {r.call_id!r} at message {r.index}: {r.detail}", file=sys.stderr)
        return 0
    if getattr(args, "json", False):
        for line in report.lines:  # older logs may hold keys in tool-call arguments: masked here
            out.write((line if redact(line) == line else _redacted_line(line)) + "\n")
        return 0
    h = report.header
    created = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(h.created_at / 1000))
    count = report.events[-1].seq + 1 if report.events else 0  # "N events": the last seq + 1, as everywhere
    out.write(f"session {h.id}  cwd={h.cwd or '-'}  created {created}  {count:,} events  {path}\n")
    for ev in report.events:
        out.write(redact(describe_event(ev)) + "\n")
    if report.closers:
        out.write("crash repair on resume would append:\n")
        for ev in report.closers:
            out.write(describe_event(ev, "+") + "\n")
    return 0


def _fmt_row(cols: list[Any], widths: list[int]) -> str:
    return "  ".join(str(c).ljust(w) for c, w in zip(cols, widths, strict=False)).rstrip()


def sessions_main(args: argparse.Namespace) -> int:
    settings = settings_from_env()
    rows = SessionStore(settings.home).list_saved()
    if not rows:
        print(f"no saved sessions in {settings.sessions_dir}")
        return 0
    widths = [16, 11, 5, 19, 6, 0]
    print(_fmt_row(["ID", "STATUS", "TURNS", "LAST ACTIVITY", "EVENTS", "TITLE"], widths))
    for s in rows:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(s.last_activity_ms / 1000))
        print(_fmt_row([s.id, s.status, s.turns, when, s.event_count, s.title], widths))
    return 0


def _redacted_line(line: str) -> str:
    try:
        return json.dumps(redact_data(json.loads(line)), ensure_ascii=False)
    except (ValueError, RecursionError):
        return redact(line)
