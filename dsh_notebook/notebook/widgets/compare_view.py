"""``%dsh compare A B``: two sessions side by side, aligned by turn and step.

One row per aligned step (the request seq in each session and whether the step agrees); the row
of the first divergence is marked, and below the table the message diff of the two requests
there (removed lines of A in red, added lines of B in green). Plain text in a terminal.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass

from ...analysis.compare import Divergence, StepPair, render_comparison

_STYLE = (
    "<style>.dsh-cmp{font-family:var(--jp-ui-font-family,sans-serif);font-size:13px;"
    "color:var(--jp-ui-font-color0,#1f2328)}"
    ".dsh-cmp table{border-collapse:collapse;margin:6px 0}"
    ".dsh-cmp th,.dsh-cmp td{padding:3px 10px;border-bottom:1px solid var(--jp-border-color2,#e1e4e8);text-align:right}"
    ".dsh-cmp tr.dsh-div td{background:color-mix(in srgb,#d32f2f 14%,transparent);font-weight:600}"
    ".dsh-cmp pre{font-family:var(--jp-code-font-family,monospace);font-size:12px;white-space:pre-wrap;"
    "border:1px solid var(--jp-border-color2,#e1e4e8);border-radius:6px;padding:8px;margin:4px 0}"
    ".dsh-cmp .dsh-del{color:#b3261e}.dsh-cmp .dsh-add{color:#1b6e33}.dsh-cmp .dsh-hunk{color:#5b6470}"
    "</style>"
)


@dataclass
class ComparisonView:
    a_id: str
    b_id: str
    pairs: Sequence[StepPair]
    divergence: Divergence | None

    @property
    def first_divergent_seqs(self) -> tuple[int | None, int | None] | None:
        d = self.divergence
        return None if d is None else (d.a_seq, d.b_seq)

    def __repr__(self) -> str:
        head = [f"A: {self.a_id}", f"B: {self.b_id}"]
        return "\n".join(head + render_comparison(self.pairs, self.divergence, ("A", "B")))

    def _repr_html_(self) -> str:
        esc = html.escape
        rows = []
        for p in self.pairs:
            cls = "" if p.same else ' class="dsh-div"'
            mark = "same" if p.same else "first divergence"
            cells = [str(p.turn), str(p.step), "-" if p.a_seq is None else str(p.a_seq),
                     "-" if p.b_seq is None else str(p.b_seq)]
            rows.append(f"<tr{cls}>" + "".join(f"<td>{c}</td>" for c in cells) + f"<td>{mark}</td></tr>")
        out = [_STYLE, '<div class="dsh-cmp">',
               f"<div><b>A</b> {esc(self.a_id)} &nbsp; <b>B</b> {esc(self.b_id)}</div>",
               "<table><thead><tr><th>turn</th><th>step</th><th>A request</th><th>B request</th><th></th></tr></thead>",
               "<tbody>" + "".join(rows) + "</tbody></table>"]
        d = self.divergence
        if d is None:
            out.append(f"<div>no divergence: the sessions agree on {'the one step' if len(self.pairs) == 1 else f'all {len(self.pairs)} steps'}</div>")
        else:
            out.append(f"<div role=\"status\">first divergence at turn {d.turn} step {d.step}: "
                       f"A seq {esc(str(d.a_seq))}, B seq {esc(str(d.b_seq))} ({esc(d.what)})</div>")
            lines = []
            for line in d.diff:
                cls = ("dsh-hunk" if line.startswith(("@@", "---", "+++"))
                       else "dsh-del" if line.startswith("-") else "dsh-add" if line.startswith("+") else "")
                lines.append(f'<span class="{cls}">{esc(line)}</span>' if cls else esc(line))
            out.append("<pre>" + "\n".join(lines) + "</pre>")
        out.append("</div>")
        return "".join(out)
