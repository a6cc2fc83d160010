import type { SessionEvent } from "../src/types";
import { describe, expect, it } from "vitest";
import { Player, recordedDelay } from "../src/model/playback";
import { playbackSteps, traceToolCalls } from "../src/model/stages";
import { EventFilter, summarize } from "../src/model/summary";
import { eventsOf, readmeRun, ManualScheduler } from "./helpers";

describe("playback", () => {
  it("plays through the stages with the recorded gaps, clamped", () => {
    const events = eventsOf(readmeRun());
    const sched = new ManualScheduler();
    const p = new Player(sched);
    p.setSteps(playbackSteps(traceToolCalls(events), events));
    p.play();
    const delays: number[] = [];
    while (sched.queue.length) delays.push(sched.run() as number);
    expect(p.index).toBe(5);
    expect(p.playing).toBe(false);
    expect(delays[0]).toBe(0);
    for (const d of delays.slice(1)) { expect(d).toBeGreaterThanOrEqual(350); expect(d).toBeLessThanOrEqual(2500); }
    expect(recordedDelay({ call: 0, stage: 1, seq: 0, time: 0 }, { call: 0, stage: 2, seq: 1, time: 1000 })).toBe(1000);
    expect(recordedDelay({ call: 0, stage: 1, seq: 0, time: 0 }, { call: 0, stage: 2, seq: 1, time: 1000 }, 2)).toBe(500);
  });

  it("steps, seeks a stage, pauses", () => {
    const events = eventsOf(readmeRun());
    const sched = new ManualScheduler();
    const p = new Player(sched);
    p.setSteps(playbackSteps(traceToolCalls(events), events));
    p.forward(); p.forward();
    expect(p.current?.stage).toBe(2);
    p.back();
    expect(p.current?.stage).toBe(1);
    expect(p.seekStage(0, 4)).toBe(true);
    expect(p.current).toMatchObject({ stage: 4, seq: 11 });
    p.play();
    p.pause();
    expect(sched.queue).toHaveLength(0);
  });
});

describe("inspector filters", () => {
  it("filters by type, turn, tool and text; summarises rows", () => {
    const events = eventsOf(readmeRun());
    const f = new EventFilter();
    expect(f.apply(events, { type: "tool/result", turn: "", tool: "", text: "" })).toEqual([11]);
    expect(f.apply(events, { type: "", turn: "", tool: "read", text: "" })).toEqual([10, 11]);
    // the inbox splice #0 comes before turn 1 starts
    expect(f.apply(events, { type: "", turn: "1", tool: "", text: "" })).toEqual([...Array(17).keys()].map((i) => i + 1));
    expect(f.apply(events, { type: "", turn: "", tool: "", text: "DEMO-MATH" }).length).toBeGreaterThan(0);
    const o = f.options(events);
    expect(o.tools).toEqual(["read"]);
    expect(o.turns).toEqual([1]);
    expect(summarize(events[10])).toContain("read c1");
    expect(summarize(events[14])).toContain("base #8");
  });

  it("summarises compaction, budgets and rule decisions for the inspector", () => {
    const summary = { seq: 9, time: 1, type: "user/message", turn: 2, surfaceOp: { op: "replace", startSeq: 1, endSeq: 7 },
      message: { role: "user", content: [{ type: "text", text: "Summary of the earlier conversation" }],
        source: { kind: "plugin", plugin: "dsh/compaction", form: "summary" } } } as unknown as SessionEvent;
    expect(summarize(summary)).toMatch(/^\[replaces #1\.\.#7\] \[context dsh\/compaction\] Summary/);
    const compacted = { seq: 10, time: 1, type: "context/compacted", trigger: "context-length", summarySeq: 9, startSeq: 1,
      endSeq: 7, replaced: 6, tokensBefore: 3000, tokensAfter: 900 } as unknown as SessionEvent;
    expect(summarize(compacted)).toBe("context-length · 6 nodes #1..#7 → summary #9 · ~3000 → ~900 tokens");
    const end = { seq: 11, time: 1, type: "turn/end", turn: 2, reason: { kind: "budget", cause: "max-steps", limit: 5 } } as unknown as SessionEvent;
    expect(summarize(end)).toBe("budget (max-steps 5)");
    const decided = { seq: 12, time: 1, type: "approval/decided", callId: "c1", name: "bash", decision: "deny", by: "rule",
      rule: 'rules.json#1 bash "rm *"' } as unknown as SessionEvent;
    expect(summarize(decided)).toBe('bash c1 → deny by rule · rules.json#1 bash "rm *"');
  });
});
