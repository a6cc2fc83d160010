// The inspector's session timeline: every turn a group row ("turn N", its wall time, tokens and
// cost), under it one row per request attempt and tool call with its bar on the one shared time
// axis. The rows are the session's pages (`timeline`, data/pages.ts), drawn only around the part
// scrolled into view; the axis keeps the busy spans and cuts the idle gaps out (model/axis-cut.ts),
// each cut marked with how long it was. Zoom with the −/+/Reset buttons or the + − 0 keys, ←/→
// (↑/↓) move between bars, Enter selects the bar's event in the inspector.
import type { PageSource } from "../data/pages";
import { breaksIn, cutAxis, toAxis, type CutAxis } from "../model/axis-cut";
import { summaryLine } from "../model/stats-tables";
import { placeBar, reveal, tokensText, zoomView, type View } from "../model/timeline";
import type { RequestStats, ToolStats, Totals, TurnStats } from "../model/trajectory";
import type { TimelinePage, TimelineRow } from "../wire.gen";
import { uid } from "./a11y";
import { niceStep, redrawOnScroll, zoomKey } from "./axis";
import { button as btn, fmtMs, h, replace } from "./dom";
import { icon } from "./icons";

const ROW = 26; // px per row (widget.css .dsh-tl-row)
const MARGIN = 10;
const PAGE = 200;

export interface TimelineView {
  el: HTMLElement;
  update(selected: number, running: boolean): void;
  /** Make the bar of `seq` the active one and scroll it into view (when it has one). */
  reveal(seq: number): void;
  /** Forget what was drawn (the pane closed): nothing of it stays in the DOM. */
  clear(): void;
}

interface Bar { kind: "request" | "tool"; seq: number; turn: number; start: number; end: number; open: boolean; label: string; title: string;
  outcome: string; durationMs: number; metrics: string }

function barOf(row: TimelineRow, now: number): Bar {
  if (row.kind === "request") {
    const r = row.stats as unknown as RequestStats;
    const end = r.endTime ?? Math.max(now, r.sentTime);
    return { kind: "request", seq: r.seq, turn: r.turn, start: r.sentTime, end, open: r.endTime === null, durationMs: end - r.sentTime,
      label: `request #${r.seq}${r.attempt > 1 ? ` · try ${r.attempt}` : ""}`,
      title: `turn ${r.turn} step ${r.step} attempt ${r.attempt} · ${r.provider}:${r.model} · ${r.outcome}${r.error ? ` ${r.error}` : ""}`,
      outcome: r.outcome, metrics: tokensText(r.inputTokens, r.outputTokens, r.costUsd) };
  }
  const t = row.stats as unknown as ToolStats;
  const end = t.endTime ?? Math.max(now, t.startTime);
  return { kind: "tool", seq: t.seq, turn: t.turn, start: t.startTime, end, open: t.endTime === null, durationMs: end - t.startTime,
    label: `${t.name} · ${t.callId}`, title: `tool ${t.name} (${t.callId})${t.approval ? ` · approval: ${t.approval}` : ""}${t.error ? ` · ${t.error}` : ""}`,
    outcome: t.error ?? (t.endTime === null ? "open" : "done"), metrics: "" };
}

export function createTimeline(pages: PageSource, onSelect: (seq: number) => void): TimelineView {
  const id = uid("dsh-tl");
  let axis: CutAxis = cutAxis([]);
  let axisKey = "";
  let view: View = { from: 0, to: 1 };
  let fit = true;
  let active = -1; // bar index (among the session's bars)
  let activeSeq = -1;
  let selected = -1;
  let now = 0;
  let first: TimelinePage | undefined;
  const el = h("div", { class: "dsh-timeline", tabindex: 0, role: "group", "aria-label": "session timeline: turns, requests and tool calls on one time axis, idle gaps cut; + and − zoom, 0 resets, arrows move between bars, Enter selects" });
  const scaleLabel = h("span", { class: "dsh-tl-scale" });
  const total = h("span", { class: "dsh-tl-total" });
  const controls = h("div", { class: "dsh-tl-controls" },
    btn("dsh-tl-out", "−", "zoom out (−)", () => zoom(0.5)), btn("dsh-tl-in", "+", "zoom in (+)", () => zoom(2)),
    btn("dsh-tl-reset", "Reset", "show the whole session (0)", resetZoom),
    scaleLabel, total);
  const axisEl = h("div", { class: "dsh-tl-axis" });
  const axisLabel = h("div", { class: "dsh-tl-axislabel" }, "active time");
  const rowsEl = h("div", { class: "dsh-tl-rows", role: "list", "aria-label": "turns, requests and tool calls" });
  const body = h("div", { class: "dsh-tl-body" }, rowsEl);
  el.append(controls, h("div", { class: "dsh-tl-axisrow" }, axisLabel, axisEl), body);

  const page = (offset: number, withAxis = false) => pages.get({ kind: "timeline", offset, limit: PAGE, axis: withAxis || undefined });
  /** Row `i` of the timeline, when its page is held (the first page is the one with the axis). */
  const rowAt = (i: number): TimelineRow | undefined => {
    const p = i < PAGE ? page(0, true) : page(Math.floor(i / PAGE) * PAGE);
    return p?.rows?.[i - p.offset];
  };

  function resetZoom(): void {
    fit = true;
    view = { from: 0, to: axis.span };
    draw();
  }
  function zoom(factor: number): void {
    const b = activeBar();
    const a0 = b ? toAxis(axis, b.start) : undefined, a1 = b ? toAxis(axis, b.end) : undefined;
    const anchor = a0 !== undefined && a1 !== undefined && a1 >= view.from && a0 <= view.to ? (Math.max(a0, view.from) + Math.min(a1, view.to)) / 2 : undefined;
    view = zoomView(view, axis.span, factor, anchor);
    fit = view.to - view.from >= axis.span;
    draw();
  }
  /** The active bar, when its row is held. */
  function activeBar(): Bar | undefined {
    if (active < 0 || !first) return undefined;
    const r = rowOfBar.get(active);
    const row = r !== undefined ? rowAt(r) : undefined;
    return row && row.kind !== "turn" ? barOf(row, now) : undefined;
  }
  const rowOfBar = new Map<number, number>(); // bars seen in drawn pages → their row
  async function goToBar(bar: number): Promise<void> {
    let r = rowOfBar.get(bar);
    if (r === undefined) {
      const p = await pages.fetch({ kind: "timeline", bar, limit: PAGE });
      if (p.index === null || p.index === undefined) return;
      r = p.index;
    }
    active = bar;
    const row = rowAt(r) ?? (await pages.fetch({ kind: "timeline", offset: Math.floor(r / PAGE) * PAGE, limit: PAGE })).rows?.[r % PAGE];
    if (row && row.kind !== "turn") {
      const b = barOf(row, now);
      activeSeq = b.seq;
      view = reveal(view, axis.span, toAxis(axis, b.start), toAxis(axis, b.end));
    }
    scrollToRow(r);
    draw();
  }
  function move(d: number): void {
    const bars = first?.bars ?? 0;
    if (!bars) return;
    void goToBar(Math.max(0, Math.min(bars - 1, active < 0 ? (d > 0 ? 0 : bars - 1) : active + d)));
  }
  const zoomKeys = { zoomIn: () => zoom(2), zoomOut: () => zoom(0.5), reset: resetZoom };
  function barKey(key: string): boolean {
    if (key === "ArrowRight" || key === "ArrowDown") move(1);
    else if (key === "ArrowLeft" || key === "ArrowUp") move(-1);
    else if (key === "Home") { active = -1; move(1); }
    else if (key === "End") { active = first?.bars ?? 0; move(-1); }
    else if (key === "Enter" && activeSeq >= 0) onSelect(activeSeq);
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
    activeSeq = Number(r.dataset.seq);
    onSelect(activeSeq);
    draw();
  });
  redrawOnScroll(body, () => drawRows());

  function scrollToRow(i: number): void {
    if (i < 0) return;
    const viewH = body.clientHeight || 360;
    if (i * ROW < body.scrollTop || (i + 1) * ROW > body.scrollTop + viewH) body.scrollTop = Math.max(0, i * ROW - viewH / 2);
  }

  function track(a: number, b: number, cls: string, style = ""): HTMLElement | null {
    const at = placeBar(view, toAxis(axis, a), toAxis(axis, b));
    return at ? h("span", { class: cls, style: `left:${at.left.toFixed(3)}%;width:${at.width.toFixed(3)}%${style}` }) : null;
  }

  function barRow(b: Bar, index: number, i: number): HTMLElement {
    const text = `${fmtMs(b.durationMs)}${b.metrics ? ` · ${b.metrics}` : ""}`;
    const on = index === active;
    return h("div", { class: `dsh-tl-row dsh-tl-barrow dsh-tl-${b.kind}${on ? " dsh-tl-active" : ""}${b.seq === selected ? " dsh-tl-sel" : ""}`,
      style: `top:${i * ROW}px`, id: `${id}-b${index}`, role: "listitem", "aria-current": b.seq === selected ? "true" : null,
      "data-bar": index, "data-seq": b.seq, "data-kind": b.kind, "data-turn": b.turn, title: `${b.label} — ${b.title} · ${text}` },
      h("span", { class: "dsh-tl-label" }, h("span", { class: "dsh-tl-name" }, b.label), h("span", { class: "dsh-tl-metrics" }, text)),
      h("span", { class: "dsh-tl-track" }, track(b.start, b.end, `dsh-tl-bar dsh-tl-bar-${b.kind} dsh-tl-outcome-${b.outcome}${b.open ? " dsh-tl-open" : ""}`)));
  }

  function groupRow(t: TurnStats, i: number): HTMLElement {
    const end = t.endTime ?? Math.max(now, t.startTime);
    const meta = `${fmtMs(end - t.startTime)}${t.endTime === null ? " so far" : ""} · ${tokensText(t.inputTokens, t.outputTokens, t.costUsd) || "no requests"}`;
    return h("div", { class: "dsh-tl-row dsh-tl-group", role: "listitem", style: `top:${i * ROW}px`, "data-turn": t.turn, "data-seq": t.seq, title: `turn ${t.turn} · ${meta}` },
      h("span", { class: "dsh-tl-label" }, h("span", { class: "dsh-tl-name" }, `turn ${t.turn}`), h("span", { class: "dsh-tl-metrics dsh-tl-turnmeta" }, meta)),
      h("span", { class: "dsh-tl-track" }, track(t.startTime, end, "dsh-tl-span")));
  }

  function drawRows(): void {
    const n = first?.total ?? 0;
    const viewH = body.clientHeight || 360;
    const a = Math.max(0, Math.floor(body.scrollTop / ROW) - MARGIN);
    const b = Math.min(n, Math.ceil((body.scrollTop + viewH) / ROW) + MARGIN);
    const out: HTMLElement[] = [];
    for (let i = a; i < b; i++) {
      const r = rowAt(i);
      if (!r) { out.push(h("div", { class: "dsh-tl-row dsh-tl-pending dsh-muted", style: `top:${i * ROW}px` }, "…")); continue; }
      if (r.kind === "turn") out.push(groupRow(r.stats as unknown as TurnStats, i));
      else {
        const bar = r.bar ?? -1;
        rowOfBar.set(bar, i);
        const b2 = barOf(r, now);
        if (bar === active) activeSeq = b2.seq;
        out.push(barRow(b2, bar, i));
      }
    }
    rowsEl.style.height = `${n * ROW}px`;
    replace(rowsEl, ...out);
    if (active >= 0 && rowsEl.querySelector(`#${id}-b${active}`)) el.setAttribute("aria-activedescendant", `${id}-b${active}`);
    else el.removeAttribute("aria-activedescendant");
  }

  function draw(): void {
    const w = view.to - view.from;
    const step = niceStep(w / 6);
    const pxPerMs = (axisEl.clientWidth || 600) / Math.max(1e-9, w);
    // each cut of the axis, marked with how long it was (close ones as one mark); no tick under a mark
    const cuts = breaksIn(axis, view.from, view.to, 110 / pxPerMs);
    const ticks: HTMLElement[] = [];
    for (let ms = Math.ceil(view.from / step) * step; ms <= view.to; ms += step) {
      const left = ((ms - view.from) / w) * 100;
      if (left <= 92 && !cuts.some((k) => (ms - k.at) * pxPerMs > -48 && (ms - k.at) * pxPerMs < 115)) ticks.push(h("span", { class: "dsh-tl-tick", style: `left:${left.toFixed(2)}%` }, fmtMs(ms)));
    }
    const marks = cuts.map((k) => {
      const text = k.count === 1 ? `${fmtMs(k.ms)} idle` : `${k.count} gaps · ${fmtMs(k.ms)} idle`;
      return h("span", { class: "dsh-axis-break dsh-tl-break", style: `left:${(((k.at - view.from) / w) * 100).toFixed(2)}%`,
        "data-idle-ms": k.ms, "data-gaps": k.count, title: `${text}: cut out of the axis` }, icon("break"), text);
    });
    replace(axisEl, ...ticks, ...marks);
    const zoomed = axis.span / Math.max(1e-9, w);
    scaleLabel.textContent = `${fit ? "whole session" : `${+zoomed.toFixed(2)}×`} · ${fmtMs(view.from)} – ${fmtMs(view.to)} of ${fmtMs(axis.span)} active`;
    axisLabel.textContent = axis.breaks.length ? `active time: ${axis.breaks.length === 1 ? "an idle gap" : `${axis.breaks.length} idle gaps`} over 1 s cut (${fmtMs(axis.idleMs)})` : "active time";
    el.dataset.zoom = String(zoomed);
    el.dataset.from = String(view.from);
    el.dataset.to = String(view.to);
    el.dataset.span = String(axis.span);
    el.dataset.cuts = String(axis.breaks.length);
    drawRows();
  }

  return {
    el,
    update(sel, running) {
      selected = sel;
      first = page(0, true);
      if (!first) { replace(rowsEl, h("div", { class: "dsh-muted" }, "loading…")); return; }
      const key = `${first.count}|${running}`;
      if (key !== axisKey) {
        axisKey = key;
        now = running ? Date.now() : 0;
        axis = cutAxis(first.busy ?? []);
        view = fit ? { from: 0, to: axis.span } : zoomView(view, axis.span, 1);
        const t = first.totals as unknown as Totals | undefined;
        total.textContent = first.total && t ? `session: ${summaryLine(t)}` : "no turns yet";
      }
      draw();
    },
    reveal(seq) {
      void pages.fetch({ kind: "timeline", seq, limit: PAGE }).then((p) => {
        if (p.index === null || p.index === undefined) return;
        const row = p.rows?.[p.index - p.offset];
        if (!row || row.bar === null || row.bar === undefined) return;
        void goToBar(row.bar);
      });
    },
    clear() { replace(rowsEl); replace(axisEl); axisKey = ""; first = undefined; rowOfBar.clear(); },
  };
}
