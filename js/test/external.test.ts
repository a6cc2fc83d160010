// External agents' calls (issue 41): the rows the loop widget draws in the external agent's colour.
import { describe, expect, it } from "vitest";
import { externalCalls, externalClientOf, summaryOf } from "../src/model/external";
import { approvalDetail } from "../src/model/approval";
import type { SessionEvent } from "../src/types";

const client = { name: "claude-code", version: "2.1" };
const events = [
  { seq: 0, time: 1, type: "external/call", callId: "x1", tool: "read_notebook", arguments: '{"path":"a.ipynb"}', client, mcpSessionId: "m1", notebook: "a.ipynb" },
  { seq: 1, time: 2, type: "approval/decided", callId: "x1", name: "read_notebook", decision: "allow", by: "mode", decider: "mode", mode: "default" },
  { seq: 2, time: 3, type: "external/result", callId: "x1", tool: "read_notebook", sourceEventSeqs: [0], content: [{ type: "text", text: "cell a1" }, { type: "image", mimeType: "image/png", bytes: 68 }] },
  { seq: 3, time: 4, type: "turn/start", turn: 1 },
  { seq: 4, time: 5, type: "external/call", callId: "x2", tool: "execute_code", arguments: '{"path":"a.ipynb","code":"df.describe()"}', client, turn: 1 },
  { seq: 5, time: 6, type: "approval/asked", callId: "x2", name: "execute_code", mode: "default", decider: "mode" },
  { seq: 6, time: 7, type: "external/call", callId: "x3", tool: "edit_cell", arguments: '{"path":"a.ipynb","cell_id":"c9","source":"x = 1"}', client: { name: "codex" } },
  { seq: 7, time: 8, type: "external/result", callId: "x3", tool: "edit_cell", isError: true, error: { code: "DENIED", message: "plan mode" }, content: [{ type: "text", text: "[DENIED] plan mode" }] },
] as unknown as SessionEvent[];

describe("external calls", () => {
  it("folds calls, decisions and results into rows, in call order", () => {
    const rows = externalCalls(events, new Set(["x2"]));
    expect(rows.map((r) => [r.callId, r.tool, r.client, r.status])).toEqual([
      ["x1", "read_notebook", "claude-code 2.1", "done"], ["x2", "execute_code", "claude-code 2.1", "waiting"],
      ["x3", "edit_cell", "codex", "refused"]]);
    expect(rows[0].result).toBe("cell a1 [image image/png]");
    expect(rows[0].decision).toBe("allow · mode (mode default)");
    expect(rows[1].summary).toBe("df.describe()");
    expect(rows[1].turn).toBe(1);
    expect(externalCalls(events).find((r) => r.callId === "x2")?.status).toBe("running");
  });

  it("says what each tool was asked, in one line", () => {
    expect(summaryOf("insert_cell", '{"cell_id":"a","source":"x\\n= 1"}')).toBe("after a: x = 1");
    expect(summaryOf("read_notebook", '{"cell_ids":["a","b"]}')).toBe("cells a, b");
    expect(summaryOf("ask_agent", "not json")).toBe("");
  });

  it("names the client of a call the banner asks about, and shows its code or source", () => {
    expect(externalClientOf(events, "x2")).toBe("claude-code");
    expect(externalClientOf(events, "c1")).toBeNull();
    expect(approvalDetail("execute_code", '{"code":"rm = 1"}')).toEqual({ kind: "code", code: "rm = 1" });
    expect(approvalDetail("edit_cell", '{"cell_id":"c","source":"y = 2"}')).toEqual({ kind: "code", code: "y = 2" });
  });
});
