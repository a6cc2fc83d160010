// @vitest-environment jsdom
// Issue 24: "1 items", "10000" beside "2,373" — counts are pluralised and carry thousands separators.
import { describe, expect, it } from "vitest";
import { countOf, fmtInt } from "../src/model/counts";
import { jsonTree } from "../src/ui/json";

describe("counts in summaries", () => {
  it("pluralise and separate thousands", () => {
    expect(countOf(1, "item")).toBe("1 item");
    expect(countOf(0, "event")).toBe("0 events");
    expect(countOf(10000, "event")).toBe("10,000 events");
    expect(fmtInt(2373)).toBe("2,373");
    expect(fmtInt(999)).toBe("999");
  });

  it("a collapsed JSON array of one reads 1 item, an object of one 1 key", () => {
    const tree = jsonTree({ a: [1], b: { c: 2 } }, {}, 1);
    const summaries = [...tree.querySelectorAll(".dsh-j-summary")].map((e) => e.textContent);
    expect(summaries).toContain("[ 1 item ]");
    expect(summaries).toContain("{ 1 key }");
    expect(summaries.join(" ")).not.toMatch(/\b1 (items|keys)\b/);
  });
});
