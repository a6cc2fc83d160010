// @vitest-environment jsdom
import { describe, expect, it } from "vitest";
import { pressGuard } from "../src/ui/dom";

const press = (el: Element, type: string) => el.dispatchEvent(new Event(type, { bubbles: true, cancelable: true }));
const tick = () => new Promise((r) => setTimeout(r, 5));

describe("pressGuard: a click is never split across two renders", () => {
  it("holds renders while a button is pressed and renders once after the release", async () => {
    const root = document.createElement("div");
    const card = document.createElement("button");
    root.append(card);
    document.body.append(root);
    let renders = 0;
    const guard = pressGuard(root, () => { renders += 1; });
    expect(guard.hold()).toBe(false);
    press(card, "pointerdown");
    expect(guard.hold()).toBe(true);   // a frame during the press waits
    expect(guard.hold()).toBe(true);
    press(card, "pointerup");
    expect(guard.hold()).toBe(false);
    expect(renders).toBe(0);           // not before the click is dispatched
    await tick();
    expect(renders).toBe(1);           // the held frames come as one render
    press(card, "pointerdown");
    press(card, "pointerup");
    await tick();
    expect(renders).toBe(1);           // nothing held back: nothing to redo
    guard.dispose();
    press(card, "pointerdown");
    expect(guard.hold()).toBe(false);
    root.remove();
  });

  it("does not hold for text fields and sliders, which keep their nodes", () => {
    const root = document.createElement("div");
    const range = document.createElement("input");
    range.type = "range";
    const text = document.createElement("textarea");
    root.append(range, text);
    const guard = pressGuard(root, () => undefined);
    press(range, "pointerdown");
    expect(guard.hold()).toBe(false);
    press(text, "pointerdown");
    expect(guard.hold()).toBe(false);
    guard.dispose();
  });
});
