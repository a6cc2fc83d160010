// The trajectory of a session in numbers, in the browser: the same fold as
// dsh_notebook/analysis/stats.py (`session_stats`) over the fold's events — per request attempt,
// tool call, turn and totals, with the same camelCase names and `null` for what is not known as
// `show --stats --json`. Incremental: `update(events)` folds only the events it has not seen.
// tests/client/test_stats_parity.py checks it equals the Python figures on recorded real runs.
import type { SessionEvent } from "../types";
import { costOf, Pricing } from "./pricing";

type Ms = number | null;
export interface RequestStats {
  seq: number; turn: number; step: number; attempt: number; provider: string; model: string;
  outcome: "completed" | "interrupted" | "error" | "open"; error: string | null; resultSeq: number | null;
  sentTime: number; firstByteTime: Ms; firstDeltaTime: Ms; firstContentTime: Ms; endTime: Ms;
  firstByteMs: Ms; ttftMs: Ms; firstContentMs: Ms; streamMs: Ms; durationMs: Ms;
  inputTokens: number | null; cachedInputTokens: number | null; outputTokens: number | null; reasoningTokens: number | null;
  costUsd: number | null; contextWindow: number | null; contextUsed: number | null;
  windowSource: string | null; maxTokens: number | null;
  /** the other request options sent (temperature, seed …): the last request/header's config */
  options: Record<string, unknown>;
}
export interface ToolStats {
  callId: string; name: string; seq: number; turn: number; step: number; startTime: number; endTime: Ms;
  resultSeq: number | null; durationMs: Ms; approvalAskedTime: Ms; approvalWaitMs: Ms; approval: string | null;
  /** the permission mode its decision was made in, what decided it, and the decision (issue 36) */
  mode: string | null; decider: string | null; decision: string | null;
  runMs: Ms; error: string | null; exitCode: number | null;
}
/** The decisions made in one permission mode (stats.py `ModeDecisions`); "unrecorded": an older log. */
export interface ModeDecisions {
  mode: string; decisions: number; allow: number; deny: number; cancelled: number; asked: number;
  byRule: number; byGrant: number; byMode: number; byUser: number;
}
export interface StepStats { step: number; seq: number; startTime: number; endTime: Ms; durationMs: Ms }
export interface Totals {
  turns: number; requests: number; toolCalls: number; inputTokens: number; cachedInputTokens: number;
  outputTokens: number; reasoningTokens: number; costUsd: number | null; durationMs: number;
  approvalWaitMs: number; contextWindow: number | null; contextUsed: number | null; windowSource: string | null;
  pricesAsOf: string;
}
export interface TurnStats extends Totals {
  turn: number; seq: number; startTime: number; endSeq: number | null; endTime: Ms; reason: string | null; steps: StepStats[];
}
export interface SessionStats { requests: RequestStats[]; tools: ToolStats[]; turns: TurnStats[]; totals: Totals; decisions: ModeDecisions[] }

const BY: Record<string, "byRule" | "byGrant" | "byMode" | "byUser"> = { rule: "byRule", grant: "byGrant", mode: "byMode", user: "byUser" };

/** The exit code a command's result ends with ("[exit code: N]", the bash tool's last line) — as
 *  ToolMessage.exit_code in dsh_notebook/wire/messages.py. */
export function exitCodeOf(text: string): number | null {
  const m = /^\[exit code: (-?\d+)\]$/.exec((text.trimEnd().split("\n").pop() ?? "").trim());
  return m ? Number(m[1]) : null;
}

const ms = (end: Ms | undefined, start: Ms | undefined): Ms =>
  end === null || end === undefined || start === null || start === undefined ? null : Math.max(0, end - start);

interface OpenTurn { turn: number; seq: number; startTime: number; endSeq: number | null; endTime: Ms; reason: string | null; durationMs: number | null; steps: StepStats[] }

export class TrajectoryFold {
  readonly requests: RequestStats[] = [];
  readonly tools: ToolStats[] = [];
  readonly turns: OpenTurn[] = [];
  private openReq: RequestStats | null = null;
  private readonly calls = new Map<number, ToolStats>();
  private readonly byId = new Map<string, ToolStats>();
  private readonly asked = new Map<string, number>();
  /** decisions by permission mode, in the order the modes first decided */
  readonly decisions = new Map<string, ModeDecisions>();
  private turn: OpenTurn | null = null;
  private through = -1;
  private sent: Record<string, unknown> = {}; // the last request/header's config: what every request carries

  /** `override`: the caller's context window (beats the one each request recorded). */
  constructor(readonly pricing: Pricing = new Pricing(), readonly override: number | null = null) {}

  update(events: readonly SessionEvent[]): this {
    for (let i = this.through + 1; i < events.length; i++) this.fold(events[i]);
    this.through = events.length - 1;
    return this;
  }

  private fold(ev: SessionEvent): void {
    switch (ev.type) {
      case "request/header": {
        const config = ev.config ?? {};
        this.sent = Object.fromEntries(Object.entries(config).filter(([k]) => k !== "provider" && k !== "model"));
        return;
      }
      case "request/frozen": {
        const window = this.pricing.contextWindow(ev.provider, ev.model, this.override || ev.contextWindow || null);
        this.openReq = {
          seq: ev.seq, turn: ev.turn, step: ev.step, attempt: ev.attempt, provider: ev.provider, model: ev.model,
          outcome: "open", error: null, resultSeq: null, sentTime: ev.time, firstByteTime: null, firstDeltaTime: null,
          firstContentTime: null, endTime: null, firstByteMs: null, ttftMs: null, firstContentMs: null, streamMs: null,
          durationMs: null, inputTokens: null, cachedInputTokens: null, outputTokens: null, reasoningTokens: null,
          costUsd: null, contextWindow: window, contextUsed: null,
          windowSource: this.override ? "flag" : ev.windowSource ?? null,
          maxTokens: ev.maxTokens ?? (typeof this.sent.max_tokens === "number" ? this.sent.max_tokens : null),
          options: Object.fromEntries(Object.entries(this.sent).filter(([k]) => k !== "max_tokens")),
        };
        this.requests.push(this.openReq);
        return;
      }
      case "assistant/message":
      case "assistant/attempt": {
        const r = this.openReq;
        if (!r) return;
        this.openReq = null;
        r.resultSeq = ev.seq; r.endTime = ev.time; r.firstByteTime = ev.firstByteTime ?? null;
        if (ev.stream && ev.stream.length) {
          r.firstDeltaTime = Math.min(...ev.stream.map((run) => run.time0));
          const content = ev.stream.filter((run) => run.kind !== "reasoning").map((run) => run.time0);
          r.firstContentTime = content.length ? Math.min(...content) : null;
        }
        if (ev.type === "assistant/attempt") {
          r.outcome = "error"; r.error = ev.error ? ev.error.code : null;
        } else {
          r.outcome = ev.interrupted ? "interrupted" : "completed";
          if (ev.usage) {
            const u = ev.usage, cached = u.cacheReadTokens || 0;
            r.inputTokens = (u.inputTokens ?? 0) + cached; r.cachedInputTokens = cached;
            r.outputTokens = u.outputTokens ?? 0; r.reasoningTokens = u.reasoningTokens ?? null;
            const p = this.pricing.price(r.provider, r.model);
            r.costUsd = p === null ? null : costOf(p, u);
            if (r.contextWindow) r.contextUsed = r.inputTokens / r.contextWindow;
          }
        }
        r.firstByteMs = ms(ev.firstByteTime, r.sentTime); r.ttftMs = ms(r.firstDeltaTime, r.sentTime);
        r.firstContentMs = ms(r.firstContentTime, r.sentTime); r.streamMs = ms(ev.time, r.firstDeltaTime);
        r.durationMs = ms(ev.time, r.sentTime);
        return;
      }
      case "tool/call": {
        const t: ToolStats = { callId: ev.callId, name: ev.name, seq: ev.seq, turn: ev.turn, step: ev.step, startTime: ev.time,
          endTime: null, resultSeq: null, durationMs: null, approvalAskedTime: null, approvalWaitMs: null, approval: null,
          mode: null, decider: null, decision: null, runMs: null, error: null, exitCode: null };
        this.calls.set(ev.seq, t); this.byId.set(ev.callId, t); this.tools.push(t);
        return;
      }
      case "approval/asked": this.asked.set(ev.callId, ev.time); this.modeCounts(ev.mode).asked += 1; return;
      case "approval/decided": {
        const t = this.byId.get(ev.callId), at = this.asked.get(ev.callId);
        if (t && at !== undefined) {
          this.asked.delete(ev.callId);
          t.approvalAskedTime = at; t.approvalWaitMs = ms(ev.time, at); t.approval = ev.decision;
        }
        if (t) { t.mode = ev.mode ?? null; t.decider = ev.decider ?? null; t.decision = ev.decision; }
        const c = this.modeCounts(ev.mode);
        c.decisions += 1; c[ev.decision] += 1;
        if (ev.decider) c[BY[ev.decider]] += 1;
        return;
      }
      case "tool/result": {
        const src = ev.sourceEventSeqs?.[0];
        const t = src !== undefined ? this.calls.get(src) : this.byId.get(String(ev.message.toolCallId));
        if (!t || t.resultSeq !== null) return;
        const end = ev.finishedTime ?? ev.time;
        t.resultSeq = ev.seq; t.endTime = end; t.durationMs = ms(end, t.startTime); t.error = ev.error ? ev.error.code : null;
        t.exitCode = exitCodeOf(ev.message.content.map((b) => b.text).join(""));
        if (t.durationMs !== null) t.runMs = Math.max(0, t.durationMs - (t.approvalWaitMs || 0));
        return;
      }
      case "turn/start":
        this.turn = { turn: ev.turn, seq: ev.seq, startTime: ev.time, endSeq: null, endTime: null, reason: null, durationMs: null, steps: [] };
        this.turns.push(this.turn);
        return;
      case "turn/end":
        if (this.turn && this.turn.turn === ev.turn) {
          const t = this.turn;
          t.endSeq = ev.seq; t.endTime = ev.time; t.reason = ev.reason.kind; t.durationMs = ms(ev.time, t.startTime) || 0;
        }
        return;
      case "step/start":
        if (this.turn) this.turn.steps.push({ step: ev.step, seq: ev.seq, startTime: ev.time, endTime: null, durationMs: null });
        return;
      case "step/end": {
        const steps = this.turn?.steps ?? [];
        const last = steps[steps.length - 1];
        if (last && last.step === ev.step) { last.endTime = ev.time; last.durationMs = ms(ev.time, last.startTime); }
        return;
      }
      default:
        return;
    }
  }

  private modeCounts(mode: string | null | undefined): ModeDecisions {
    const key = mode || "unrecorded";
    let c = this.decisions.get(key);
    if (!c) {
      c = { mode: key, decisions: 0, allow: 0, deny: 0, cancelled: 0, asked: 0, byRule: 0, byGrant: 0, byMode: 0, byUser: 0 };
      this.decisions.set(key, c);
    }
    return c;
  }

  /** Token, cost and approval totals of `reqs` / `tools` (stats.py `_add`). */
  totalsOf(reqs: readonly RequestStats[], tools: readonly ToolStats[]): Omit<Totals, "turns" | "durationMs"> {
    let n = 0, tin = 0, cached = 0, tout = 0, reasoning = 0, unpriced = false, cost = 0, priced = 0;
    let contextWindow: number | null = null, contextUsed: number | null = null, windowSource: string | null = null;
    for (const r of reqs) {
      n += 1;
      if (r.inputTokens === null) continue;
      tin += r.inputTokens; cached += r.cachedInputTokens ?? 0; tout += r.outputTokens ?? 0; reasoning += r.reasoningTokens || 0;
      priced += 1;
      if (r.costUsd === null) unpriced = true; else cost += r.costUsd;
      if (r.contextWindow) { contextWindow = r.contextWindow; contextUsed = r.contextUsed; windowSource = r.windowSource; }
    }
    let waits = 0;
    for (const t of tools) waits += t.approvalWaitMs || 0;
    return { requests: n, inputTokens: tin, cachedInputTokens: cached, outputTokens: tout, reasoningTokens: reasoning,
      costUsd: priced && !unpriced ? cost : null, approvalWaitMs: waits, toolCalls: tools.length,
      contextWindow, contextUsed, windowSource, pricesAsOf: this.pricing.table.asOf };
  }

  /** Everything, shaped as `show --stats --json`. */
  stats(): SessionStats {
    const reqsBy = new Map<number, RequestStats[]>(), toolsBy = new Map<number, ToolStats[]>();
    for (const r of this.requests) { const l = reqsBy.get(r.turn) ?? []; l.push(r); reqsBy.set(r.turn, l); }
    for (const t of this.tools) { const l = toolsBy.get(t.turn) ?? []; l.push(t); toolsBy.set(t.turn, l); }
    const turns: TurnStats[] = this.turns.map((t) => ({ ...this.totalsOf(reqsBy.get(t.turn) ?? [], toolsBy.get(t.turn) ?? []),
      turns: 1, durationMs: t.durationMs ?? 0, turn: t.turn, seq: t.seq, startTime: t.startTime, endSeq: t.endSeq,
      endTime: t.endTime, reason: t.reason, steps: t.steps.map((s) => ({ ...s })) }));
    return { requests: this.requests.map((r) => ({ ...r })), tools: this.tools.map((t) => ({ ...t })), turns, totals: this.totals(),
      decisions: [...this.decisions.values()].map((d) => ({ ...d })) };
  }

  /** The session totals (what the loop widget's header shows). */
  totals(): Totals {
    let duration = 0;
    for (const t of this.turns) duration += t.durationMs || 0;
    return { ...this.totalsOf(this.requests, this.tools), turns: this.turns.length, durationMs: duration };
  }
}
