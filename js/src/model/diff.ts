// Frozen requests: resolve `messageSeqs` (with `baseRequestSeq` = "extends that earlier request's
// messageSeqs") and diff consecutive requests: what the next request adds.
import { turnOf, type SessionEvent } from "../types";

export interface FrozenRequest { seq: number; event: SessionEvent; messageSeqs: number[] }

/** The request/frozen events of the chain ending at `seq`, tip first (bases that point forward
 *  or loop end the chain). */
function requestChain(events: readonly SessionEvent[], seq: number, stop?: (ev: SessionEvent) => boolean): SessionEvent[] {
  // iterative over the chain of bases (a long session may chain thousands)
  const chain: SessionEvent[] = [];
  let cur: SessionEvent | undefined = events[seq];
  const seen = new Set<number>();
  while (cur && cur.type === "request/frozen" && !seen.has(cur.seq)) {
    seen.add(cur.seq);
    chain.push(cur);
    if (stop?.(cur)) break;
    const base: number | undefined = cur.baseRequestSeq ?? undefined;
    cur = base !== undefined && base < cur.seq ? events[base] : undefined;
  }
  return chain;
}

/** The full message seqs of the request/frozen event at `seq`: the `messageSeqs` of its chain of
 *  bases, root first (linear in the result: no copy per link). */
export function resolveMessageSeqs(events: readonly SessionEvent[], seq: number, cache?: Map<number, number[]>): number[] {
  const hit = cache?.get(seq);
  if (hit) return hit;
  const chain = requestChain(events, seq, cache ? (ev) => cache.has(ev.seq) : undefined);
  if (!cache) {
    const acc: number[] = [];
    for (let i = chain.length - 1; i >= 0; i--) {
      const ev = chain[i];
      if (ev.type === "request/frozen") for (const m of ev.messageSeqs ?? []) acc.push(m);
    }
    return acc;
  }
  let acc: number[] = [];
  for (let i = chain.length - 1; i >= 0; i--) {
    const ev = chain[i];
    if (ev.type !== "request/frozen") continue;
    const cached = cache.get(ev.seq);
    if (cached) { acc = cached; continue; }
    acc = ev.baseRequestSeq !== undefined && ev.baseRequestSeq !== null && i < chain.length - 1 ? [...acc, ...(ev.messageSeqs ?? [])] : [...(ev.messageSeqs ?? [])];
    cache.set(ev.seq, acc);
  }
  return acc;
}

/** Whether the request/frozen at `seq` sends the message of event `messageSeq` — the same answer
 *  as `resolveMessageSeqs(...).includes(messageSeq)`, walking only the bases frozen after that
 *  message (an earlier request cannot hold it). */
export function requestIncludes(events: readonly SessionEvent[], seq: number, messageSeq: number): boolean {
  const seen = new Set<number>();
  let cur: SessionEvent | undefined = events[seq];
  while (cur && cur.type === "request/frozen" && !seen.has(cur.seq)) {
    seen.add(cur.seq);
    if ((cur.messageSeqs ?? []).includes(messageSeq)) return true;
    const base: number | undefined = cur.baseRequestSeq ?? undefined;
    if (base === undefined || base >= cur.seq || base < messageSeq) return false;
    cur = events[base];
  }
  return false;
}

export function frozenRequests(events: readonly SessionEvent[]): FrozenRequest[] {
  const cache = new Map<number, number[]>();
  const out: FrozenRequest[] = [];
  for (const ev of events) {
    if (ev.type === "request/frozen") out.push({ seq: ev.seq, event: ev, messageSeqs: resolveMessageSeqs(events, ev.seq, cache) });
  }
  return out;
}

export type AddedKind = "tool result" | "steering" | "user prompt" | "runtime context" | "assistant" | "system" | "other";

export interface RequestDiff {
  from: number | null;
  to: number;
  added: { seq: number; kind: AddedKind; type: string }[];
  removed: number[];
  kept: number;
}

export function classifyAdded(ev: SessionEvent | undefined, prev: FrozenRequest | undefined): AddedKind {
  if (!ev) return "other";
  switch (ev.type) {
    case "tool/result": return "tool result";
    case "assistant/message": return "assistant";
    case "system/message": return "system";
    case "user/message": {
      const m = ev.message;
      if (m?.role === "user" && m.source?.kind === "plugin") return "runtime context";
      // a person's message inside the same turn as the previous request = steering
      if (prev && turnOf(ev) !== undefined && turnOf(prev.event) === turnOf(ev)) return "steering";
      return "user prompt";
    }
    default: return "other";
  }
}

/** What request `to` adds to request `from` (the previous frozen request when omitted). */
export function diffRequests(events: readonly SessionEvent[], reqs: readonly FrozenRequest[], toIndex: number): RequestDiff {
  const to = reqs[toIndex];
  const prev = toIndex > 0 ? reqs[toIndex - 1] : undefined;
  const before = new Set(prev?.messageSeqs ?? []);
  const after = new Set(to.messageSeqs);
  const added = to.messageSeqs.filter((s) => !before.has(s)).map((s) => ({ seq: s, kind: classifyAdded(events[s], prev), type: events[s]?.type ?? "?" }));
  const removed = (prev?.messageSeqs ?? []).filter((s) => !after.has(s));
  return { from: prev ? prev.seq : null, to: to.seq, added, removed, kept: to.messageSeqs.length - added.length };
}
