// @vitest-environment jsdom
// Narrow panes: where a value may break (after separators, before a dot between letters, never
// inside a word), the width classes, and a stage card's value in a saved loop widget (textContent
// unchanged, the full value in the title).
import { afterEach, describe, expect, it } from "vitest";
import type { FollowItem } from "../src/types";
import { breakPoints, keepTabInView, paneWidth, softBreaks } from "../src/ui/narrow";
import { FakeModel, mount, waitFor } from "./fake-model";
import { eventsOf, readmeRun } from "./helpers";

let cleanups: (() => void)[] = [];
afterEach(() => { for (const c of cleanups) c(); cleanups = []; document.body.innerHTML = ""; });

describe("breakPoints", () => {
  it("breaks after path and name separators, before a dot between letters", () => {
    expect(breakPoints("src/README.md")).toEqual(["src/", "README", ".md"]);
    expect(breakPoints("derive_messages")).toEqual(["derive_", "messages"]);
    expect(breakPoints("adapter.stream")).toEqual(["adapter", ".stream"]);
    expect(breakPoints("#32 request/frozen")).toEqual(["#32 request/", "frozen"]);
    expect(breakPoints("/tmp/dsh-demo-x1/demo")).toEqual(["/tmp/", "dsh-", "demo-", "x1/", "demo"]);
  });

  it("keeps words, numbers, leading separators and separator runs whole", () => {
    for (const text of ["README", "2.09 s", "run -x", "a::b", "#27 bash · c4", "", "x/"]) {
      expect(breakPoints(text)).toEqual([text]);
    }
    // the pieces always join back to the text
    const t = "s_abc · /home/t/agents-2026/week_3 · 36 events · idle";
    expect(breakPoints(t).join("")).toBe(t);
  });

  it("softBreaks puts a <wbr> between the pieces and adds no text", () => {
    const el = document.createElement("div");
    el.append(...softBreaks("src/README.md"));
    expect(el.textContent).toBe("src/README.md");
    expect(el.querySelectorAll("wbr").length).toBe(2);
  });
});

describe("pane widths", () => {
  it("narrow under 640 px, medium under 900 px, else wide", () => {
    expect([paneWidth(520), paneWidth(639), paneWidth(640), paneWidth(760), paneWidth(899), paneWidth(900), paneWidth(1400)])
      .toEqual(["narrow", "narrow", "medium", "medium", "medium", "wide", "wide"]);
  });

  it("keepTabInView leaves a row that fits alone", () => {
    const row = document.createElement("div");
    row.innerHTML = '<button role="tab" aria-selected="false">a</button><button role="tab" aria-selected="true">b</button>';
    keepTabInView(row); // jsdom lays nothing out: scrollWidth 0 = fits
    expect(row.scrollLeft).toBe(0);
  });
});

describe("stage values in the loop widget", () => {
  it("carry the full value in the title, with break points and unchanged text", async () => {
    const events = eventsOf(readmeRun());
    const items = [{ type: "snapshot", sessionId: "s_saved", cursor: events.length - 1, events }] as unknown as FollowItem[];
    const { el, cleanup } = mount(new FakeModel({ kind: "loop", session_id: "s_saved", readonly: true, error: "", create_args: {} }, items));
    cleanups.push(cleanup);
    await waitFor(() => el.querySelector('.dsh-stage[data-stage="1"] .dsh-stage-value')?.textContent !== "—");
    const values = [...el.querySelectorAll<HTMLElement>(".dsh-stage-value")];
    expect(values.length).toBe(6);
    for (const v of values) expect(v.getAttribute("title")).toBe(v.textContent);
    // a saved session opens at its first step: 05 and 06 name what will run
    const [five, six] = [values[4], values[5]];
    expect([five.textContent, six.textContent]).toEqual(["derive_messages", "adapter.stream"]);
    expect([five.querySelectorAll("wbr").length, six.querySelectorAll("wbr").length]).toEqual([1, 1]);
  });
});
