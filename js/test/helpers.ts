import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { FollowItem, SessionEvent } from "../src/types";

const here = dirname(fileURLToPath(import.meta.url));

/** The follow items of a real run (scripted `readme` scenario through the real Host). */
export function readmeRun(): FollowItem[] {
  return JSON.parse(readFileSync(resolve(here, "fixtures/readme-run.json"), "utf8")) as FollowItem[];
}

export function eventsOf(items: FollowItem[]): SessionEvent[] {
  const out: SessionEvent[] = [];
  for (const it of items) {
    if (it.type === "snapshot") out.push(...it.events);
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
