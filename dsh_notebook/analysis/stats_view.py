"""``show --stats``: the text table and the ``--json`` object of :mod:`dsh_notebook.analysis.stats`,
and the one-line summary (``%dsh`` cells, ``run``)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from .stats import SessionStats, Totals, session_stats
from .stats_model import ToolStats


def fmt_ms(ms: int | None) -> str:
    if ms is None:
        return "-"
    if ms < 1000:
        return f"{ms} ms"
    if ms < 60_000:
        return f"{ms / 1000:.2f} s"
    return f"{ms // 60_000}m{(ms % 60_000) / 1000:04.1f}s"


def fmt_tokens(n: int | None) -> str:
    if n is None:
        return "-"
    return f"{n / 1000:.1f}k" if n >= 10_000 else f"{n:,}"


def fmt_cost(usd: float | None) -> str:
    if usd is None:
        return "cost n/a"
    return f"${usd:.4f}" if usd < 1 else f"${usd:.2f}"


def _result(t: ToolStats) -> str:
    """A call's outcome: its error code, a command's exit code, ok — or open while it runs."""
    if t.end_time is None:
        return "open"
    return t.error or (f"exit {t.exit_code}" if t.exit_code is not None else "ok")


def _decided(t: ToolStats) -> str:
    """``allow by mode (plan)``: a call's decision, what made it, in which mode."""
    if t.decision is None:
        return "-"
    return f"{t.decision} by {t.decider or '?'}" + (f" ({t.mode})" if t.mode else "")


def fmt_fraction(f: float | None) -> str:
    return "-" if f is None else f"{f * 100:.1f}%"


def summary_line(t: Totals) -> str:
    """``2.41 s · 3 requests · 1.2k in / 310 out tokens · $0.0012 · context 4.1%``."""
    parts = [fmt_ms(t.duration_ms), f"{t.requests} request{'s' if t.requests != 1 else ''}"]
    if t.tool_calls:
        parts.append(f"{t.tool_calls} tool call{'s' if t.tool_calls != 1 else ''}")
    tokens = f"{fmt_tokens(t.input_tokens)} in / {fmt_tokens(t.output_tokens)} out tokens"
    if t.cached_input_tokens:
        tokens += f" ({fmt_tokens(t.cached_input_tokens)} cached)"
    parts += [tokens, fmt_cost(t.cost_usd)]
    if t.context_used is not None:
        parts.append(f"context {fmt_fraction(t.context_used)}")
    if t.context_window and t.window_source:
        parts.append(f"window {fmt_tokens(t.context_window)} ({t.window_source})")
    return " · ".join(parts)


def _table(title: str, head: Sequence[str], rows: list[list[str]], right: set[int]) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(head)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()

    return [title, line(head), *(line(r) for r in rows)] if rows else [title, "  (none)"]


def format_stats(stats: SessionStats) -> str:
    reqs = [[str(r.seq), f"{r.turn}.{r.step}.{r.attempt}", f"{r.provider}:{r.model}", r.outcome + (f" {r.error}" if r.error else ""),
             fmt_ms(r.first_byte_ms), fmt_ms(r.ttft_ms), fmt_ms(r.duration_ms), fmt_tokens(r.input_tokens),
             fmt_tokens(r.cached_input_tokens), fmt_tokens(r.output_tokens),
             "-" if r.input_tokens is None else fmt_cost(r.cost_usd).replace("cost n/a", "n/a"),
             fmt_fraction(r.context_used)] for r in stats.requests]
    tools = [[str(t.seq), f"{t.turn}.{t.step}", t.call_id, t.name, fmt_ms(t.duration_ms), fmt_ms(t.approval_wait_ms),
              t.approval or "-", _decided(t), _result(t)] for t in stats.tools]
    turns = [[str(t.turn), t.reason or "running", str(len(t.steps)), str(t.requests), str(t.tool_calls),
              fmt_ms(t.duration_ms), fmt_tokens(t.input_tokens), fmt_tokens(t.output_tokens),
              fmt_cost(t.cost_usd).replace("cost n/a", "n/a"), fmt_fraction(t.context_used)] for t in stats.turns]
    lines = _table("requests", ["SEQ", "T.S.A", "MODEL", "OUTCOME", "1ST BYTE", "TTFT", "DURATION", "IN", "CACHED",
                                "OUT", "COST", "CONTEXT"], reqs, {0, 4, 5, 6, 7, 8, 9, 10, 11})
    lines += sent_lines(stats)
    lines += ["", *_table("tools", ["SEQ", "T.S", "CALL", "NAME", "DURATION", "APPROVAL WAIT", "APPROVAL", "DECIDED",
                                    "RESULT"], tools, {0, 4, 5})]
    lines += ["", *_table("turns", ["TURN", "REASON", "STEPS", "REQUESTS", "TOOLS", "DURATION", "IN", "OUT", "COST",
                                    "CONTEXT"], turns, {0, 2, 3, 4, 5, 6, 7, 8, 9})]
    modes = [[d.mode, str(d.decisions), str(d.allow), str(d.deny), str(d.cancelled), str(d.asked), str(d.by_rule),
              str(d.by_grant), str(d.by_mode), str(d.by_user)] for d in stats.decisions]
    lines += ["", *_table("decisions by mode", ["MODE", "DECISIONS", "ALLOW", "DENY", "CANCELLED", "ASKED", "BY RULE",
                                                "BY GRANT", "BY MODE", "BY USER"], modes, set(range(1, 10)))]
    lines += ["", f"total: {summary_line(stats.totals)}  (prices as of {stats.totals.prices_as_of})"]
    return "\n".join(lines) + "\n"


def sent_lines(stats: SessionStats) -> list[str]:
    """What the requests carried, one line per change: ``sent from 1.1.1: max_tokens=64 temperature=0.2``."""
    out: list[str] = []
    last: tuple[int | None, str] | None = None
    for r in stats.requests:
        options = " ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in r.options.items())
        now = (r.max_tokens, options)
        if now != last and (r.max_tokens is not None or options):
            limit = f"max_tokens={r.max_tokens}" if r.max_tokens is not None else "no max_tokens"
            out.append(f"  sent from {r.turn}.{r.step}.{r.attempt}: {limit}" + (f" {options}" if options else ""))
        last = now
    return out


def stats_main(args: argparse.Namespace) -> int:
    """``show --stats ID_OR_PATH [--json] [--context-window N]``."""
    from ..session.inspect import inspect_log, resolve_target

    report = inspect_log(resolve_target(args.target))
    for w in report.warnings:
        print(f"warning: {w}", file=sys.stderr)
    stats = session_stats(report.events, context_window_override=getattr(args, "context_window", None))
    if getattr(args, "json", False):
        payload = stats.to_json_dict()
        json.dump(payload, sys.stdout, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(format_stats(stats))
    return 0
