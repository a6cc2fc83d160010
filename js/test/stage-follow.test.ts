import { describe, expect, it } from "vitest";
import { approvalDetail, lineDiff, waitingKey } from "../src/model/approval";
import { deriveMessages } from "../src/model/history";
import { historyFocus } from "../src/model/history-focus";
import { liveDwell, Player, SPEEDS } from "../src/model/playback";
import { questionFor, reveal } from "../src/model/predict";
import { resolveMessageSeqs } from "../src/model/diff";
import { playbackSteps, traceToolCalls } from "../src/model/stages";
import { eventsOf, streamItems, ManualScheduler } from "./helpers";

const fix = () => {
  const events = eventsOf(streamItems("fix-tests"));
  const traces = traceToolCalls(events);
  return { events, traces, steps: playbackSteps(traces, events) };
};

describe("approval detail", () => {
  it("shows the full bash command, the edit as old → new lines, a write as added lines", () => {
    expect(approvalDetail("bash", '{"command": "node test/run.mjs && echo ok"}')).toEqual({ kind: "command", command: "node test/run.mjs && echo ok" });
    const edit = approvalDetail("edit", JSON.stringify({ file_path: "src/math.ts", old_string: "export function sub(a, b) {\n  return a - b + 1;\n}", new_string: "export function sub(a, b) {\n  return a - b;\n}" }));
    expect(edit).toEqual({ kind: "edit", path: "src/math.ts", replaceAll: false, lines: [
      { op: " ", text: "export function sub(a, b) {" }, { op: "-", text: "  return a - b + 1;" }, { op: "+", text: "  return a - b;" }, { op: " ", text: "}" }] });
    expect(approvalDetail("write", '{"file_path": "a.txt", "content": "x\\ny"}')).toEqual({ kind: "write", path: "a.txt", lines: [{ op: "+", text: "x" }, { op: "+", text: "y" }] });
    expect(approvalDetail("python", '{"code": "print(1)"}')).toEqual({ kind: "code", code: "print(1)" });
    expect(approvalDetail("bash", "not json")).toEqual({ kind: "args", text: "not json" });
    // issue 21: the whole command, space runs collapsed, invisible characters escaped
    const hidden = `echo hello${" ".repeat(400)}; touch MARKER \u202e\x1b[2K\t`;
    expect(approvalDetail("bash", JSON.stringify({ command: hidden }))).toEqual({ kind: "command", command: "echo hello ; touch MARKER \\u202e\\x1b[2K\\t" });
    expect(approvalDetail("python", JSON.stringify({ code: "a = 1\n\tb = '\u200b'" }))).toEqual({ kind: "code", code: "a = 1\n\tb = '\\u200b'" });
    expect(lineDiff("a\nb", "a\nb")).toEqual([{ op: " ", text: "a" }, { op: " ", text: "b" }]);
    expect(waitingKey([{ callId: "c1", name: "bash", reason: null, arguments: "{}" }])).not.toBe(waitingKey([]));
  });
});

describe("history follows the stage", () => {
  it("01 the assistant message, 04 the tool message new, 05 derived with it new, 06 the frozen seqs with the new ones", () => {
    const { events, traces } = fix();
    const c2 = traces[1];
    const at = (seq: number) => deriveMessages(events, seq).map((d) => d.seq);
    const s1 = historyFocus(events, c2, 1, at(c2.assistantSeq as number));
    expect(s1).toMatchObject({ current: 16, fresh: [16] });
    const s4 = historyFocus(events, c2, 4, at(c2.resultSeq as number));
    expect(s4).toMatchObject({ current: 19, fresh: [19] });
    const s5 = historyFocus(events, c2, 5, at(c2.deriveSeq as number));
    expect(s5.current).toBe(19);
    expect(s5.fresh).toEqual([]); // 05 adds no message: the tool message was new at 04, not here
    expect(s5.change).toContain("#19 (committed at 04)");
    const frozen = resolveMessageSeqs(events, c2.frozenSeq as number);
    const s6 = historyFocus(events, c2, 6, frozen);
    expect(s6.current).toBe(19);
    expect(s6.fresh).toEqual([]); // "new at this stage" only where the event happened
    expect(s6.inRequest).toEqual([16, 19]); // request #22 adds the assistant message and the tool message to #15 (#18: its approval/decided)
    expect(s6.change).toContain("#16, #19");
    expect(historyFocus(events, undefined, 0, [])).toEqual({ current: null, fresh: [], change: "" });
  });
});

describe("pacing", () => {
  it("speed scales the step interval; step-only never auto-advances; a gate holds the player", () => {
    const { steps } = fix();
    const delays = (speed: number) => {
      const sched = new ManualScheduler();
      const p = new Player(sched);
      p.setSteps(steps);
      p.setSpeed(speed);
      p.play();
      sched.run(); // the first step at once
      const out: number[] = [];
      for (let i = 0; i < 5; i++) { out.push(sched.queue[0].ms); sched.run(); }
      expect(p.lastDelay).toBe(sched.queue[0].ms); // the delay of the step scheduled last
      return out;
    };
    const d = SPEEDS.map((sp) => delays(sp));
    for (let i = 0; i < 5; i++) { expect(d[0][i]).toBe(2 * d[1][i]); expect(d[1][i]).toBe(2 * d[2][i]); expect(d[2][i]).toBe(2 * d[3][i]); }

    const sched = new ManualScheduler();
    const p = new Player(sched);
    p.setSteps(steps);
    p.setStepOnly(true);
    p.play();
    expect(p.playing).toBe(false);
    expect(sched.queue).toHaveLength(0);
    p.forward(); p.forward();
    expect(p.index).toBe(1);
    p.back();
    expect(p.index).toBe(0);

    p.setStepOnly(false);
    p.gate = (i) => i === 3;
    p.play();
    while (sched.queue.length) sched.run();
    expect(p.index).toBe(2);
    expect(p.playing).toBe(false);
    p.forward();
    expect(p.index).toBe(2);
  });

  it("live dwell: none when caught up, shorter when far behind and at a higher speed", () => {
    expect(liveDwell(0, 1)).toBe(0);
    expect(liveDwell(1, 1)).toBe(320);
    expect(liveDwell(12, 1)).toBeLessThan(liveDwell(2, 1));
    expect(liveDwell(2, 4)).toBeLessThan(liveDwell(2, 1));
    expect(liveDwell(100, 4)).toBe(60);
  });
});

describe("predict, then reveal", () => {
  it("asks the arguments before 01, the sourceEventSeqs before 04, the messages before 06, and reveals the real values", () => {
    const { events, traces, steps } = fix();
    const kinds = steps.map((_, i) => questionFor(steps, i, traces, events)?.kind ?? null);
    expect(kinds.filter((k) => k === "arguments")).toHaveLength(4);
    expect(kinds.filter((k) => k === "sources")).toHaveLength(4);
    expect(kinds.filter((k) => k === "messages")).toHaveLength(4);
    expect(kinds[0]).toBe("arguments");

    const qa = questionFor(steps, 0, traces, events);
    expect(qa?.callId).toBe("c1");
    if (!qa) throw new Error("no question");
    expect(reveal(qa, { kind: "arguments", text: '{"command":"node test/run.mjs"}' }, traces, events).match).toBe(true);
    expect(reveal(qa, { kind: "arguments", text: "run node test/run.mjs" }, traces, events).match).toBe(true); // free text with the value
    const wrong = reveal(qa, { kind: "arguments", text: '{"command":"npm test"}' }, traces, events);
    expect(wrong.match).toBe(false);
    expect(wrong.marks).toEqual([{ label: "command", guess: "npm test", real: "node test/run.mjs", match: false }]);
    expect(reveal(qa, { kind: "unsure" }, traces, events).match).toBe(false);

    const qs = questionFor(steps, kinds.indexOf("sources"), traces, events);
    if (!qs) throw new Error("no question");
    expect(qs.options.map((o) => o.seq)).toContain(10);
    const rs = reveal(qs, { kind: "sources", seqs: [10] }, traces, events);
    expect(rs).toMatchObject({ match: true, real: "[10]" });
    expect(reveal(qs, { kind: "sources", seqs: [9, 10] }, traces, events).match).toBe(false);

    const qm = questionFor(steps, kinds.indexOf("messages"), traces, events);
    if (!qm) throw new Error("no question");
    expect(qm.options.map((o) => o.seq)).toEqual([4, 5, 6, 9, 12]);
    const rm = reveal(qm, { kind: "messages", seqs: [5, 9, 12] }, traces, events);
    expect(rm.match).toBe(false);
    expect(rm.real).toBe("[4, 5, 6, 9, 12]");
    expect(rm.marks.filter((m) => !m.match).map((m) => m.label.split(" ")[0])).toEqual(["#4", "#6"]);
    expect(reveal(qm, { kind: "messages", seqs: [4, 5, 6, 9, 12] }, traces, events).match).toBe(true);
  });
});
