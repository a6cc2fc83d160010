// @vitest-environment jsdom
// The pages of a session (src/data): the kernel's pages kept and asked again as the session
// grows, a partial first page asked again complete, the browser's own pages while the window
// holds the whole session and the kernel's once it holds less; and the turn filter's combobox.
import { afterEach, describe, expect, it, vi } from "vitest";
import { LocalPages } from "../src/data/local";
import { SessionPages, pageKey, type PageQuery } from "../src/data/pages";
import { RemotePages, RESEND_MS, RETRY_MS, TRIES } from "../src/data/remote";
import { ClientSessionModel } from "../src/fold";
import { Pricing } from "../src/model/pricing";
import type { SessionEvent } from "../src/types";
import { createCombobox } from "../src/ui/combobox";
import type { Page, RowsPage } from "../src/wire.gen";

function foldOf(n: number): ClientSessionModel {
  const events = Array.from({ length: n }, (_, i) => ({ seq: i, time: 1000 + i, type: i % 2 ? "step/start" : "turn/start", turn: Math.floor(i / 2) + 1, step: 1 })) as unknown as SessionEvent[];
  const fold = new ClientSessionModel();
  fold.apply({ type: "snapshot", sessionId: "s_p", header: { type: "session", version: 1, id: "s_p", cwd: "/", createdAt: 0 }, cursor: n - 1, events,
    live: { attached: false, status: "idle", turn: null, step: null, assistant: null } } as never);
  return fold;
}
const rowsPage = (count: number, partial: boolean): RowsPage => ({ kind: "rows", count, total: count, offset: 0, index: null, rows: [], partial });
const flush = async () => { for (let i = 0; i < 5; i++) await Promise.resolve(); };

afterEach(() => { vi.useRealTimers(); document.body.innerHTML = ""; });

describe("the kernel's pages", () => {
  it("holds a page, asks again complete after a partial one, and again once the session grew", async () => {
    const fold = foldOf(10);
    const asked: PageQuery[] = [];
    const ask = (q: PageQuery): Promise<Page> => {
      asked.push(q);
      return Promise.resolve({ page: rowsPage(fold.cursor + 1, q.kind === "rows" && !q.complete) });
    };
    const pages = new RemotePages(fold, ask);
    const fired = vi.fn();
    pages.onChange(fired);
    const q: PageQuery = { kind: "rows", filter: {}, offset: 0, limit: 50 };
    expect(pages.get(q)).toBeUndefined();
    await flush();
    expect(asked).toEqual([q, { ...q, complete: true }]);
    expect(pages.get(q)?.partial).toBe(false);
    expect(fired).toHaveBeenCalledTimes(2);
    pages.get(q);
    expect(asked).toHaveLength(2); // held and fresh: not asked again
    // the session grows: asked again, at most every quarter second
    vi.useFakeTimers();
    vi.setSystemTime(Date.now() + 1000);
    fold.apply({ type: "event", event: { seq: 10, time: 2000, type: "turn/start", turn: 9 } } as never);
    expect(pages.get(q)?.count).toBe(10); // the held page meanwhile
    pages.get(q);
    await flush();
    expect(asked.filter((x) => !(x as { complete?: boolean }).complete)).toHaveLength(2);
    expect(pages.get(q)?.count).toBe(11);
  });

  it("says what failed", async () => {
    const pages = new RemotePages(foldOf(3), () => Promise.reject(Object.assign(new Error("line 9 is not a valid event"), { code: "LOG_CORRUPT" })));
    await expect(pages.fetch({ kind: "facets" })).rejects.toThrow();
    expect(pages.error).toBe("LOG_CORRUPT: line 9 is not a valid event");
  });

  it("sends a page request again when it is not answered, then fails PAGE_TIMEOUT; a late answer still lands", async () => {
    vi.useFakeTimers();
    const answers: ((p: Page) => void)[] = [];
    const pages = new RemotePages(foldOf(3), () => new Promise<Page>((resolve) => { answers.push(resolve); }));
    const fired = vi.fn();
    pages.onChange(fired);
    const q: PageQuery = { kind: "facets" };
    const got = pages.fetch(q).catch((e: { code?: string }) => e.code);
    expect(answers).toHaveLength(1);
    pages.get(q); // a panel asking meanwhile: the same request, not another
    expect(answers).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(RESEND_MS);
    expect(answers).toHaveLength(2); // the message may have been lost: sent again
    await vi.advanceTimersByTimeAsync(RESEND_MS * (TRIES - 1));
    expect(answers).toHaveLength(TRIES);
    expect(await got).toBe("PAGE_TIMEOUT");
    expect(pages.error).toMatch(/^PAGE_TIMEOUT: the kernel has not answered a facets page/);
    expect(fired).toHaveBeenCalled();
    expect(pages.pending).toBe(0);
    // the answer to the first send comes after all: kept, the error cleared
    answers[0]({ page: { kind: "facets", count: 3, types: ["turn/start"], turns: [1], tools: [], mode: null } } as unknown as Page);
    await flush();
    expect(pages.get(q)?.types).toEqual(["turn/start"]);
    expect(pages.error).toBe("");
  });

  it("a page the session outgrew a moment after it was asked is asked again when it may, unprompted", async () => {
    vi.useFakeTimers();
    const fold = foldOf(10);
    const asked: PageQuery[] = [];
    const pages = new RemotePages(fold, (q) => { asked.push(q); return Promise.resolve({ page: rowsPage(fold.cursor + 1, false) }); });
    const fired = vi.fn(() => pages.get(q)); // the panel: asks for what it draws on each change
    pages.onChange(fired);
    const q: PageQuery = { kind: "rows", filter: {}, offset: 0, limit: 50 };
    pages.get(q);
    await vi.advanceTimersByTimeAsync(0);
    expect(asked).toHaveLength(1);
    fold.apply({ type: "event", event: { seq: 10, time: 2000, type: "turn/start", turn: 9 } } as never);
    expect(pages.get(q)?.count).toBe(10); // outgrown, but asked a moment ago: the held page, and no ask yet
    expect(asked).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(300); // nothing else renders meanwhile: the panel is told to ask
    expect(asked).toHaveLength(2);
    expect(pages.get(q)?.count).toBe(11);
  });

  it("answers with the first of its sends that is answered", async () => {
    vi.useFakeTimers();
    let n = 0;
    const pages = new RemotePages(foldOf(3), () => (++n === 1 ? new Promise<Page>(() => undefined) // lost
      : Promise.resolve({ page: rowsPage(3, false) })));
    const got = pages.fetch({ kind: "rows", filter: {}, offset: 0, limit: 10 });
    await vi.advanceTimersByTimeAsync(RESEND_MS);
    expect((await got).count).toBe(3);
    expect(n).toBe(2);
    await vi.advanceTimersByTimeAsync(RESEND_MS * TRIES); // no third send, no timeout after the answer
    expect(n).toBe(2);
    expect(pages.error).toBe("");
  });

  it("asks a failed query again after a growing backoff, not on every render", async () => {
    vi.useFakeTimers();
    let asked = 0;
    const pages = new RemotePages(foldOf(3), () => { asked += 1; return Promise.reject(Object.assign(new Error("no such session"), { code: "UNKNOWN_SESSION" })); });
    const fired = vi.fn();
    pages.onChange(fired);
    const q: PageQuery = { kind: "facets" };
    pages.get(q);
    await flush();
    expect(asked).toBe(1);
    expect(pages.error).toBe("UNKNOWN_SESSION: no such session");
    for (let i = 0; i < 20; i++) pages.get(q); // the renders its error causes
    await flush();
    expect(asked).toBe(1);
    const before = fired.mock.calls.length;
    await vi.advanceTimersByTimeAsync(RETRY_MS[0]);
    expect(fired.mock.calls.length).toBeGreaterThan(before); // due: the panel is told to ask again
    pages.get(q);
    await flush();
    expect(asked).toBe(2);
    await vi.advanceTimersByTimeAsync(RETRY_MS[0]);
    pages.get(q);
    await flush();
    expect(asked).toBe(2); // the second wait is longer
    await vi.advanceTimersByTimeAsync(RETRY_MS[1]);
    pages.get(q);
    await flush();
    expect(asked).toBe(3);
  });

  it("reads the browser's own pages while the window holds the whole session, the kernel's after", () => {
    const fold = foldOf(40);
    const there = vi.fn(() => Promise.resolve({ page: rowsPage(40, false) }));
    const pages = new SessionPages(fold, new LocalPages(fold, new Pricing()), new RemotePages(fold, there));
    const q: PageQuery = { kind: "rows", filter: { turn: 3 }, offset: 0, limit: 10 };
    expect(pages.local).toBe(true);
    expect((pages.get(q) as RowsPage).rows?.map((r) => r.event.seq)).toEqual([4, 5]);
    expect(there).not.toHaveBeenCalled();
    fold.trim(10); // a window of a longer session
    expect(pages.local).toBe(false);
    expect(pages.get(q)).toBeUndefined();
    expect(there).toHaveBeenCalledTimes(1);
  });

  it("keys a query by its values, not their order or unset fields", () => {
    expect(pageKey({ kind: "rows", offset: 0, filter: { text: "", turn: 2 } })).toBe(pageKey({ filter: { turn: 2 }, kind: "rows", offset: 0 }));
    expect(pageKey({ kind: "rows", filter: { turn: 2 } })).not.toBe(pageKey({ kind: "rows", filter: { turn: 3 } }));
  });
});

describe("the turn filter's combobox", () => {
  const key = (el: Element, k: string) => el.dispatchEvent(new KeyboardEvent("keydown", { key: k, bubbles: true }));
  const type = (input: HTMLInputElement, text: string) => { input.value = text; input.dispatchEvent(new Event("input")); };

  it("offers the matching values (at most 50), picks by keyboard, clears with Escape", () => {
    const picked: string[] = [];
    const cb = createCombobox("dsh-f-turn", "filter by turn", "all turns", (v) => picked.push(v));
    document.body.append(cb.el);
    cb.setValues(Array.from({ length: 8334 }, (_, i) => i + 1));
    const input = cb.input;
    expect([input.getAttribute("role"), input.getAttribute("aria-expanded"), input.getAttribute("aria-autocomplete")]).toEqual(["combobox", "false", "list"]);
    expect(document.getElementById(input.getAttribute("aria-controls") ?? "")).toBeNull(); // the popup only while open
    type(input, "83");
    const list = document.getElementById(input.getAttribute("aria-controls") ?? "") as HTMLElement;
    expect(input.getAttribute("aria-expanded")).toBe("true");
    expect(list.getAttribute("role")).toBe("listbox");
    const options = [...list.querySelectorAll('[role="option"]')].map((o) => o.textContent);
    expect(options.slice(0, 4)).toEqual(["all turns", "83", "830", "831"]);
    expect(options).toHaveLength(51);
    expect(list.querySelector(".dsh-combo-more")?.textContent).toMatch(/more — type to narrow$/);
    // the first match is active; the arrows move it, the input keeps the focus
    expect(document.getElementById(input.getAttribute("aria-activedescendant") ?? "")?.textContent).toBe("83");
    key(input, "ArrowDown");
    expect(document.getElementById(input.getAttribute("aria-activedescendant") ?? "")?.textContent).toBe("830");
    key(input, "Enter");
    expect(picked).toEqual(["830"]);
    expect([input.value, input.getAttribute("aria-expanded"), cb.value]).toEqual(["830", "false", "830"]);
    key(input, "Escape"); // closed already: clears the choice
    expect(picked).toEqual(["830", ""]);
    expect(input.value).toBe("");
    // Alt+Down / ArrowDown opens on the picked value; Home / End; a click picks
    key(input, "ArrowDown");
    expect(input.getAttribute("aria-expanded")).toBe("true");
    key(input, "End");
    const last = document.getElementById(input.getAttribute("aria-activedescendant") ?? "") as HTMLElement;
    expect(last.textContent).toBe("50");
    (list.querySelector('[data-value="7"]') as HTMLElement).click();
    expect(picked[picked.length - 1]).toBe("7");
  });

  it("typed before the values came, the first match is active once they do; an arrow then moves it", () => {
    const picked: string[] = [];
    const cb = createCombobox("dsh-f-turn", "filter by turn", "all turns", (v) => picked.push(v));
    document.body.append(cb.el);
    const input = cb.input;
    type(input, "7");
    type(input, "77"); // a long session's turns come with the kernel's facets, after the first keys
    const activeText = () => document.getElementById(input.getAttribute("aria-activedescendant") ?? "")?.textContent;
    expect(activeText()).toBe("all turns");
    cb.setValues(Array.from({ length: 1000 }, (_, i) => i + 1));
    expect(activeText()).toBe("77");
    key(input, "ArrowDown");
    expect(activeText()).toBe("770");
    cb.setValues(Array.from({ length: 1001 }, (_, i) => i + 1)); // more turns: the arrow's choice stays
    expect(activeText()).toBe("770");
    key(input, "Enter");
    expect(picked).toEqual(["770"]);
  });
});
