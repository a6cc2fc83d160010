// node <bundle of this file> INPUT.json → for every request/frozen of `{"events": [...]}`: the seqs
// the JS side says it sent (resolveMessageSeqs) and the history derived at that seq (deriveMessages).
import { readFileSync } from "node:fs";
import { resolveMessageSeqs } from "../../src/model/diff";
import { deriveMessages } from "../../src/model/history";
import type { SessionEvent } from "../../src/types";

const path = process.argv[2];
if (!path) {
  console.error("usage: history-main INPUT.json");
  process.exit(2);
}
const events = JSON.parse(readFileSync(path, "utf8")).events as SessionEvent[];
const cache = new Map<number, number[]>();
const out = events
  .filter((ev) => ev.type === "request/frozen")
  .map((ev) => ({
    seq: ev.seq,
    resolved: resolveMessageSeqs(events, ev.seq),
    resolvedCached: resolveMessageSeqs(events, ev.seq, cache),
    derived: deriveMessages(events, ev.seq).map((d) => ({ seq: d.seq, message: d.message })),
  }));
process.stdout.write(JSON.stringify(out) + "\n");
