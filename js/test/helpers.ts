import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { Scheduler } from "../src/model/playback";
import type { FollowItem, SessionEvent } from "../src/types";

const here = dirname(fileURLToPath(import.meta.url));

/** The follow items of a real run (scripted `readme` scenario through the real Host). */
export function readmeRun(): FollowItem[] {
  return JSON.parse(readFileSync(resolve(here, "fixtures/readme-run.json"), "utf8")) as FollowItem[];
}

export function eventsOf(items: FollowItem[]): SessionEvent[] {
  const out: SessionEvent[] = [];
  for (const it of items) {
    if (it.type === "snapshot") out.push(...(it.events ?? []));
    else if (it.type === "event") out.push(it.event);
  }
  return out;
}

let t = 1_700_000_000_000;
/** Build a dense log from partial events (seq and time stamped in order). */
export function log(...parts: Partial<SessionEvent>[]): SessionEvent[] {
  return parts.map((p, i) => ({ ...p, seq: i, time: p.time ?? (t += 10), type: p.type ?? "turn/start" }) as SessionEvent);
}
export const user = (text: string, extra: Record<string, unknown> = {}) => ({ role: "user" as const, content: [{ type: "text" as const, text }], source: { kind: "user" as const, ...extra } });
export const ctx = (text: string) => ({ role: "user" as const, content: [{ type: "text" as const, text }], source: { kind: "plugin" as const, plugin: "ctx" } });
export const call = (id: string, name = "read", args = '{"file_path":"README.md"}') => ({ type: "tool-call" as const, id, name, arguments: args });
export const toolMsg = (id: string, text: string, isError = false) => ({ role: "tool" as const, toolCallId: id, content: [{ type: "text" as const, text }], isError });

/** A recorded real run (js/test/fixtures/streams/NAME.jsonl, written by
 *  tests/fixtures/record_streams.py): its follow items, in order. */
export function streamItems(name: string): FollowItem[] {
  const lines = readFileSync(resolve(here, `fixtures/streams/${name}.jsonl`), "utf8").split("\n").filter((l) => l.trim());
  const follows = new Set<string>();
  const out: FollowItem[] = [];
  for (const text of lines) {
    const { dir, msg } = JSON.parse(text) as { dir: string; msg: { type: string; streamId?: string; endpoint?: string; value?: unknown } };
    if (dir === "out" && msg.type === "open" && msg.endpoint === "session/follow") follows.add(String(msg.streamId));
    if (dir === "in" && msg.type === "item" && follows.has(String(msg.streamId))) out.push(msg.value as FollowItem);
  }
  return out;
}

/** A hand-built follow item (tests of edge cases build partial ones). */
export const item = (x: unknown): FollowItem => x as FollowItem;

/** A scheduler the test runs by hand: `run()` fires the next timer and returns its delay. */
export class ManualScheduler implements Scheduler {
  queue: { fn: () => void; ms: number }[] = [];
  set(fn: () => void, ms: number) { const h = { fn, ms }; this.queue.push(h); return h; }
  clear(h: unknown) { this.queue = this.queue.filter((x) => x !== h); }
  run() { const h = this.queue.shift(); h?.fn(); return h?.ms; }
}
