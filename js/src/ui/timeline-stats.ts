// The inspector's "Stats" view: the `show --stats` tables (requests, tools, turns, decisions by
// permission mode, what the requests carried, the total) as HTML tables with the CLI's exact cells (model/stats-tables.ts),
// their rows from the session's pages (data/pages.ts: computed here for a short session, the
// kernel's for a long one) and drawn only around what is scrolled into view — a table of 33,000
// rows is a screenful of <tr>s. A row's seq is a link that selects its event. Also mounts the
// Timeline and Stats toggles.
import type { PageSource } from "../data/pages";
import { STATS_TABLES, summaryLine, type TableSpec } from "../model/stats-tables";
import type { Totals } from "../model/trajectory";
import type { StatsPage } from "../wire.gen";
import { h, replace } from "./dom";
import { createTimeline } from "./timeline";

const ROW_H = 21; // px, .dsh-stats-box tr
const PAGE = 100;
const MARGIN = 15;

function tableView(spec: TableSpec<never>, pages: PageSource): { el: HTMLElement; draw(): void } {
  const tbody = h("tbody");
  const table = h("table", { class: `dsh-stats-table dsh-stats-${spec.title.replace(/ /g, "-")}`, "data-table": spec.title },
    h("caption", null, spec.title),
    h("thead", null, h("tr", null, ...spec.head.map((c, i) => h("th", { scope: "col", class: spec.right.includes(i) ? "dsh-num" : null }, c)))),
    tbody);
  const box = h("div", { class: "dsh-stats-box", tabindex: 0, role: "region", "aria-label": `${spec.title} table` }, table);
  let drawn = "";
  const page = (offset: number) => pages.get({ kind: "stats", table: spec.table, offset, limit: PAGE });
  function draw(): void {
    const first = page(0);
    if (!first) { if (!drawn) replace(tbody, h("tr", null, h("td", { colspan: spec.head.length, class: "dsh-muted" }, "loading…"))); return; }
    const total = first.total;
    if (!total) { drawn = "none"; replace(tbody, h("tr", null, h("td", { colspan: spec.head.length, class: "dsh-muted" }, "(none)"))); return; }
    const view = box.clientHeight || 320;
    const a = Math.max(0, Math.floor(box.scrollTop / ROW_H) - MARGIN);
    const b = Math.min(total, Math.ceil((box.scrollTop + view) / ROW_H) + MARGIN);
    const rows: HTMLElement[] = [];
    let missing = false;
    for (let i = a; i < b; i++) {
      const p = page(Math.floor(i / PAGE) * PAGE);
      const r = p?.rows?.[i - p.offset] as { seq?: number } | undefined;
      if (!r) { missing = true; rows.push(h("tr", { class: "dsh-stats-pending" }, h("td", { colspan: spec.head.length, class: "dsh-muted" }, "…"))); continue; }
      const cells = spec.cells(r as never);
      const seq = typeof r.seq === "number" ? r.seq : -1; // a mode's row has no event
      rows.push(h("tr", { "data-seq": seq }, ...cells.map((c, k) => h("td", { class: spec.right.includes(k) ? "dsh-num" : null },
        k === 0 && seq >= 0 ? h("button", { class: "dsh-link dsh-seqlink", type: "button", "data-seq": seq, title: `select event #${seq}` }, c) : c))));
    }
    const key = `${a}:${b}:${first.count}:${missing}`;
    if (key === drawn) return;
    drawn = key;
    const pad = (n: number) => (n > 0 ? h("tr", { class: "dsh-stats-pad", "aria-hidden": "true", style: `height:${n * ROW_H}px` }, h("td", { colspan: spec.head.length })) : null);
    replace(tbody, pad(a), ...rows, pad(total - b));
  }
  let raf = 0;
  box.addEventListener("scroll", () => { if (!raf) raf = requestAnimationFrame(() => { raf = 0; draw(); }); }, { passive: true });
  return { el: box, draw };
}

export function createStatsView(pages: PageSource, onSelect: (seq: number) => void): { el: HTMLElement; update(): void } {
  const el = h("div", { class: "dsh-stats", role: "region", "aria-label": "show --stats: requests, tools, turns, decisions by mode" });
  const tables = STATS_TABLES.map((spec) => tableView(spec, pages));
  const sent = h("pre", { class: "dsh-stats-sent" });
  const total = h("div", { class: "dsh-stats-total" });
  el.append(tables[0].el, sent, tables[1].el, tables[2].el, tables[3].el, total);
  el.addEventListener("click", (e) => {
    const b = (e.target as Element | null)?.closest?.("[data-seq]") as HTMLElement | null;
    if (b && b.tagName === "BUTTON") onSelect(Number(b.dataset.seq));
  });
  return {
    el,
    update() {
      for (const t of tables) t.draw();
      const first = pages.get({ kind: "stats", table: "requests", offset: 0, limit: PAGE }) as StatsPage | undefined;
      if (!first) return;
      const lines = (first.sent ?? []).map((l) => l.trim());
      sent.hidden = !lines.length;
      sent.textContent = lines.join("\n");
      const t = first.totals as unknown as Totals;
      total.textContent = `total: ${summaryLine(t)}  (prices as of ${t.pricesAsOf})`;
    },
  };
}

/** The Timeline and Stats toggles of the inspector and their panes (hidden until pressed; a pane
 *  pressed closed is emptied: nothing of it stays in the DOM). */
export function sessionViews(pages: PageSource, onSelect: (seq: number) => void, redraw: () => void): {
  buttons: HTMLElement[]; panes: HTMLElement[]; draw(selected: number, running: boolean): void;
  reveal(seq: number): void; open(which: "timeline" | "stats"): void;
} {
  const tl = createTimeline(pages, onSelect);
  let st: ReturnType<typeof createStatsView> | null = null;
  const stPane = h("div", { class: "dsh-stats-pane" });
  tl.el.hidden = stPane.hidden = true;
  const toggle = (cls: string, label: string, title: string, pane: HTMLElement, onToggle: (open: boolean) => void) => {
    const b = h("button", { class: `dsh-btn ${cls}`, type: "button", "aria-pressed": "false", title }, label);
    b.addEventListener("click", () => { pane.hidden = !pane.hidden; b.setAttribute("aria-pressed", String(!pane.hidden)); onToggle(!pane.hidden); redraw(); });
    return b;
  };
  const buttons = [
    toggle("dsh-f-timeline", "Timeline", "the whole session: turns, requests and tool calls on one time axis (idle gaps cut), tokens and cost", tl.el,
      (open) => { if (!open) tl.clear(); }),
    toggle("dsh-f-stats", "Stats", "the show --stats tables: requests, tools, turns, decisions by mode", stPane, (open) => {
      if (open) { st = createStatsView(pages, onSelect); replace(stPane, st.el); } else { st = null; replace(stPane); }
    }),
  ];
  return {
    buttons,
    panes: [tl.el, stPane],
    draw(selected, running) {
      if (!tl.el.hidden) tl.update(selected, running);
      if (st) st.update();
    },
    reveal(seq) { if (!tl.el.hidden) tl.reveal(seq); },
    open(which) { const i = which === "timeline" ? 0 : 1; if (buttons[i].getAttribute("aria-pressed") !== "true") buttons[i].click(); },
  };
}
