// The inspector's session timeline (model/timeline.ts): every turn a group row ("turn N", its wall
// time, tokens and cost), under it one row per request attempt and tool call with its bar on the
// one shared time axis. Zoom with the −/+/Reset buttons or the + − 0 keys, ←/→ (↑/↓) move between
// bars, Enter selects the bar's event in the inspector. Rows are drawn only around the visible
// part (a session of thousands of bars scrolls at once).
import { placeBar, reveal, sessionTimeline, tokensText, zoomView, type SessionTimeline, type TimelineBar, type View } from "../model/timeline";
import { summaryLine } from "../model/stats-tables";
import type { TrajectoryFold } from "../model/trajectory";
import { button as btn, fmtMs, h, replace } from "./dom";
import { uid } from "./a11y";
import { niceStep, redrawOnScroll, zoomKey } from "./axis";

const ROW = 26; // px per row (widget.css .dsh-tl-row)
const MARGIN = 10;

export interface TimelineView {
  el: HTMLElement;
  update(fold: TrajectoryFold, eventCount: number, selected: number, running: boolean): void;
  /** Make the bar of `seq` the active one and scroll it into view (when it has one). */
  reveal(seq: number): void;
}

type Row = { group: SessionTimeline["groups"][number] } | { bar: TimelineBar; index: number };

export function createTimeline(onSelect: (seq: number) => void): TimelineView {
  const id = uid("dsh-tl");
  let tl: SessionTimeline = { span: 1, groups: [], bars: [] };
  let rows: Row[] = [];
  let view: View = { from: 0, to: 1 };
  let fit = true;
  let active = -1; // index into tl.bars
  let selected = -1;
  let key = "";
  const el = h("div", { class: "dsh-timeline", tabindex: 0, role: "group", "aria-label": "session timeline: turns, requests and tool calls on one time axis; + and − zoom, 0 resets, arrows move between bars, Enter selects" });
  const scaleLabel = h("span", { class: "dsh-tl-scale" });
  const total = h("span", { class: "dsh-tl-total" });
  const controls = h("div", { class: "dsh-tl-controls" },
    btn("dsh-tl-out", "−", "zoom out (−)", () => zoom(0.5)), btn("dsh-tl-in", "+", "zoom in (+)", () => zoom(2)),
    btn("dsh-tl-reset", "Reset", "show the whole session (0)", resetZoom),
    scaleLabel, total);
  const axis = h("div", { class: "dsh-tl-axis" });
  const rowsEl = h("div", { class: "dsh-tl-rows", role: "list", "aria-label": "turns, requests and tool calls" });
  const body = h("div", { class: "dsh-tl-body" }, rowsEl);
  el.append(controls, h("div", { class: "dsh-tl-axisrow" }, h("div", { class: "dsh-tl-axislabel" }, "active time (idle gaps between turns cut)"), axis), body);

  function resetZoom(): void {
    fit = true;
    view = { from: 0, to: tl.span };
    draw();
  }
  function zoom(factor: number): void {
    const b = tl.bars[active];
    const anchor = b && b.to >= view.from && b.from <= view.to ? (Math.max(b.from, view.from) + Math.min(b.to, view.to)) / 2 : undefined;
    view = zoomView(view, tl.span, factor, anchor);
    fit = view.to - view.from >= tl.span;
    draw();
  }
  function move(d: number): void {
    if (!tl.bars.length) return;
    active = Math.max(0, Math.min(tl.bars.length - 1, active < 0 ? (d > 0 ? 0 : tl.bars.length - 1) : active + d));
    const b = tl.bars[active];
    view = reveal(view, tl.span, b.from, b.to);
    scrollToRow(rows.findIndex((r) => "bar" in r && r.index === active));
    draw();
  }
  const zoomKeys = { zoomIn: () => zoom(2), zoomOut: () => zoom(0.5), reset: resetZoom };
  function barKey(key: string): boolean {
    if (key === "ArrowRight" || key === "ArrowDown") move(1);
    else if (key === "ArrowLeft" || key === "ArrowUp") move(-1);
    else if (key === "Home") { active = -1; move(1); }
    else if (key === "End") { active = tl.bars.length; move(-1); }
    else if (key === "Enter" && tl.bars[active]) onSelect(tl.bars[active].seq);
    else return false;
    return true;
  }
  el.addEventListener("keydown", (e) => {
    if (e.target instanceof HTMLInputElement || !(zoomKey(e.key, zoomKeys) || barKey(e.key))) return;
    e.preventDefault();
    e.stopPropagation();
  });
  rowsEl.addEventListener("click", (e) => {
    const r = (e.target as Element | null)?.closest?.("[data-bar]") as HTMLElement | null;
    if (!r) return;
    active = Number(r.dataset.bar);
    onSelect(tl.bars[active].seq);
    draw();
  });
  redrawOnScroll(body, () => drawRows());

  function scrollToRow(i: number): void {
    if (i < 0) return;
    const viewH = body.clientHeight || 360;
    if (i * ROW < body.scrollTop || (i + 1) * ROW > body.scrollTop + viewH) body.scrollTop = Math.max(0, i * ROW - viewH / 2);
  }

  function barRow(b: TimelineBar, index: number, i: number): HTMLElement {
    const at = placeBar(view, b.from, b.to);
    const metrics = b.kind === "request" ? tokensText(b.inputTokens, b.outputTokens, b.costUsd) : "";
    const text = `${fmtMs(b.durationMs)}${metrics ? ` · ${metrics}` : ""}`;
    const on = index === active;
    return h("div", { class: `dsh-tl-row dsh-tl-barrow dsh-tl-${b.kind}${on ? " dsh-tl-active" : ""}${b.seq === selected ? " dsh-tl-sel" : ""}`,
      style: `top:${i * ROW}px`, id: `${id}-b${index}`, role: "listitem", "aria-current": b.seq === selected ? "true" : null,
      "data-bar": index, "data-seq": b.seq, "data-kind": b.kind, "data-turn": b.turn, title: `${b.label} — ${b.title} · ${text}` },
      h("span", { class: "dsh-tl-label" }, h("span", { class: "dsh-tl-name" }, b.label), h("span", { class: "dsh-tl-metrics" }, text)),
      h("span", { class: "dsh-tl-track" }, at ? h("span", { class: `dsh-tl-bar dsh-tl-bar-${b.kind} dsh-tl-outcome-${b.outcome}${b.open ? " dsh-tl-open" : ""}`,
        style: `left:${at.left.toFixed(3)}%;width:${at.width.toFixed(3)}%` }) : null));
  }

  function groupRow(g: SessionTimeline["groups"][number], i: number): HTMLElement {
    const at = placeBar(view, g.from, g.to);
    const meta = `${fmtMs(g.durationMs)}${g.running ? " so far" : ""} · ${tokensText(g.inputTokens, g.outputTokens, g.costUsd) || "no requests"}`;
    return h("div", { class: "dsh-tl-row dsh-tl-group", role: "listitem", style: `top:${i * ROW}px`, "data-turn": g.turn, "data-seq": g.seq, title: `turn ${g.turn} · ${meta}` },
      h("span", { class: "dsh-tl-label" }, h("span", { class: "dsh-tl-name" }, `turn ${g.turn}`), h("span", { class: "dsh-tl-metrics dsh-tl-turnmeta" }, meta)),
      h("span", { class: "dsh-tl-track" }, at ? h("span", { class: "dsh-tl-span", style: `left:${at.left.toFixed(3)}%;width:${at.width.toFixed(3)}%` }) : null));
  }

  function drawRows(): void {
    const viewH = body.clientHeight || 360;
    const a = Math.max(0, Math.floor(body.scrollTop / ROW) - MARGIN);
    const b = Math.min(rows.length, Math.ceil((body.scrollTop + viewH) / ROW) + MARGIN);
    const out: HTMLElement[] = [];
    for (let i = a; i < b; i++) {
      const r = rows[i];
      out.push("group" in r ? groupRow(r.group, i) : barRow(r.bar, r.index, i));
    }
    rowsEl.style.height = `${rows.length * ROW}px`;
    replace(rowsEl, ...out);
    if (tl.bars[active]) el.setAttribute("aria-activedescendant", `${id}-b${active}`); else el.removeAttribute("aria-activedescendant");
  }

  function draw(): void {
    const w = view.to - view.from;
    const step = niceStep(w / 6);
    const ticks: HTMLElement[] = [];
    for (let ms = Math.ceil(view.from / step) * step; ms <= view.to; ms += step) {
      const left = ((ms - view.from) / w) * 100;
      if (left <= 92) ticks.push(h("span", { class: "dsh-tl-tick", style: `left:${left.toFixed(2)}%` }, fmtMs(ms)));
    }
    replace(axis, ...ticks);
    const zoomed = tl.span / Math.max(1e-9, w);
    scaleLabel.textContent = `${fit ? "whole session" : `${+zoomed.toFixed(2)}×`} · ${fmtMs(view.from)} – ${fmtMs(view.to)}`;
    el.dataset.zoom = String(zoomed);
    el.dataset.from = String(view.from);
    el.dataset.to = String(view.to);
    drawRows();
  }

  return {
    el,
    update(fold, eventCount, sel, running) {
      selected = sel;
      const k = `${eventCount}|${running ? Date.now() : ""}`;
      if (k !== key) {
        key = k;
        const stats = fold.stats();
        const prevSeq = tl.bars[active]?.seq;
        tl = sessionTimeline(fold, stats, running ? Date.now() : 0);
        rows = [];
        let n = 0;
        for (const g of tl.groups) { rows.push({ group: g }); for (const b of g.bars) rows.push({ bar: b, index: n++ }); }
        active = prevSeq === undefined ? active : tl.bars.findIndex((b) => b.seq === prevSeq);
        view = fit ? { from: 0, to: tl.span } : zoomView(view, tl.span, 1);
        total.textContent = stats.turns.length ? `session: ${summaryLine(stats.totals)}` : "no turns yet";
      }
      draw();
    },
    reveal(seq) {
      const i = tl.bars.findIndex((b) => b.seq === seq);
      if (i < 0) return;
      active = i;
      view = reveal(view, tl.span, tl.bars[i].from, tl.bars[i].to);
      scrollToRow(rows.findIndex((r) => "bar" in r && r.index === i));
      draw();
    },
  };
}
