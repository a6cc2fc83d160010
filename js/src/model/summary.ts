// One-line summaries and filters of events for the inspector's timeline.
import { countOf } from "./counts";
import { toolOutcome } from "./outcome";
import { messageOf, turnOf, type SessionEvent } from "../types";
import { fromCell } from "./cell";
import { messageText } from "./history";
import { emptyQuery, eventText, matchEvent, parseQuery, snippetOf, type Snippet } from "./query";

function clip(s: string, n = 100): string {
  const one = s.replace(/\s+/g, " ").trim();
  return one.length > n ? `${one.slice(0, n - 1)}…` : one;
}

export function summarize(ev: SessionEvent): string {
  const m = messageOf(ev);
  switch (ev.type) {
    case "user/message": {
      if (!m || m.role !== "user") return "";
      const cell = fromCell(m);
      const op = ev.surfaceOp as { startSeq?: number; endSeq?: number } | undefined;
      const replaces = op ? `[replaces #${op.startSeq}..#${op.endSeq}] ` : "";
      return `${replaces}${m.source?.kind === "plugin" ? `[context ${m.source.plugin ?? ""}] ` : ""}${cell ? `${cell} · ` : ""}${clip(messageText(m))}`;
    }
    case "system/message":
      return m ? clip(messageText(m)) : "";
    case "assistant/message": {
      if (!m || m.role !== "assistant") return "";
      const calls = (m.content ?? []).filter((b) => b.type === "tool-call").map((b) => (b.type === "tool-call" ? `${b.name} ${b.id} ${b.arguments}` : ""));
      const text = messageText(m);
      return clip([text, ...calls].filter(Boolean).join(" · "));
    }
    case "tool/call":
      return clip(`${ev.name} ${ev.callId} ${ev.arguments}`);
    case "tool/result":
      if (!m || m.role !== "tool") return "";
      { const o = toolOutcome(messageText(m), Boolean(m.isError)); return clip(`${m.toolCallId} ${o.ok ? "✓" : "✗"}${m.isError ? " ERROR" : ""} ${o.text}`); }
    case "request/frozen":
      return `${String(ev.provider)}:${String(ev.model)} · attempt ${String(ev.attempt ?? 1)} · ${(ev.messageSeqs ?? []).length}${ev.baseRequestSeq !== undefined ? ` (+ base #${ev.baseRequestSeq})` : ""} message seqs`;
    case "request/header":
      return `${String(ev.reason)} · ${(ev.tools as unknown[] | undefined)?.length ?? 0} tools`;
    case "turn/end": {
      const r = ev.reason as { kind?: string; cause?: string; error?: { code?: string }; limit?: number } | undefined;
      const limit = r?.limit !== undefined ? ` ${r.limit}` : "";
      return `${r?.kind ?? ""}${r?.cause ? ` (${r.cause}${limit})` : ""}${r?.error?.code ? ` ${r.error.code}` : ""}`;
    }
    case "approval/asked":
      return `${ev.name} ${ev.callId}${ev.mode ? ` · mode ${ev.mode}` : ""}${ev.decider ? ` · asked by ${ev.decider}` : ""}${ev.reason ? ` · ${String(ev.reason)}` : ""}`;
    case "approval/decided":
      return `${ev.name} ${ev.callId} → ${String(ev.decision)}${ev.decider ?? ev.by ? ` by ${ev.decider ?? ev.by}` : ""}${ev.decider && ev.by && ev.by !== ev.decider ? ` (${String(ev.by)})` : ""}${ev.mode ? ` · mode ${ev.mode}` : ""}${ev.nextMode ? ` → ${ev.nextMode}` : ""}${ev.rule ? ` · ${String(ev.rule)}` : ""}`;
    case "mode/changed":
      return `${ev.previous ?? "?"} → ${ev.mode}${ev.by ? ` by ${ev.by}` : ""}${ev.reason ? ` · ${ev.reason}` : ""}`;
    case "context/compacted":
      return `${String(ev.trigger)} · ${typeof ev.replaced === "number" ? countOf(ev.replaced, "node") : `${String(ev.replaced)} nodes`} #${String(ev.startSeq)}..#${String(ev.endSeq)} → summary #${String(ev.summarySeq)} · ~${String(ev.tokensBefore)} → ~${String(ev.tokensAfter)} tokens`;
    case "llm/retry":
      return `attempt ${String(ev.attempt)} · ${(ev.error as { code?: string })?.code ?? ""} · wait ${String(ev.delayMs)} ms`;
    case "agent/inbox/spliced":
      return `${String(ev.target)} · +${(ev.inserted as unknown[] | undefined)?.length ?? 0} −${String(ev.removedCount ?? 0)}${ev.outcome ? ` ${String(ev.outcome)}` : ""}`;
    case "assistant/attempt":
      return (ev.error as { code?: string; message?: string })?.code ?? "";
    case "checkpoint/taken":
      return `snapshot ${ev.snapshot} · ${ev.files ?? 0} files · ${ev.newBlobs ?? 0} new blobs${ev.unrestorable?.length ? ` · ${ev.unrestorable.length} not restorable` : ""}`;
    case "checkpoint/changes":
      return `+${ev.addedCount ?? ev.added?.length ?? 0} ~${ev.modifiedCount ?? ev.modified?.length ?? 0} -${ev.deletedCount ?? ev.deleted?.length ?? 0} files${ev.variables?.length ? ` · variables ${ev.variables.map((v) => v.name).join(", ")}` : ""}`;
    case "checkpoint/restored":
      return `to turn ${ev.toTurn} · ${ev.written?.length ?? 0} restored, ${ev.removed?.length ?? 0} removed${ev.conflicts?.length ? `, ${countOf(ev.conflicts.length, "conflict")}` : ""}${ev.kept?.length ? `, ${ev.kept.length} kept` : ""}${ev.rolledBack ? " · rolled back" : ""}${ev.forked ? ` · forked ${ev.forked}` : ""}`;
    case "checkpoint/reverted":
      return `${ev.paths.join(", ")} back to turn ${ev.toTurn}${ev.conflicts?.length ? ` · ${countOf(ev.conflicts.length, "conflict")}` : ""}${ev.failed?.length ? ` · ${ev.failed.length} failed` : ""}`;
    case "checkpoint/kept":
      return `turn ${ev.turn} · kept ${ev.paths.join(", ")}`;
    case "checkpoint/failed":
      return `${ev.phase} of turn ${ev.turn ?? "?"} · ${ev.code}: ${ev.message}`;
    default:
      return "";
  }
}

/** The tool name an event concerns (for the tool filter). */
export function toolOf(ev: SessionEvent, nameByCall: Map<string, string>): string | undefined {
  if (ev.type === "tool/call" || ev.type === "approval/asked" || ev.type === "approval/decided") return ev.name;
  if (ev.type === "tool/result" && ev.message?.role === "tool") return nameByCall.get(ev.message.toolCallId);
  return undefined;
}

export interface Filter { type: string; turn: string; tool: string; text: string }

export class EventFilter {
  private haystack: (string | undefined)[] = [];
  private turns: (number | undefined)[] = [];
  private tools: (string | undefined)[] = [];
  private readonly nameByCall = new Map<string, string>();
  private indexed = 0;
  private turn: number | undefined;

  /** Index new events (turn of every event, even those without a `turn` field). */
  update(events: readonly SessionEvent[]): void {
    for (let i = this.indexed; i < events.length; i++) {
      const ev = events[i];
      if (ev.type === "turn/start" && typeof ev.turn === "number") this.turn = ev.turn;
      if (ev.type === "tool/call") this.nameByCall.set(String(ev.callId), String(ev.name));
      this.turns.push(turnOf(ev) ?? this.turn);
      this.tools.push(toolOf(ev, this.nameByCall));
      this.haystack.push(undefined);
    }
    this.indexed = events.length;
  }

  turnOf(i: number): number | undefined { return this.turns[i]; }

  /** The last query's error (BAD_QUERY: …), or "". */
  error = "";
  /** The last query's free-text terms (lowercase): what rows highlight. */
  terms: string[] = [];

  toolAt(i: number): string | undefined { return this.tools[i]; }

  private low(events: readonly SessionEvent[], i: number): string {
    let hay = this.haystack[i];
    if (hay === undefined) { hay = eventText(events[i]).toLowerCase(); this.haystack[i] = hay; }
    return hay;
  }

  /** The rows (indices) passing the selects and the search box's query (see model/query.ts). */
  apply(events: readonly SessionEvent[], f: Filter): number[] {
    this.update(events);
    const parsed = parseQuery(f.text);
    this.error = parsed.ok ? "" : parsed.error;
    if (!parsed.ok) { this.terms = []; return []; }
    const q = emptyQuery(parsed.query) ? undefined : parsed.query;
    this.terms = q?.texts ?? [];
    const turn = f.turn ? Number(f.turn) : undefined;
    const out: number[] = [];
    for (let i = 0; i < events.length; i++) {
      const ev = events[i];
      if (f.type && ev.type !== f.type) continue;
      if (turn !== undefined && this.turns[i] !== turn) continue;
      if (f.tool && this.tools[i] !== f.tool) continue;
      if (q && !matchEvent(q, ev, this.turns[i], this.tools[i], () => this.low(events, i))) continue;
      out.push(i);
    }
    return out;
  }

  /** The snippet of row `i` around the current terms (undefined without free text). */
  snippet(events: readonly SessionEvent[], i: number): Snippet | undefined {
    return this.terms.length ? snippetOf(eventText(events[i]), this.terms) : undefined;
  }

  options(events: readonly SessionEvent[]): { types: string[]; turns: number[]; tools: string[] } {
    this.update(events);
    const types = new Set<string>();
    for (const ev of events) types.add(ev.type);
    return {
      types: [...types].sort(),
      turns: [...new Set(this.turns.filter((t): t is number => t !== undefined))].sort((a, b) => a - b),
      tools: [...new Set(this.tools.filter((t): t is string => Boolean(t)))].sort(),
    };
  }
}
