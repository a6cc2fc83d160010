// @vitest-environment jsdom
// Classroom a11y: keys stay in the widget, arrows rove, Space/Enter activate, focus survives
// re-renders, ARIA states, the loop's return arc and legend, payload cards at each stage.
import { afterEach, describe, expect, it } from "vitest";
import { focusCards, notYetText, OPEN_ALL, stageOfType, toolOutputText } from "../src/model/card-focus";
import { payloadCards } from "../src/model/cards";
import { CallTracer } from "../src/model/stages";
import type { FollowItem } from "../src/types";
import { focusKeyOf, isolateKeys, keepFocus, roveIndex } from "../src/ui/a11y";
import { clickerAction } from "../src/ui/clicker";
import { listIndex } from "../src/ui/list-keys";
import { FakeModel, mount, tick, waitFor } from "./fake-model";
import { eventsOf, readmeRun } from "./helpers";

let cleanups: (() => void)[] = [];
afterEach(() => { for (const c of cleanups) c(); cleanups = []; document.body.innerHTML = ""; });
const key = (el: Element, k: string) => el.dispatchEvent(new KeyboardEvent("keydown", { key: k, bubbles: true, cancelable: true }));
const current = (el: HTMLElement) => el.querySelector(".dsh-stage[aria-current=step]")?.getAttribute("data-stage");

function savedLoop(kind: "loop" | "inspector" = "loop"): HTMLElement {
  const events = eventsOf(readmeRun());
  const items = [{ type: "snapshot", sessionId: "s_saved", cursor: events.length - 1, events }] as unknown as FollowItem[];
  const { el, cleanup } = mount(new FakeModel({ kind, session_id: "s_saved", readonly: true, error: "", create_args: {} }, items));
  cleanups.push(cleanup);
  return el;
}

describe("pure parts", () => {
  it("roveIndex and listIndex clamp at the ends and ignore other keys", () => {
    expect(roveIndex("ArrowRight", 0, 6, "horizontal")).toBe(1);
    expect(roveIndex("ArrowRight", 5, 6, "horizontal")).toBe(5);
    expect(roveIndex("ArrowDown", 2, 6, "horizontal")).toBeNull();
    expect(roveIndex("ArrowUp", 2, 6, "both")).toBe(1);
    expect(roveIndex("End", 2, 6)).toBe(5);
    expect(roveIndex("b", 2, 6)).toBeNull();
    expect(listIndex("ArrowDown", -1, 4)).toBe(0);
    expect(listIndex("PageDown", 1, 40)).toBe(11);
    expect(listIndex("ArrowUp", 0, 4)).toBe(0);
    expect(listIndex("a", 1, 4)).toBeNull();
  });

  it("focus keys ignore state classes, so the re-rendered twin is found", () => {
    const a = document.createElement("button");
    a.className = "dsh-tab dsh-tab-on";
    a.dataset.view = "history";
    const b = document.createElement("button");
    b.className = "dsh-tab";
    b.dataset.view = "history";
    expect(focusKeyOf(a)).toBe(focusKeyOf(b));
    b.dataset.view = "roles";
    expect(focusKeyOf(a)).not.toBe(focusKeyOf(b));
  });

  it("keepFocus gives focus back to the equivalent element after the DOM is replaced", () => {
    const root = document.createElement("div");
    document.body.append(root);
    const draw = (n: number) => { root.innerHTML = ""; for (let i = 0; i < 3; i++) { const s = document.createElement("li"); s.tabIndex = -1; s.dataset.fkey = `stage-${i}`; s.textContent = `${n}`; root.append(s); } };
    draw(0);
    (root.children[2] as HTMLElement).focus();
    keepFocus(root, () => draw(1))();
    expect(document.activeElement?.getAttribute("data-fkey")).toBe("stage-2");
    expect(document.activeElement?.textContent).toBe("1");
  });

  it("isolateKeys: the document never sees keys typed inside; the target's own handler does", () => {
    const outer = document.createElement("div");
    const root = document.createElement("div");
    const input = document.createElement("textarea");
    root.append(input);
    outer.append(root);
    document.body.append(outer);
    const seen: string[] = [];
    const onDoc = (e: Event) => seen.push(`doc:${(e as KeyboardEvent).key}`);
    document.addEventListener("keydown", onDoc);
    input.addEventListener("keydown", (e) => seen.push(`input:${e.key}`));
    const off = isolateKeys(root);
    expect(root.getAttribute("data-lm-suppress-shortcuts")).toBe("true");
    key(input, "b");
    expect(seen).toEqual(["input:b"]);
    off();
    key(input, "d");
    expect(seen).toEqual(["input:b", "input:d", "doc:d"]);
    document.removeEventListener("keydown", onDoc);
  });

  it("payload cards: events not yet happened are placeholders naming their stage; the stage's card opens in full", () => {
    const events = eventsOf(readmeRun());
    const call = new CallTracer().update(events)[0];
    expect(stageOfType("tool/result")).toBe(4);
    expect(notYetText("tool/result")).toBe("not yet — comes at stage 04");
    const at1 = focusCards(payloadCards(events, call, call.assistantSeq as number), 1);
    const result1 = at1.find((c) => c.type === "tool/result");
    expect(result1?.event).toBeUndefined();
    expect(result1?.placeholder).toMatch(/^not yet — comes at stage 04\./);
    expect(at1.find((c) => c.type === "request/frozen")?.placeholder).toMatch(/^not yet — comes at stage 06/);
    const msg1 = at1.find((c) => c.type === "assistant/message");
    expect(msg1?.current).toBe(true);
    expect(msg1?.open).toBe(OPEN_ALL);
    const at4 = focusCards(payloadCards(events, call, call.resultSeq as number), 4);
    const result4 = at4.find((c) => c.type === "tool/result");
    expect(result4?.current).toBe(true);
    expect(result4?.open).toBe(OPEN_ALL);
    expect(result4?.plain).toBe(toolOutputText(events[call.resultSeq as number]));
    expect(result4?.plain?.length).toBeGreaterThan(20);
    expect(at4.find((c) => c.type === "assistant/message")?.current).toBe(false);
  });
});

describe("LoopWidget keyboard and ARIA", () => {
  it("up / down rove between stages, Enter activates; the clicker keys change the stage; focus survives the re-render", async () => {
    const el = savedLoop();
    await waitFor(() => current(el) === "1");
    const stages = () => [...el.querySelectorAll<HTMLElement>(".dsh-stage")];
    expect(stages().map((s) => s.tabIndex)).toEqual([0, -1, -1, -1, -1, -1]);
    stages()[0].focus();
    key(stages()[0], "ArrowDown");
    key(document.activeElement as Element, "ArrowDown");
    expect(document.activeElement?.getAttribute("data-stage")).toBe("3");
    expect(current(el)).toBe("1"); // up / down move focus only
    key(document.activeElement as Element, "Enter");
    await waitFor(() => current(el) === "3");
    // the diagram was replaced; the focus is on the new stage 03 element
    expect(document.activeElement?.getAttribute("data-stage")).toBe("3");
    expect(document.activeElement?.isConnected).toBe(true);
    expect(stages()[2].tabIndex).toBe(0);
    // a presenter's remote (issue 23): next / previous / first / last, focus kept in the widget
    const press = (k: string) => key(document.activeElement as Element, k);
    press("ArrowRight");
    await waitFor(() => current(el) === "4");
    press("PageDown");
    await waitFor(() => current(el) === "5");
    press(" ");
    await waitFor(() => current(el) === "6");
    press("PageUp");
    await waitFor(() => current(el) === "5");
    press("ArrowLeft");
    await waitFor(() => current(el) === "4");
    press("Home");
    await waitFor(() => current(el) === "1");
    press("End");
    await waitFor(() => current(el) === "6");
    expect(el.contains(document.activeElement)).toBe(true);
  });

  it("the clicker keys: a key never leaves the widget; a click on plain text focuses the widget; text fields keep their keys", async () => {
    const el = savedLoop();
    await waitFor(() => current(el) === "1");
    const outside: string[] = [];
    const spy = (e: KeyboardEvent) => outside.push(e.key);
    document.addEventListener("keydown", spy);
    try {
      (el.querySelector(".dsh-stage-title") as HTMLElement).click(); // a click on a card's title
      expect(el.contains(document.activeElement)).toBe(true);
      key(document.activeElement as Element, "PageDown");
      await waitFor(() => current(el) === "2");
      (el.querySelector(".dsh-explain-text") as HTMLElement).click(); // plain text: the root takes the focus
      expect(document.activeElement === el.querySelector(".dsh-root") || el.contains(document.activeElement)).toBe(true);
      key(document.activeElement as Element, "ArrowRight");
      await waitFor(() => current(el) === "3");
      expect(outside).toEqual([]);
    } finally { document.removeEventListener("keydown", spy); }
    expect(clickerAction({ key: "ArrowRight", target: document.createElement("textarea") })).toBeNull();
    const range = document.createElement("input"); range.type = "range";
    expect(clickerAction({ key: "ArrowLeft", target: range })).toBeNull();
    expect(clickerAction({ key: " ", target: document.createElement("button") })).toBeNull();
    expect(clickerAction({ key: "PageDown", target: document.createElement("button") })).toBe("next");
    expect(clickerAction({ key: "ArrowRight", target: document.createElement("li") })).toBe("next");
    expect(clickerAction({ key: "PageUp", target: null })).toBe("prev");
    expect(clickerAction({ key: "ArrowRight", target: document.createElement("li"), ctrlKey: true })).toBeNull();
  });

  it("tabs carry aria-selected true/false and aria-controls; the panel is labelled by the selected tab", async () => {
    const el = savedLoop();
    await waitFor(() => current(el) === "1");
    const tabs = [...el.querySelectorAll<HTMLElement>(".dsh-tab")];
    expect(tabs.map((t) => t.getAttribute("aria-selected"))).toEqual(["true", "false", "false"]);
    const panel = el.querySelector('[role="tabpanel"]') as HTMLElement;
    expect(tabs.every((t) => t.getAttribute("aria-controls") === panel.id)).toBe(true);
    expect(panel.getAttribute("aria-labelledby")).toBe(tabs[0].id);
    tabs[0].focus();
    key(tabs[0], "ArrowRight");
    expect(document.activeElement?.getAttribute("data-view")).toBe("payloads");
    (document.activeElement as HTMLElement).click();
    await tick();
    expect([...el.querySelectorAll(".dsh-tab")].map((t) => t.getAttribute("aria-selected"))).toEqual(["false", "true", "false"]);
    expect(document.activeElement?.getAttribute("data-view")).toBe("payloads");
    // at stage 01 the result is a placeholder, not its JSON
    const result = el.querySelector('.dsh-card[data-type="tool/result"]') as HTMLElement;
    expect(result.querySelector(".dsh-card-json")).toBeNull();
    expect(result.textContent).toContain("not yet — comes at stage 04");
    expect(el.querySelector('.dsh-card[aria-current="true"]')?.getAttribute("data-type")).toBe("assistant/message");
    // the tool-call block inside the assistant message is open (every level)
    const msgCard = el.querySelector('.dsh-card[data-type="assistant/message"]') as HTMLElement;
    expect(msgCard.querySelector('.dsh-j-toggle[aria-expanded="false"]:not([aria-label^="stream"])')).toBeNull();
    expect([...msgCard.querySelectorAll(".dsh-j-str")].some((e) => e.textContent === '"tool-call"')).toBe(true);
  });

  it("no interactive element holds another one (stages are list items with buttons inside)", async () => {
    const el = savedLoop();
    await waitFor(() => current(el) === "1");
    const interactive = "button, a[href], input, select, textarea, [role=button], [role=tab], [role=option], [role=checkbox]";
    const nested = [...el.querySelectorAll(interactive)].filter((n) => n.parentElement?.closest(interactive));
    expect(nested.map((n) => n.outerHTML.slice(0, 60))).toEqual([]);
    const stages = [...el.querySelectorAll(".dsh-stage")];
    expect(stages).toHaveLength(6);
    expect(stages.every((s) => s.tagName === "LI" && s.closest("ol") !== null && !s.hasAttribute("role"))).toBe(true);
    const insp = savedLoop("inspector");
    await waitFor(() => insp.querySelectorAll(".dsh-row").length > 5);
    const nestedInInspector = [...insp.querySelectorAll(interactive)].filter((n) => n.parentElement?.closest(interactive));
    expect(nestedInInspector.map((n) => n.outerHTML.slice(0, 80))).toEqual([]);
  });

  it("draws the return arc 06 → 01 and the legend of the four roles and the external agent", async () => {
    const el = savedLoop();
    await waitFor(() => current(el) === "1");
    expect(el.querySelector(".dsh-loopdraw .dsh-return")?.textContent).toContain("06 → 01");
    expect([...el.querySelectorAll(".dsh-legend-item")].map((i) => i.getAttribute("data-role"))).toEqual(["model", "agent", "tools", "session", "external"]);
    expect(el.querySelector(".dsh-root")?.getAttribute("data-lm-suppress-shortcuts")).toBe("true");
  });
});

describe("SessionInspector keyboard and ARIA", () => {
  it("rows are options with aria-selected; ArrowDown moves selection and focus; detail tabs are tabs", async () => {
    const el = savedLoop("inspector");
    await waitFor(() => el.querySelectorAll(".dsh-row").length > 5);
    const list = el.querySelector('[role="listbox"]') as HTMLElement;
    list.focus();
    key(list, "ArrowDown");
    await tick();
    expect(document.activeElement?.getAttribute("role")).toBe("option");
    expect(document.activeElement?.getAttribute("data-seq")).toBe("0");
    expect(document.activeElement?.getAttribute("aria-selected")).toBe("true");
    key(document.activeElement as Element, "ArrowDown");
    key(document.activeElement as Element, "ArrowDown");
    await tick();
    expect(document.activeElement?.getAttribute("data-seq")).toBe("2");
    expect(el.querySelectorAll('.dsh-row[aria-selected="true"]')).toHaveLength(1);
    expect(el.querySelector(".dsh-detail [role=tab][aria-selected=true]")?.textContent).toBe("Event #2");
    // Space on a row selects it; keys on the rows never reach the document
    const seen: string[] = [];
    const onDoc = (e: Event) => seen.push((e as KeyboardEvent).key);
    document.addEventListener("keydown", onDoc);
    const row5 = el.querySelector('.dsh-row[data-seq="5"]') as HTMLElement;
    row5.focus();
    key(row5, " ");
    await tick();
    document.removeEventListener("keydown", onDoc);
    expect(el.querySelector('.dsh-row[aria-selected="true"]')?.getAttribute("data-seq")).toBe("5");
    expect(document.activeElement?.getAttribute("data-seq")).toBe("5");
    expect(seen).toEqual([]);
    const tab = el.querySelector('.dsh-detail [role=tab][aria-selected="true"]') as HTMLElement;
    expect(el.querySelector(`#${tab.getAttribute("aria-controls")}`)?.getAttribute("role")).toBe("tabpanel");
  });
});
