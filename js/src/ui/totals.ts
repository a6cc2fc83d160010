// The loop widget's running totals: tokens in / out, cost ("cost n/a" for a model without a
// price), elapsed time, and the context fill of the last request (a bar and a percentage of its
// window). Figures from model/trajectory.ts — the same as `show --stats --json` — and carried
// exactly in data-* attributes next to the rounded text.
import { fmtInt } from "../model/counts";
import type { Totals, TrajectoryFold } from "../model/trajectory";
import { SCRIPT_CONTEXT_WINDOW } from "../model/pricing";
import { fmtMs, h } from "./dom";

export const fmtCost = (usd: number | null): string => (usd === null ? "cost n/a" : `$${usd.toFixed(4)}`);
/** 12,345 (not toLocaleString: its first call costs milliseconds). */
const fmtTokens = fmtInt;
const fmtWindow = (n: number): string => (n >= 1_000_000 ? `${+(n / 1_000_000).toFixed(2)}M` : n >= 1000 ? `${Math.round(n / 1000)}k` : String(n));

/** Ended turns' durations plus the open turn's time so far (to `now` while running, else to the
 *  last event). */
export function elapsedMs(fold: TrajectoryFold, totals: Totals, lastTime: number | null, running: boolean, now = Date.now()): number {
  const open = fold.turns[fold.turns.length - 1];
  if (!open || open.endTime !== null) return totals.durationMs;
  const until = running ? Math.max(now, lastTime ?? now) : lastTime ?? open.startTime;
  return totals.durationMs + Math.max(0, until - open.startTime);
}

/** `offline`: the run is the offline teaching model's (script:*): its tokens are an estimate, its
 *  cost is 0 because nothing leaves the machine, its context window is nominal. */
export function renderTotals(t: Totals, elapsed: number, offline = false): HTMLElement {
  const used = t.contextUsed;
  const pct = used === null ? null : Math.max(0, used * 100);
  const level = pct === null ? "" : pct >= 90 ? "dsh-ctx-full" : pct >= 70 ? "dsh-ctx-high" : "";
  const ctx = pct === null || t.contextWindow === null
    ? h("span", { class: "dsh-ctx dsh-ctx-na", title: "the model's context window is not known (--context-window N)" }, "context n/a")
    : h("span", { class: `dsh-ctx ${level}`, "data-nominal": String(offline && t.contextWindow === SCRIPT_CONTEXT_WINDOW),
      title: `the last request's prompt: ${fmtTokens(Math.round(used! * t.contextWindow))} of ${fmtTokens(t.contextWindow)} tokens${offline && t.contextWindow === SCRIPT_CONTEXT_WINDOW ? " (a nominal window: the offline teaching model has none of its own)" : t.windowSource ? ` (window from the ${t.windowSource})` : ""}` },
      h("span", { class: "dsh-ctx-bar", role: "meter", "aria-label": "context window fill", "aria-valuemin": 0, "aria-valuemax": 100, "aria-valuenow": pct.toFixed(1) },
        h("span", { class: "dsh-ctx-fill", style: `width: ${Math.min(100, pct).toFixed(2)}%` })),
      h("span", { class: "dsh-ctx-text", "data-window-source": t.windowSource ?? "" },
        `${pct < 10 ? pct.toFixed(1) : pct.toFixed(0)}% of ${fmtWindow(t.contextWindow)} context${t.windowSource && !(offline && t.contextWindow === SCRIPT_CONTEXT_WINDOW) ? ` (${t.windowSource})` : ""}`));
  return h("span", {
    class: "dsh-totals", "data-input-tokens": t.inputTokens, "data-output-tokens": t.outputTokens,
    "data-cost-usd": t.costUsd === null ? "null" : String(t.costUsd), "data-duration-ms": t.durationMs,
    "data-elapsed-ms": Math.round(elapsed), "data-context-used": used === null ? "null" : String(used),
    "data-requests": t.requests,
  },
  h("span", { class: "dsh-tot-tokens", "data-estimated": String(offline),
    title: offline ? "estimated: the offline teaching model counts about four characters a token" : `${fmtTokens(t.cachedInputTokens)} cached input, ${fmtTokens(t.reasoningTokens)} reasoning` },
    `${offline ? "≈ " : ""}${fmtTokens(t.inputTokens)} in / ${fmtTokens(t.outputTokens)} out tokens`),
  h("span", { class: `dsh-tot-cost${t.costUsd === null ? " dsh-tot-na" : ""}`, title: offline ? "the offline teaching model runs on this machine: nothing is sent, nothing is billed" : t.costUsd === null ? "a model without a known price (never a guess)" : `list prices as of ${t.pricesAsOf}` },
    offline && t.costUsd === 0 ? "$0 — offline" : fmtCost(t.costUsd)),
  h("span", { class: "dsh-tot-time", title: "time spent in turns (the open one so far)" }, fmtMs(elapsed)),
  ctx);
}
