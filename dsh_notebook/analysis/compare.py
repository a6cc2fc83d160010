"""Compare two sessions (the agent debugger): align them by turn and step, find the first divergence.

Both logs are read as their request attempts (:func:`.requests.request_points`) — the last
attempt of each (turn, step), the one the step went on with. They are walked side by side in
(turn, step) order. At each pair, first the requests' model-visible messages are compared, then
the responses. The first pair that differs is **the divergence**: the first message where the
requests differ (with the surface seq of that message in each log) or, if the requests agree,
the two responses; a session that stops earlier diverges where its steps run out. A fork compared
with its origin agrees on every step before the fork point, and its turns after that point are
numbered as the origin's (:mod:`.align`): a replay of the turn the fork cut is compared with
that turn of the origin, so an exact replay reports no divergence.
"""

from __future__ import annotations

import difflib
import json
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict

from ..session.request_index import RequestIndex, RequestRef
from ..session.requests import RequestPoint, canonical, masked, model_view, request_points
from ..wire.events import AnyEvent, AssistantMessageEvent
from .align import TurnAlignment, align_turns

__all__ = ["Divergence", "StepPair", "compare_events", "compare_main", "render_comparison", "steps_of"]


def steps_of(events: Sequence[AnyEvent]) -> list[RequestPoint]:
    """The last request attempt of each (turn, step), in order."""
    last: dict[tuple[int, int], RequestPoint] = {}
    for point in request_points(events):
        last[(point.turn, point.step)] = point
    return list(last.values())


def _lines(messages: Sequence[Mapping[str, object]], model_ids: Sequence[str]) -> list[str]:
    return [masked(json.dumps(m, ensure_ascii=False, sort_keys=True), model_ids) for m in messages]


@dataclass(frozen=True)
class StepPair:
    """One aligned step: the request seq in A and in B (None: that session has no such step).
    ``turn`` is the comparison's turn; ``a_turn`` / ``b_turn`` the turn in each log's own numbers
    (a fork's turns after its fork point are numbered as its origin's)."""

    turn: int
    step: int
    a_seq: int | None
    b_seq: int | None
    same: bool
    a_turn: int | None = None
    b_turn: int | None = None


class SideView(TypedDict):
    seq: int | None
    requestSeq: int | None


class DivergenceView(TypedDict):
    """``Divergence.to_dict()``: what the JSON output and the comparison widget carry."""

    what: str
    turn: int
    step: int
    a: SideView
    b: SideView
    messageIndex: int | None
    diff: list[str]


@dataclass(frozen=True)
class Divergence:
    """Where A and B first differ. ``what``: ``request`` | ``response`` | ``missing``."""

    what: str
    turn: int
    step: int
    a_request_seq: int | None
    b_request_seq: int | None
    a_seq: int | None  # the first differing event in A (a message's surface seq, or a response)
    b_seq: int | None
    message_index: int | None  # requests: the first differing message
    diff: list[str] = field(default_factory=list)  # unified diff, one message per line

    def to_dict(self) -> DivergenceView:
        return {
            "what": self.what, "turn": self.turn, "step": self.step,
            "a": {"seq": self.a_seq, "requestSeq": self.a_request_seq},
            "b": {"seq": self.b_seq, "requestSeq": self.b_request_seq},
            "messageIndex": self.message_index, "diff": self.diff,
        }


def _request_divergence(
    a: RequestPoint, b: RequestPoint, names: tuple[str, str], mask: Sequence[str]
) -> Divergence | None:
    va, vb = model_view(a.messages, mask), model_view(b.messages, mask)
    ma, mb = [t for _, t in va], [t for _, t in vb]
    if ma == mb:
        return None
    k = 0
    while k < min(len(ma), len(mb)) and ma[k] == mb[k]:
        k += 1
    ia = va[k][0] if k < len(va) else len(a.messages)  # positions in the requests themselves
    ib = vb[k][0] if k < len(vb) else len(b.messages)
    a_seq = a.message_seqs[ia] if ia < len(a.message_seqs) and a.message_seqs[ia] >= 0 else a.seq
    b_seq = b.message_seqs[ib] if ib < len(b.message_seqs) and b.message_seqs[ib] >= 0 else b.seq
    diff = list(difflib.unified_diff(
        ma, mb, f"{names[0]} request/frozen {a.seq}", f"{names[1]} request/frozen {b.seq}",
        n=1, lineterm="",
    ))
    return Divergence("request", a.turn, a.step, a.seq, b.seq, a_seq, b_seq, ib, diff)


def _response_divergence(
    a: RequestRef, b: RequestRef, ea: Sequence[AnyEvent], eb: Sequence[AnyEvent], names: tuple[str, str],
    mask: Sequence[str],
) -> Divergence | None:
    ra, rb = _response(a, ea), _response(b, eb)
    ca = canonical(ra.message) if ra is not None else None
    cb = canonical(rb.message) if rb is not None else None
    if ca is not None and cb is not None and _lines([ca], mask) == _lines([cb], mask):
        return None
    if ca is None and cb is None:
        return None
    diff = list(difflib.unified_diff(
        _lines([ca] if ca else [], mask), _lines([cb] if cb else [], mask),
        f"{names[0]} response", f"{names[1]} response", n=1, lineterm="",
    ))
    return Divergence("response", a.turn, a.step, a.seq, b.seq, a.response_seq, b.response_seq, None, diff)


def _response(ref: RequestRef, events: Sequence[AnyEvent]) -> AssistantMessageEvent | None:
    event = events[ref.response_seq] if ref.response_seq is not None else None
    return event if isinstance(event, AssistantMessageEvent) else None


def _last_per_step(refs: Sequence[RequestRef], align: TurnAlignment) -> list[tuple[int, RequestRef]]:
    """The last request attempt of each (turn, step) as the comparison numbers the turns."""
    last: dict[tuple[int, int], RequestRef] = {}
    for ref in refs:
        if align.keeps(ref.turn, ref.seq):
            last[(align.turn(ref.turn), ref.step)] = ref
    return [(turn, ref) for (turn, _), ref in sorted(last.items(), key=lambda kv: kv[0])]


def compare_events(
    a: Sequence[AnyEvent], b: Sequence[AnyEvent], names: tuple[str, str] = ("A", "B")
) -> tuple[list[StepPair], Divergence | None]:
    """The aligned steps of ``a`` and ``b`` up to and including the first divergence.

    Linear in the logs' size: requests are compared by fingerprint (:mod:`.request_index`) and
    only a pair whose fingerprints differ is materialised and compared message by message."""
    ia, ib = RequestIndex(a), RequestIndex(b)
    al_a, al_b = align_turns(a, b)
    sa, sb = _last_per_step(ia.refs, al_a), _last_per_step(ib.refs, al_b)
    mask = sorted(ia.model_ids | ib.model_ids)  # each session's own model id is no difference
    fa, fb = ia.fingerprints(mask), ib.fingerprints(mask)
    pairs: list[StepPair] = []
    for k in range(max(len(sa), len(sb))):
        ta, pa = sa[k] if k < len(sa) else (0, None)
        tb, pb = sb[k] if k < len(sb) else (0, None)
        if pa is not None and pb is not None and (ta, pa.step) != (tb, pb.step):
            # both go on, but not with the same step: the one at the earlier step has it alone
            pa, pb = (pa, None) if (ta, pa.step) < (tb, pb.step) else (None, pb)
        if pa is None or pb is None:
            here, turn = (pa, ta) if pa is not None else (pb, tb)
            assert here is not None
            lacking = names[0] if pa is None else names[1]
            a_seq, b_seq = (pa.seq if pa else None), (pb.seq if pb else None)
            pairs.append(StepPair(turn, here.step, a_seq, b_seq, False, pa.turn if pa else None, pb.turn if pb else None))
            return pairs, Divergence(
                "missing", turn, here.step, a_seq, b_seq, a_seq, b_seq, None,
                [f"{lacking} has no request at turn {turn} step {here.step}"],
            )
        same = fa[pa.seq].same_messages(fb[pb.seq])
        found = (None if same else _request_divergence(ia.point(pa), ib.point(pb), names, mask)) \
            or _response_divergence(pa, pb, a, b, names, mask)
        if found is not None and found.turn != ta:
            found = Divergence(found.what, ta, found.step, found.a_request_seq, found.b_request_seq, found.a_seq,
                               found.b_seq, found.message_index, found.diff)
        pairs.append(StepPair(ta, pa.step, pa.seq, pb.seq, found is None, pa.turn, pb.turn))
        if found is not None:
            return pairs, found
    return pairs, None


def render_comparison(
    pairs: Sequence[StepPair], divergence: Divergence | None, names: tuple[str, str]
) -> list[str]:
    """The text form of :func:`compare_events` (what ``compare A B`` prints)."""
    out = [f"{'turn':>4} {'step':>4}  {names[0] + ' request':>14}  {names[1] + ' request':>14}"]
    for p in pairs:
        cells = [str(p.a_seq) if p.a_seq is not None else "-", str(p.b_seq) if p.b_seq is not None else "-"]
        own = [f"{n} turn {t}" for n, t in zip(names, (p.a_turn, p.b_turn), strict=True) if t is not None and t != p.turn]
        out.append(f"{p.turn:>4} {p.step:>4}  {cells[0]:>14}  {cells[1]:>14}  {'same' if p.same else 'DIVERGES'}"
                   + (f"  ({', '.join(own)})" if own else ""))
    if divergence is None:
        out.append(f"no divergence: the sessions agree on {_steps(len(pairs))}")
        return out
    d = divergence
    where = {
        "request": f"the requests differ at message {d.message_index}",
        "response": "the requests agree, the responses differ",
        "missing": "one session has no such step",
    }[d.what]
    seq = lambda s: "-" if s is None else str(s)  # noqa: E731
    out.append(f"first divergence: {names[0]} seq {seq(d.a_seq)}, {names[1]} seq {seq(d.b_seq)} "
               f"(turn {d.turn} step {d.step}: {where})")
    out.extend(d.diff)
    return out


def compare_main(args: Any) -> int:
    """``python -m dsh_notebook compare A B [--json]``."""
    from ..session.inspect import resolve_target
    from ..session.persistence import load_log

    logs = [load_log(resolve_target(t)) for t in (args.a, args.b)]
    names = ("A", "B")
    pairs, divergence = compare_events(logs[0].events, logs[1].events, names)
    if args.json:
        print(json.dumps({
            "a": {"sessionId": logs[0].id, "path": str(logs[0].path)},
            "b": {"sessionId": logs[1].id, "path": str(logs[1].path)},
            "steps": [{"turn": p.turn, "step": p.step, "a": p.a_seq, "b": p.b_seq, "same": p.same,
                       "aTurn": p.a_turn, "bTurn": p.b_turn} for p in pairs],
            "divergence": divergence.to_dict() if divergence else None,
        }, ensure_ascii=False))
        return 0
    for name, log in zip(names, logs, strict=True):
        print(f"{name}: {log.id}  {log.path}")
    for line in render_comparison(pairs, divergence, names):
        print(line)
    if divergence is not None:  # the divergent event of each side, one command away
        for name, target, at in ((names[0], args.a, divergence.a_seq), (names[1], args.b, divergence.b_seq)):
            if at is not None:
                print(f"open {name} at seq {at}: python -m dsh_notebook show {shlex.quote(str(target))} --search seq:{at}")
    return 0


def _steps(n: int) -> str:
    return "the one step" if n == 1 else f"all {n} steps"
