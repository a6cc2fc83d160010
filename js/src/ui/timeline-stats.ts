// The inspector's "Stats" view: the `show --stats` tables (requests, tools, turns, decisions by
// permission mode, what the requests carried, the total) as HTML tables with the CLI's exact cells (model/stats-tables.ts);
// a row's seq is a link that selects its event. Also mounts the Timeline and Stats toggles.
import { sentLines, statsTables, summaryLine } from "../model/stats-tables";
import type { TrajectoryFold } from "../model/trajectory";
import { h, replace } from "./dom";
import { createTimeline } from "./timeline";

export function createStatsView(onSelect: (seq: number) => void): { el: HTMLElement; update(fold: TrajectoryFold, eventCount: number): void } {
  const el = h("div", { class: "dsh-stats", role: "region", "aria-label": "show --stats: requests, tools, turns, decisions by mode" });
  let key = "";
  el.addEventListener("click", (e) => {
    const b = (e.target as Element | null)?.closest?.("[data-seq]") as HTMLElement | null;
    if (b && b.tagName === "BUTTON") onSelect(Number(b.dataset.seq));
  });
  return {
    el,
    update(fold, eventCount) {
      if (String(eventCount) === key) return;
      key = String(eventCount);
      const stats = fold.stats();
      const tables = statsTables(stats).map((t) => h("table", { class: `dsh-stats-table dsh-stats-${t.title.replace(/ /g, "-")}`, "data-table": t.title },
        h("caption", null, t.title),
        h("thead", null, h("tr", null, ...t.head.map((c, i) => h("th", { scope: "col", class: t.right.includes(i) ? "dsh-num" : null }, c)))),
        h("tbody", null, ...(t.rows.length ? t.rows.map((r, ri) => h("tr", { "data-seq": t.seqs[ri] }, ...r.map((c, i) => h("td", { class: t.right.includes(i) ? "dsh-num" : null },
          i === 0 && t.seqs[ri] >= 0 ? h("button", { class: "dsh-link dsh-seqlink", type: "button", "data-seq": t.seqs[ri], title: `select event #${t.seqs[ri]}` }, c) : c))))
          : [h("tr", null, h("td", { colspan: t.head.length, class: "dsh-muted" }, "(none)"))]))));
      const sent = sentLines(stats);
      replace(el, tables[0], sent.length ? h("pre", { class: "dsh-stats-sent" }, sent.map((l) => l.trim()).join("\n")) : null, tables[1], tables[2], tables[3],
        h("div", { class: "dsh-stats-total" }, `total: ${summaryLine(stats.totals)}  (prices as of ${stats.totals.pricesAsOf})`));
    },
  };
}

/** The Timeline and Stats toggles of the inspector and their panes (hidden until pressed). */
export function sessionViews(onSelect: (seq: number) => void, redraw: () => void): {
  buttons: HTMLElement[]; panes: HTMLElement[]; draw(fold: TrajectoryFold, eventCount: number, selected: number, running: boolean): void;
  reveal(seq: number): void; open(which: "timeline" | "stats"): void;
} {
  const tl = createTimeline(onSelect);
  const st = createStatsView(onSelect);
  tl.el.hidden = st.el.hidden = true;
  const toggle = (cls: string, label: string, title: string, pane: HTMLElement) => {
    const b = h("button", { class: `dsh-btn ${cls}`, type: "button", "aria-pressed": "false", title }, label);
    b.addEventListener("click", () => { pane.hidden = !pane.hidden; b.setAttribute("aria-pressed", String(!pane.hidden)); redraw(); });
    return b;
  };
  const buttons = [toggle("dsh-f-timeline", "Timeline", "the whole session: turns, requests and tool calls on one time axis, tokens and cost", tl.el),
    toggle("dsh-f-stats", "Stats", "the show --stats tables: requests, tools, turns", st.el)];
  return {
    buttons,
    panes: [tl.el, st.el],
    draw(fold, eventCount, selected, running) {
      if (!tl.el.hidden) tl.update(fold, eventCount, selected, running);
      if (!st.el.hidden) st.update(fold, eventCount);
    },
    reveal(seq) { if (!tl.el.hidden) tl.reveal(seq); },
    open(which) { const i = which === "timeline" ? 0 : 1; if (buttons[i].getAttribute("aria-pressed") !== "true") buttons[i].click(); },
  };
}
