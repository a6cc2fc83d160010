// @vitest-environment jsdom
// What the timeline and the waterfall share (ui/axis.ts): the ticks' step, the zoom keys, one
// redraw a frame while a view scrolls.
import { describe, expect, it } from "vitest";
import { niceStep, redrawOnScroll, zoomKey } from "../src/ui/axis";
import { button } from "../src/ui/dom";

const frame = () => new Promise<void>((r) => (typeof requestAnimationFrame === "function" ? requestAnimationFrame(() => r()) : setTimeout(r, 16)));

describe("the time axes' shared parts", () => {
  it("steps the ticks by 1, 2 or 5 times a power of ten", () => {
    expect([0.3, 1, 7, 12, 180, 2001, 45_000].map(niceStep)).toEqual([0.5, 1, 10, 20, 200, 5000, 50_000]);
  });

  it("takes + = − _ 0 as zoom keys and nothing else", () => {
    const done: string[] = [];
    const keys = { zoomIn: () => done.push("in"), zoomOut: () => done.push("out"), reset: () => done.push("reset") };
    expect(["+", "=", "-", "_", "0", "[", "ArrowRight", "a"].map((k) => zoomKey(k, keys))).toEqual([true, true, true, true, true, false, false, false]);
    expect(done).toEqual(["in", "in", "out", "out", "reset"]);
  });

  it("redraws once a frame however often the view scrolls", async () => {
    const el = document.createElement("div");
    let draws = 0;
    redrawOnScroll(el, () => draws++);
    for (let i = 0; i < 5; i++) el.dispatchEvent(new Event("scroll"));
    expect(draws).toBe(0);
    await frame();
    expect(draws).toBe(1);
    el.dispatchEvent(new Event("scroll"));
    await frame();
    expect(draws).toBe(2);
  });

  it("makes a toolbar button named by its title", () => {
    let clicks = 0;
    const b = button("dsh-tl-in", "+", "zoom in (+)", () => clicks++);
    b.click();
    expect([b.className, b.type, b.textContent, b.getAttribute("aria-label"), clicks]).toEqual(["dsh-btn dsh-tl-in", "button", "+", "zoom in (+)", 1]);
  });
});
