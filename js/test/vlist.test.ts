// @vitest-environment jsdom
// The inspector's virtual list: only a screenful of rows in the DOM, and after the count shrinks
// (a filter of a 100k-row list scrolled far down) the rows that remain are drawn, not blank space.
import { describe, expect, it } from "vitest";
import { h } from "../src/ui/dom";
import { createVirtualList } from "../src/ui/vlist";

const seqs = (el: HTMLElement) => [...el.querySelectorAll(".row")].map((r) => Number((r as HTMLElement).dataset.i));

describe("virtual list", () => {
  it("renders a screenful of 100,000 rows, then the few left after a filter while scrolled far", () => {
    const list = createVirtualList(26, (i) => h("div", { class: "row", "data-i": i }, String(i)), 380);
    document.body.append(list.el);
    list.setCount(100_000);
    expect(seqs(list.el).slice(0, 3)).toEqual([0, 1, 2]);
    expect(seqs(list.el).length).toBeLessThan(50);
    list.scrollToIndex(99_999);
    expect(seqs(list.el)).toContain(99_999);
    expect(list.el.scrollTop).toBeGreaterThan(2_000_000);
    list.setCount(1); // a search that lists one row
    expect(list.el.scrollTop).toBe(0);
    expect(seqs(list.el)).toEqual([0]);
    list.dispose();
  });
});
