// The inspector's waterfall view: one turn's requests and tool calls as bars on one time axis
// (model/waterfall.ts: the turn's page of the session, data/pages.ts), zoomable (−/+/Fit buttons,
// Ctrl+wheel, the + − 0 keys), a turn picker (the back / next buttons, or [ ]), and every bar a
// button that selects the event it was measured from. Idle gaps inside the turn longer than a
// second are cut out of the axis and marked (model/axis-cut.ts).
import type { PageSource } from "../data/pages";
import { breaksIn, cutAxis, toAxis, type CutAxis } from "../model/axis-cut";
import { laneSpans, turnLanes, type Lane, type Segment, type TurnWaterfall } from "../model/waterfall";
import type { TurnPage } from "../wire.gen";
import { button as btn, fmtMs, h, replace } from "./dom";
import { niceStep, redrawOnScroll, zoomKey } from "./axis";
import { icon, iconLabel } from "./icons";

const LABEL_W = 230;
const ROW = 24; // px per lane (widget.css .dsh-wf-label / .dsh-wf-track)
const MARGIN = 12; // lanes drawn above and below the visible ones
const MAX_ZOOM = 4096;
const KIND_TEXT: Record<Segment["kind"], string> = {
  waiting: "waiting for the response", "first-token": "response head → first token", streaming: "streaming",
  request: "request", run: "tool running", approval: "waiting for approval",
};

export interface WaterfallView {
  el: HTMLElement;
  /** Redraw; `selected`: the seq the inspector shows (its bars are marked). */
  update(selected: number, running: boolean): void;
  /** Show the turn that holds `seq`. */
  showTurnOf(seq: number): void;
}

export function createWaterfall(pages: PageSource, onSelect: (seq: number) => void): WaterfallView {
  let zoom = 1;
  let turn: number | null = null; // null: the last turn
  let selected = -1;
  let running = false;
  let page: TurnPage | undefined;
  let cut: CutAxis = cutAxis([]);
  const el = h("div", { class: "dsh-waterfall", tabindex: 0, role: "group", "aria-label": "waterfall: requests and tool calls of one turn on a time axis (idle gaps cut); + and − zoom, 0 fits, [ and ] change the turn" });
  const turnLabel = h("span", { class: "dsh-wf-turn" });
  const scaleLabel = h("span", { class: "dsh-wf-scale dsh-muted" });
  const prev = btn("dsh-wf-prev", "", "previous turn", () => stepTurn(-1));
  iconLabel(prev, "back", "");
  const next = btn("dsh-wf-next", "", "next turn", () => stepTurn(1));
  iconLabel(next, "next", "");
  const controls = h("div", { class: "dsh-wf-controls" }, prev, turnLabel, next,
    btn("dsh-wf-out", "−", "zoom out", () => setZoom(zoom / 2)), btn("dsh-wf-in", "+", "zoom in", () => setZoom(zoom * 2)),
    btn("dsh-wf-fit", "Fit", "fit the turn", () => setZoom(1)), scaleLabel,
    h("span", { class: "dsh-wf-legend" }, ...(["waiting", "first-token", "streaming", "run", "approval"] as const).map((k) =>
      h("span", { class: "dsh-wf-key" }, h("span", { class: `dsh-wf-swatch dsh-wf-${k}` }), KIND_TEXT[k]))));
  const labels = h("div", { class: "dsh-wf-labels", style: `width:${LABEL_W}px` });
  const canvas = h("div", { class: "dsh-wf-canvas" });
  const scroll = h("div", { class: "dsh-wf-scroll" }, canvas);
  const body = h("div", { class: "dsh-wf-body" }, labels, scroll);
  el.append(controls, body);

  function stepTurn(d: number): void {
    const to = d < 0 ? page?.previous : page?.next;
    if (to === null || to === undefined) return;
    turn = to;
    zoom = 1;
    draw();
  }
  function setZoom(z: number, anchorX?: number): void {
    const before = zoom;
    zoom = Math.max(1, Math.min(MAX_ZOOM, z));
    const x = anchorX ?? scroll.clientWidth / 2;
    const at = (scroll.scrollLeft + x) / before;
    draw();
    scroll.scrollLeft = Math.max(0, at * zoom - x);
  }
  const zoomKeys = { zoomIn: () => setZoom(zoom * 2), zoomOut: () => setZoom(zoom / 2), reset: () => setZoom(1) };
  function turnKey(key: string): boolean {
    if (key !== "[" && key !== "]") return false;
    stepTurn(key === "[" ? -1 : 1);
    return true;
  }
  el.addEventListener("keydown", (e) => {
    if (e.target instanceof HTMLInputElement || !(zoomKey(e.key, zoomKeys) || turnKey(e.key))) return;
    e.preventDefault();
  });
  scroll.addEventListener("wheel", (e) => {
    if (!e.ctrlKey && !e.metaKey) return;
    e.preventDefault();
    setZoom(e.deltaY < 0 ? zoom * 1.25 : zoom / 1.25, e.clientX - scroll.getBoundingClientRect().left);
  }, { passive: false });

  // bars are placed in percent of the turn's (cut) span: zooming only widens the canvas (no
  // per-bar work, so a turn of a thousand requests zooms at once); one click listener serves all
  const pos = (w: TurnWaterfall, t: number) => toAxis(cut, Math.max(w.start, t));
  function segment(w: TurnWaterfall, s: Segment, span: number, selectedSeq: number): HTMLElement {
    const ms = s.end - s.start;
    const a = pos(w, s.start), b = pos(w, s.end);
    return h("button", {
      class: `dsh-wf-seg dsh-wf-${s.kind}${s.open ? " dsh-wf-open" : ""}${s.seq === selectedSeq ? " dsh-wf-sel" : ""}`, type: "button",
      style: `left:${((a / span) * 100).toFixed(4)}%;width:${(((b - a) / span) * 100).toFixed(4)}%`,
      "data-seq": s.seq, "data-kind": s.kind, "data-ms": ms, title: `${KIND_TEXT[s.kind]}: ${fmtMs(ms)}${s.open ? " so far" : ""} — event #${s.seq}`,
      "aria-label": `${KIND_TEXT[s.kind]} ${fmtMs(ms)}, event ${s.seq}`,
    });
  }
  canvas.addEventListener("click", (e) => {
    const b = (e.target as Element | null)?.closest?.(".dsh-wf-seg") as HTMLElement | null;
    if (b) onSelect(Number(b.dataset.seq));
  });

  function lane(w: TurnWaterfall, l: Lane, i: number, span: number, selectedSeq: number): [HTMLElement, HTMLElement] {
    const top = `top:${i * ROW}px`;
    const label = h("div", { class: `dsh-wf-label dsh-wf-lane-${l.kind}`, style: top, title: `${l.label} — ${l.title}` }, h("span", { class: "dsh-wf-name" }, l.label),
      h("span", { class: "dsh-wf-dur" }, fmtMs(l.durationMs)));
    const track = h("div", { class: `dsh-wf-track dsh-wf-lane-${l.kind} dsh-wf-outcome-${l.outcome}`, style: top, "data-seq": l.seq, "data-ms": l.durationMs },
      ...l.segments.map((s) => segment(w, s, span, selectedSeq)));
    return [label, track];
  }

  let drawn = ""; // what the bars on screen were built from
  let drawnSel = -1;
  let cur: TurnWaterfall | null = null;
  let win = "";
  const axis = h("div", { class: "dsh-wf-axis" });
  const labelRows = h("div", { class: "dsh-wf-rows" });
  const trackRows = h("div", { class: "dsh-wf-rows" });

  /** Only the lanes in and near the view exist in the DOM (a turn may have thousands). */
  function drawLanes(force = false): void {
    const w = cur;
    if (!w) return;
    const view = body.clientHeight || 320;
    const from = Math.max(0, Math.floor((body.scrollTop - ROW) / ROW) - MARGIN);
    const to = Math.min(w.lanes.length, Math.ceil((body.scrollTop + view) / ROW) + MARGIN);
    const key = `${from}-${to}`;
    if (!force && key === win) return;
    win = key;
    const span = Math.max(1, cut.span);
    const rows = w.lanes.slice(from, to).map((l, k) => lane(w, l, from + k, span, selected));
    replace(labelRows, ...rows.map((r) => r[0]));
    replace(trackRows, ...rows.map((r) => r[1]));
    drawnSel = selected;
  }
  redrawOnScroll(body, () => drawLanes());

  function draw(): void {
    page = pages.get(turn === null ? { kind: "turn" } : { kind: "turn", turn });
    if (!page) { if (!cur) turnLabel.textContent = "loading…"; return; }
    if (turn === null && page.turn) turn = (page.turn as { turn: number }).turn;
    prev.disabled = page.previous === null;
    next.disabled = page.next === null;
    const now = running ? Date.now() : 0;
    const key = `${turn}|${page.count}|${running ? now : ""}`;
    if (key !== drawn) {
      const w = turnLanes(page, now);
      if (!w) { drawn = ""; cur = null; turnLabel.textContent = "no turns yet"; replace(labels); replace(canvas); scaleLabel.textContent = ""; return; }
      if (!cur || cur.turn !== w.turn) body.scrollTop = 0;
      cur = w;
      cut = cutAxis(laneSpans(w));
      const height = `height:${w.lanes.length * ROW}px`;
      labelRows.setAttribute("style", height);
      trackRows.setAttribute("style", height);
      replace(labels, h("div", { class: "dsh-wf-label dsh-wf-axis-label" }, cut.breaks.length ? "since the turn started (idle gaps cut)" : "since the turn started"), labelRows);
      replace(canvas, axis, trackRows);
      canvas.dataset.span = String(cut.span);
      canvas.dataset.cuts = String(cut.breaks.length);
      turnLabel.textContent = `turn ${w.turn} · ${fmtMs(w.end - w.start)} · ${w.lanes.length} bars`;
      turnLabel.setAttribute("data-lanes", String(w.lanes.length));
      drawn = key;
      drawLanes(true);
    } else if (selected !== drawnSel) {
      for (const b of canvas.querySelectorAll(".dsh-wf-sel")) b.classList.remove("dsh-wf-sel");
      for (const b of canvas.querySelectorAll(`.dsh-wf-seg[data-seq="${selected}"]`)) b.classList.add("dsh-wf-sel");
      drawnSel = selected;
    }
    // the scale: only the canvas width and the axis ticks depend on it
    const span = Number(canvas.dataset.span) || 1;
    const width = Math.max(200, (scroll.clientWidth || el.clientWidth - LABEL_W || 600) - 12);
    const scale = (width / span) * zoom;
    scaleLabel.textContent = `${zoom === 1 ? "fit" : `${+zoom.toFixed(2)}×`} · 100 px = ${fmtMs(100 / scale)}`;
    canvas.style.width = `${(span * scale).toFixed(2)}px`;
    canvas.setAttribute("data-scale", String(scale));
    canvas.setAttribute("data-zoom", String(zoom));
    drawTicks();
  }

  /** The axis ticks (and cut marks) in and around the visible part of the canvas. */
  function drawTicks(): void {
    const span = Number(canvas.dataset.span) || 1, scale = Number(canvas.dataset.scale) || 1;
    const step = niceStep(90 / scale);
    const view = scroll.clientWidth || 1200;
    const from = Math.max(0, Math.floor((scroll.scrollLeft - view) / scale / step) * step);
    const to = Math.min(span, (scroll.scrollLeft + 2 * view) / scale);
    const cuts = breaksIn(cut, from, to, 110 / scale);
    const ticks: HTMLElement[] = [];
    // no tick whose label would be cut at the canvas's end, nor one under a cut's mark
    for (let ms = from; ms <= to; ms += step) {
      if ((ms === 0 || (span - ms) * scale >= 48) && !cuts.some((k) => (ms - k.at) * scale > -48 && (ms - k.at) * scale < 115)) {
        ticks.push(h("span", { class: "dsh-wf-tick", style: `left:${(ms * scale).toFixed(1)}px` }, fmtMs(ms)));
      }
    }
    const marks = cuts.map((k) => {
      const text = k.count === 1 ? `${fmtMs(k.ms)} idle` : `${k.count} gaps · ${fmtMs(k.ms)} idle`;
      return h("span", { class: "dsh-axis-break dsh-wf-break", style: `left:${(k.at * scale).toFixed(1)}px`, "data-idle-ms": k.ms,
        "data-gaps": k.count, title: `${text}: cut out of the axis` }, icon("break"), text);
    });
    replace(axis, ...ticks, ...marks);
  }
  // a narrowed or widened pane: "fit" fits the new width (the scale is recomputed, lanes kept)
  let lastWidth = 0;
  if (typeof ResizeObserver === "function") new ResizeObserver(() => {
    if (page && scroll.clientWidth && scroll.clientWidth !== lastWidth) { lastWidth = scroll.clientWidth; draw(); }
  }).observe(scroll);
  redrawOnScroll(scroll, drawTicks);

  return {
    el,
    update(sel, isRunning) { selected = sel; running = isRunning; draw(); },
    showTurnOf(seq) {
      void pages.fetch({ kind: "turn", seq }).then((p) => {
        const t = p.turn as { turn: number } | null;
        if (t && t.turn !== turn) { turn = t.turn; zoom = 1; }
        draw();
        // bring the lane of that event into view (lanes outside it are not drawn)
        const i = cur ? cur.lanes.findIndex((l) => l.seq === seq || l.segments.some((x) => x.seq === seq)) : -1;
        const view = body.clientHeight || 320;
        if (i >= 0 && (i * ROW < body.scrollTop || (i + 2) * ROW > body.scrollTop + view)) {
          body.scrollTop = Math.max(0, i * ROW - view / 2);
          drawLanes();
        }
      }).catch(() => undefined);
    },
  };
}
