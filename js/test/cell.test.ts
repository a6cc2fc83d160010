import { describe, expect, it } from "vitest";
import { fromCell } from "../src/model/cell";
import { summarize } from "../src/model/summary";
import { messageOf, type SessionEvent } from "../src/types";

const user = (cell?: { cellId?: string; executionCount?: number }): SessionEvent => ({
  seq: 3, time: 1, type: "user/message", turn: 1,
  message: { role: "user", content: [{ type: "text", text: "hello" }], source: { kind: "user", requestId: "r1", cell } },
});

describe("from cell [n]", () => {
  it("labels a user message with the cell that sent it", () => {
    expect(fromCell(messageOf(user({ cellId: "abc", executionCount: 4 })))).toBe("from cell [4]");
    expect(fromCell(messageOf(user({ cellId: "abc" })))).toBe("from a cell");
    expect(fromCell(messageOf(user()))).toBe("");
    expect(summarize(user({ executionCount: 7 }))).toBe("from cell [7] · hello");
    expect(summarize(user())).toBe("hello");
  });
});
