import { describe, expect, it } from "vitest";
import type { PauseState } from "../src/types";
import { ClientSessionModel } from "../src/fold";
import {
  breakArgs, checkEdit, editArgs, editorText, parseTools, pauseKey, pauseLabel, pausedAt, refusal, stageKey, stageNo, toggleStage,
} from "../src/model/debug";
import { streamItems } from "./helpers";

/** A pause (stage 04 unless `p` says otherwise); its payload a stage-05 history unless given. */
const pause = (p: Partial<PauseState>): PauseState =>
  ({ stage: "04", callId: null, seq: null, name: null, editable: null, payload: { messageSeqs: [], messages: [] }, ...p });

describe("debugger model: breakpoints", () => {
  it("toggles stages on and off, sorted, keeping the tools filter", () => {
    let bp = { stages: [] as ("01" | "02" | "03" | "04" | "05" | "06")[], tools: ["bash"] };
    bp = toggleStage(bp, "06");
    bp = toggleStage(bp, "03");
    expect(bp).toEqual({ stages: ["03", "06"], tools: ["bash"] });
    bp = toggleStage(bp, "06");
    expect(bp.stages).toEqual(["03"]);
    expect(breakArgs("s_1", bp)).toEqual({ sessionId: "s_1", action: "break", stages: ["03"], tools: ["bash"] });
    expect(breakArgs("s_1", { stages: [], tools: [] })).toEqual({ sessionId: "s_1", action: "break", stages: [] });
  });

  it("parses a tools filter and converts stage numbers", () => {
    expect(parseTools(" bash, read  grep,,bash ")).toEqual(["bash", "read", "grep"]);
    expect(parseTools("   ")).toEqual([]);
    expect(stageKey(4)).toBe("04");
    expect(stageNo("06")).toBe(6);
    expect(stageNo("09")).toBe(0);
  });
});

describe("debugger model: the pause", () => {
  it("labels the pause and gives each pause its own identity", () => {
    const p = pause({ callId: "c3", name: "bash", seq: 12 });
    expect(pauseLabel(p)).toBe("paused at 04 · c3 (bash)");
    expect(pauseLabel(pause({ stage: "06" }))).toBe("paused at 06");
    // a call-less pause names its event: which of the turn's requests is held
    expect(pauseLabel(pause({ stage: "06", seq: 16 }))).toBe("paused at 06 · request/frozen #16");
    expect(pauseLabel(pause({ stage: "01", seq: 9 }))).toBe("paused at 01 · assistant/message #9");
    expect(pauseLabel(pause({ stage: "05", seq: 3 }))).toBe("paused at 05");
    expect(pauseKey(p)).not.toBe(pauseKey({ ...p, stage: "05" }));
  });

  it("the diagram follows the paused call and stage (05–06: the latest call)", () => {
    const traces = [{ callId: "c1", index: 0 }, { callId: "c2", index: 1 }];
    expect(pausedAt(pause({ stage: "03", callId: "c1" }), traces)).toEqual({ call: traces[0], stage: 3 });
    expect(pausedAt(pause({ stage: "06" }), traces)).toEqual({ call: traces[1], stage: 6 });
  });

  it("prefills the editor with the stage's value from a real pause (recorded run)", () => {
    const fold = new ClientSessionModel();
    const items = streamItems("debugger");
    for (const it of items.slice(0, items.findIndex((i) => i.type === "paused") + 1)) fold.apply(it);
    const p = fold.paused as PauseState;
    expect(p.stage).toBe("04");
    const text = editorText(p) as string;
    expect(JSON.parse(text)).toContain("# demo-math"); // the read result, as a JSON string
    expect(checkEdit("result", text)).toEqual({ ok: true, value: (p.payload as { result: string }).result });
    expect(editArgs("s_1", p, "x")).toEqual({ sessionId: "s_1", action: "edit", target: "result", callId: "c1", value: "x" });
  });

  it("prefills arguments parsed and request messages as JSON", () => {
    const args = editorText(pause({ stage: "03", editable: "arguments", payload: { callId: "c1", name: "bash", seq: 3, arguments: '{"command":"ls"}' } }));
    expect(JSON.parse(args as string)).toEqual({ command: "ls" });
    const raw = editorText(pause({ stage: "02", editable: "arguments", payload: { callId: "c1", name: "bash", seq: 3, arguments: "{not json" } }));
    expect(JSON.parse(raw as string)).toBe("{not json");
    const msgs = [{ role: "user" as const, content: [{ type: "text" as const, text: "hi" }] }];
    expect(JSON.parse(editorText(pause({ stage: "06", editable: "request", payload: { seq: 4, provider: "fake", model: "m", messages: msgs, tools: [] } })) as string)).toEqual(msgs);
    expect(editorText(pause({ stage: "05" }))).toBeNull();
  });
});

describe("debugger model: checking an edit before it is sent", () => {
  it("refuses text that is not JSON", () => {
    const r = checkEdit("result", "all tests passed");
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toMatch(/^not valid JSON/);
    expect(!r.ok && r.code).toBe("BAD_JSON");
    expect(!r.ok && refusal(r)).toMatch(/^Not sent — BAD_JSON: not valid JSON/);
  });

  it("checks the shape of each target", () => {
    expect(checkEdit("arguments", '{"command": "ls"}')).toEqual({ ok: true, value: { command: "ls" } });
    const notObject = checkEdit("arguments", '["src/math.ts"]');
    expect(!notObject.ok && refusal(notObject)).toBe('Not sent — BAD_EDIT: the arguments must be a JSON object, like {"command": "ls"}');
    expect(checkEdit("result", '"MARKER"')).toEqual({ ok: true, value: "MARKER" });
    expect(checkEdit("result", '{"text": "x"}').ok).toBe(false);
    expect(checkEdit("request", "[]").ok).toBe(false);
    const bad = checkEdit("request", '[{"role": "robot", "content": []}]');
    expect(!bad.ok && bad.error).toContain("message 0");
    expect(checkEdit("request", '[{"role": "tool", "content": [{"type": "text", "text": "x"}]}]').ok).toBe(false);
    expect(checkEdit("request", '[{"role": "user", "content": [{"type": "text", "text": 3}]}]').ok).toBe(false);
    const good = '[{"role": "user", "content": [{"type": "text", "text": "hi"}]}, {"role": "tool", "toolCallId": "c1", "content": [{"type": "text", "text": "x"}]}]';
    expect(checkEdit("request", good).ok).toBe(true);
  });
});
