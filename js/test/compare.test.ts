// @vitest-environment jsdom
import { describe, expect, it } from "vitest";
import { renderCompareInto } from "../src/compare";
import { compareStatus, diffLineKind, type CompareData } from "../src/model/compare";

const side = (seq: number, last: string, response: string) => ({ seq, model: "script:auto", messages: seq, last, responseSeq: seq + 1, response });
const data: CompareData = {
  a: { sessionId: "s_a", events: 30 },
  b: { sessionId: "s_b", events: 28 },
  rows: [
    { turn: 1, step: 1, state: "same", a: side(5, "user: read README.md", "calls read c1"), b: side(5, "user: read README.md", "calls read c1") },
    { turn: 2, step: 1, state: "first", a: side(20, "user: run the tests", "calls bash c1"), b: side(19, "user: what is in src/math.ts?", "calls read c1") },
    { turn: 2, step: 2, state: "after", a: side(25, "tool c1: …", "done"), b: null },
  ],
  agreeing: 1,
  divergence: { what: "request", turn: 2, step: 1, a: { seq: 18, requestSeq: 20 }, b: { seq: 17, requestSeq: 19 }, messageIndex: 5,
    diff: ["--- A request/frozen 20", "+++ B request/frozen 19", "@@ -5 +5 @@", " same", '-{"role": "user", "text": "run the tests"}', '+{"role": "user", "text": "what is in src/math.ts?"}'] },
};

describe("compare widget", () => {
  it("says where the sessions first diverge, in the CLI's words", () => {
    expect(compareStatus(data)).toBe("first divergence: A seq 18, B seq 17 (turn 2 step 1: the requests differ at message 5) · 1 step agrees before it");
    expect(compareStatus({ ...data, divergence: null })).toBe("no divergence: the sessions agree on all 3 steps");
    expect(["--- a", "+++ b", "@@ -1 +1 @@", "-x", "+y", " z"].map(diffLineKind)).toEqual(["head", "head", "hunk", "del", "add", "ctx"]);
  });

  it("draws both sessions by turn and step, marks the first divergence and puts the diff under it", () => {
    const root = document.createElement("div");
    const first = renderCompareInto(root, data);
    const rows = [...root.querySelectorAll("tr.dsh-cmp-row")];
    expect(rows.map((r) => r.getAttribute("data-state"))).toEqual(["same", "first", "after"]);
    expect(first).toBe(rows[1]);
    expect(first?.getAttribute("aria-current")).toBe("true");
    expect(first?.textContent).toContain("first divergence");
    expect(first?.textContent).toContain("what is in src/math.ts?");
    const diffRow = first?.nextElementSibling as HTMLElement;
    expect(diffRow.classList.contains("dsh-cmp-diffrow")).toBe(true);
    expect([...diffRow.querySelectorAll(".dsh-cmp-line")].map((l) => l.className.split(" ")[1])).toEqual(
      ["dsh-cmp-head", "dsh-cmp-head", "dsh-cmp-hunk", "dsh-cmp-ctx", "dsh-cmp-del", "dsh-cmp-add"]);
    expect(rows[2].querySelectorAll("td")[2].textContent).toBe("B has no such step");
    expect(root.querySelector(".dsh-cmp-status")?.textContent).toMatch(/^first divergence: A seq 18, B seq 17/);
  });

  it("without a divergence nothing is marked", () => {
    const root = document.createElement("div");
    const rows = data.rows.slice(0, 1);
    expect(renderCompareInto(root, { ...data, rows, divergence: null })).toBeNull();
    expect(root.querySelector(".dsh-cmp-first, .dsh-cmp-diffrow")).toBeNull();
  });
});
