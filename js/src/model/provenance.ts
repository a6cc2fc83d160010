// Provenance both ways: what an event cites (sourceEventSeqs) and what cites it.
import type { SessionEvent } from "../types";

export class ProvenanceIndex {
  private readonly citedBy = new Map<number, number[]>();
  private indexedThrough = -1;

  /** Index events incrementally (call again when more arrived). */
  update(events: readonly SessionEvent[]): void {
    for (let i = this.indexedThrough + 1; i < events.length; i++) {
      const ev = events[i];
      if (!ev) continue; // a window of the session: nothing below its first seq
      for (const s of ev.sourceEventSeqs ?? []) {
        const list = this.citedBy.get(s);
        if (list) list.push(ev.seq);
        else this.citedBy.set(s, [ev.seq]);
      }
    }
    this.indexedThrough = events.length - 1;
  }

  cites(ev: SessionEvent): number[] {
    return ev.sourceEventSeqs ? [...ev.sourceEventSeqs] : [];
  }

  citing(seq: number): number[] {
    return this.citedBy.get(seq) ?? [];
  }
}

export function buildProvenance(events: readonly SessionEvent[]): ProvenanceIndex {
  const p = new ProvenanceIndex();
  p.update(events);
  return p;
}
