// @vitest-environment jsdom
import { afterEach, describe, expect, it } from "vitest";
import widget from "../src/index";
import type { FollowItem } from "../src/types";
import { FakeModel, tick, waitFor } from "./fake-model";
import { readmeRun } from "./helpers";

const currentStage = (el: HTMLElement) => el.querySelector(".dsh-stage[data-state=current]")?.getAttribute("data-stage");
let cleanup: (() => void) | null = null;
afterEach(() => { cleanup?.(); cleanup = null; document.body.innerHTML = ""; });

function mount(model: FakeModel): HTMLElement {
  const el = document.createElement("div");
  document.body.append(el);
  cleanup = widget.render({ model, el } as never);
  return el;
}

describe("LoopWidget in the DOM", () => {
  it("while the run is running, live mode walks through every stage it missed, one after the other", async () => {
    // the run through request/frozen #14 (the status still running): a backlog of six stages
    const model = new FakeModel({ kind: "loop", session_id: "s_7a96fd6afd3a", readonly: false, error: "", create_args: {} }, readmeRun().slice(0, 38));
    const el = mount(model);
    const seen: string[] = [];
    await waitFor(() => { const c = currentStage(el); if (c && seen[seen.length - 1] !== c) seen.push(c); return c === "6"; });
    expect(seen).toEqual(["1", "2", "3", "4", "5", "6"]);
    expect(el.querySelector(".dsh-sub")?.textContent).toMatch(/running$/);
  });

  it("follows a session to stage 06 with real values, and links switch the views", async () => {
    const model = new FakeModel({ kind: "loop", session_id: "s_7a96fd6afd3a", readonly: false, error: "", create_args: {} }, readmeRun());
    const el = mount(model);
    await tick();
    const open = model.sent.find((m) => (m.envelope as { type?: string })?.type === "open");
    // a window of the session (DEFAULT_WINDOW: no window trait in this model): the rest in pages
    expect((open?.envelope as { payload: unknown }).payload).toEqual({ args: { sessionId: "s_7a96fd6afd3a", window: 2000 } });
    // the run is over (idle): the diagram does not walk a backlog, it shows the last step at once
    const seen: string[] = [];
    await waitFor(() => { const c = currentStage(el); if (c && seen[seen.length - 1] !== c) seen.push(c); return c === "6"; });
    expect(seen).toEqual(["6"]);
    expect(el.querySelectorAll(".dsh-stage[data-state=done]")).toHaveLength(5);
    expect(el.querySelector(".dsh-explain")?.textContent).toContain("request/frozen #14");
    // history view: wrappers hidden, tool-call block marked
    expect(el.querySelector(".dsh-toolcall .dsh-note")?.textContent).toBe("a tool call, not file content");
    expect([...el.querySelectorAll(".dsh-msg")].map((m) => m.getAttribute("data-seq"))).toEqual(["5", "9", "11"]);
    (el.querySelector(".dsh-wrappers-toggle") as HTMLInputElement).click();
    await tick();
    expect([...el.querySelectorAll(".dsh-msg")].map((m) => m.getAttribute("data-seq"))).toEqual(["4", "5", "6", "9", "11"]);
    // a link inside stage 04 opens the payload view; the result card cites its call
    (el.querySelector('.dsh-stage[data-stage="4"] .dsh-stage-link') as HTMLElement).click();
    await tick();
    const result = el.querySelector('.dsh-card[data-type="tool/result"]');
    expect(result?.querySelector(".dsh-badge")?.textContent).toBe("committed");
    const link = result?.querySelector('.dsh-seqlink[data-seq="10"]') as HTMLElement;
    expect(link).toBeTruthy();
    link.click();
    await tick();
    expect(el.querySelector('.dsh-card[data-seq="10"]')?.classList.contains("dsh-flash")).toBe(true);
    expect(el.querySelector('.dsh-card[data-seq="10"] .dsh-citedby')?.textContent).toContain("#11");
  });

  it("clicking a stage replays it: stage 02 shows the result as not yet committed", async () => {
    const model = new FakeModel({ kind: "loop", session_id: "s_x", readonly: false, error: "", create_args: {} }, readmeRun());
    const el = mount(model);
    await waitFor(() => currentStage(el) === "6"); // the run drawn (a loaded machine may need more than a tick)
    (el.querySelector('.dsh-stage[data-stage="2"]') as HTMLElement).click();
    await waitFor(() => currentStage(el) === "2");
    expect(el.querySelector(".dsh-stage[data-state=current]")?.getAttribute("data-stage")).toBe("2");
    (el.querySelector('.dsh-tab[data-view="payloads"]') as HTMLElement).click();
    await tick();
    expect(el.querySelector('.dsh-card[data-type="tool/result"] .dsh-badge')?.textContent).toBe("not yet committed");
    (el.querySelector('.dsh-tab[data-view="roles"]') as HTMLElement).click();
    await tick();
    expect(el.querySelector(".dsh-role-active")?.getAttribute("data-role")).toBe("agent");
    expect(el.querySelector('.dsh-role[data-role="agent"]')?.textContent).toContain("execute_tool_calls()");
  });

  it("prompt box: creates a session, sends the prompt, shows accepted", async () => {
    const model = new FakeModel({ kind: "loop", session_id: "", readonly: false, error: "", create_args: { model: "script:readme" } }, []);
    const el = mount(model);
    (el.querySelector(".dsh-prompt-input") as HTMLTextAreaElement).value = "Read README.md";
    (el.querySelector(".dsh-send") as HTMLElement).click();
    await tick();
    await tick();
    const methods = model.sent.map((m) => (m.envelope as { method?: string; endpoint?: string } | undefined)).map((e) => e?.method ?? e?.endpoint);
    expect(methods).toEqual(["session/create", "session/follow", "session/prompt"]);
    const create = model.sent[0].envelope as { payload: { args: unknown } };
    expect(create.payload.args).toEqual({ model: "script:readme" });
    const prompt = model.sent[2].envelope as { payload: { args: { request: Record<string, unknown> } } };
    expect(prompt.payload.args.request).toMatchObject({ sessionId: "s_new", mode: "queue", content: "Read README.md" });
    expect(el.querySelector(".dsh-prompt-status")?.textContent).toMatch(/^accepted ✓/);
  });

  it("approval buttons call session/approve", async () => {
    const items = [{ type: "snapshot", sessionId: "s_a", cursor: 2, events: [
      { seq: 0, time: 1, type: "assistant/message", turn: 1, step: 1, message: { role: "assistant", content: [{ type: "tool-call", id: "c7", name: "write", arguments: "{}" }] } },
      { seq: 1, time: 2, type: "tool/call", turn: 1, step: 1, callId: "c7", name: "write", arguments: "{}" },
      { seq: 2, time: 3, type: "approval/asked", callId: "c7", name: "write" }],
      live: { status: "running", tools: { c7: { callId: "c7", name: "write", phase: "approval", status: "waiting", time: 4 } } } }] as unknown as FollowItem[];
    const model = new FakeModel({ kind: "loop", session_id: "s_a", readonly: false, error: "", create_args: {} }, items);
    const el = mount(model);
    await waitFor(() => currentStage(el) === "3");
    expect(el.querySelector('.dsh-phase[data-phase="approval"]')?.textContent).toBe("waiting for approval");
    (el.querySelector(".dsh-deny") as HTMLElement).click();
    await tick();
    const approve = model.sent.map((m) => m.envelope as { method?: string; payload?: { args: unknown } }).find((e) => e?.method === "session/approve");
    expect(approve?.payload?.args).toEqual({ sessionId: "s_a", callId: "c7", decision: "deny" });
    (el.querySelector(".dsh-allow-session") as HTMLElement).click();  // "Allow for this session"
    await tick();
    const always = model.sent.map((m) => m.envelope as { method?: string; payload?: { args: unknown } })
      .filter((e) => e?.method === "session/approve").at(-1);
    expect(always?.payload?.args).toEqual({ sessionId: "s_a", callId: "c7", decision: "allow", scope: "session" });
    // the run is live (status running): Stop sends session/cancel
    const stop = el.querySelector(".dsh-stop") as HTMLButtonElement;
    expect(stop.disabled).toBe(false);
    stop.click();
    await tick();
    const cancel = model.sent.map((m) => m.envelope as { method?: string; payload?: { args: unknown } }).find((e) => e?.method === "session/cancel");
    expect(cancel?.payload?.args).toEqual({ sessionId: "s_a" });
  });

  it("the approval banner stays in the header while another stage is replayed, with the edit as a diff", async () => {
    const args = JSON.stringify({ file_path: "src/math.ts", old_string: "  return a - b + 1;", new_string: "  return a - b;" });
    const items = [{ type: "snapshot", sessionId: "s_b", cursor: 2, events: [
      { seq: 0, time: 1, type: "assistant/message", turn: 1, step: 1, message: { role: "assistant", content: [{ type: "tool-call", id: "c3", name: "edit", arguments: args }] } },
      { seq: 1, time: 2, type: "tool/call", turn: 1, step: 1, callId: "c3", name: "edit", arguments: args },
      { seq: 2, time: 3, type: "approval/asked", callId: "c3", name: "edit" }],
      live: { status: "running", tools: { c3: { callId: "c3", name: "edit", phase: "approval", status: "waiting", time: 4 } } } }] as unknown as FollowItem[];
    const model = new FakeModel({ kind: "loop", session_id: "s_b", readonly: false, error: "", create_args: {} }, items);
    const el = mount(model);
    await waitFor(() => currentStage(el) === "3");
    (el.querySelector('.dsh-stage[data-stage="1"]') as HTMLElement).click();
    await waitFor(() => currentStage(el) === "1");
    expect(el.querySelector(".dsh-header .dsh-badge")?.textContent).toBe("paused");
    const banner = el.querySelector(".dsh-head .dsh-approval-banner") as HTMLElement;
    expect(banner.hidden).toBe(false);
    expect(banner.querySelector(".dsh-approval-title")?.textContent).toContain("edit · c3");
    expect([...banner.querySelectorAll(".dsh-adiff-line")].map((l) => l.textContent)).toEqual(["-   return a - b + 1;", "+   return a - b;"]);
    expect(el.querySelector(".dsh-explain .dsh-allow")).toBeNull();
    const allow = banner.querySelector(".dsh-allow") as HTMLButtonElement;
    allow.click();
    await tick();
    expect(banner.querySelector(".dsh-allow")).toBe(allow); // not rebuilt by renders: the click is never lost
    const approve = model.sent.map((m) => m.envelope as { method?: string; payload?: { args: unknown } }).find((e) => e?.method === "session/approve");
    expect(approve?.payload?.args).toEqual({ sessionId: "s_b", callId: "c3", decision: "allow" });
  });

  it("the history marks the item of the stage (aria-current) and what is new; predict mode asks, then reveals", async () => {
    const events = readmeRun().flatMap((it) => (it.type === "snapshot" ? it.events : it.type === "event" ? [it.event] : []));
    const items = [{ type: "snapshot", sessionId: "s_saved", cursor: events.length - 1, events }] as unknown as FollowItem[];
    const model = new FakeModel({ kind: "loop", session_id: "s_saved", readonly: true, error: "", create_args: {} }, items);
    const el = mount(model);
    await waitFor(() => currentStage(el) === "1");
    expect(el.querySelector('.dsh-history [aria-current="true"]')?.getAttribute("data-seq")).toBe("9");
    expect([...el.querySelectorAll(".dsh-msg-new")].map((m) => m.getAttribute("data-seq"))).toEqual(["9"]);
    (el.querySelector('.dsh-stage[data-stage="6"]') as HTMLElement).click();
    await waitFor(() => currentStage(el) === "6");
    expect(el.querySelector('.dsh-history [aria-current="true"]')?.getAttribute("data-seq")).toBe("11");
    // 06: nothing happened to a message here; the request carries #9 and #11, new to it
    expect([...el.querySelectorAll(".dsh-msg-new")].map((m) => m.getAttribute("data-seq"))).toEqual([]);
    expect([...el.querySelectorAll(".dsh-msg-inreq")].map((m) => m.getAttribute("data-seq"))).toEqual(["9", "11"]);
    expect(el.querySelector(".dsh-history-change")?.textContent).toContain("request #14");
    // predict: back to 03, then next: asked before 04 which seqs the tool/result cites
    (el.querySelector(".dsh-predict-toggle") as HTMLInputElement).click();
    (el.querySelector('.dsh-stage[data-stage="3"]') as HTMLElement).click();
    await waitFor(() => currentStage(el) === "3");
    (el.querySelector(".dsh-forward") as HTMLElement).click();
    await waitFor(() => el.querySelector('.dsh-predict-ask[data-kind="sources"]') !== null);
    expect(currentStage(el)).toBe("3");
    (el.querySelector('.dsh-predict-option[data-seq="10"]') as HTMLInputElement).click();
    (el.querySelector(".dsh-predict-submit") as HTMLElement).click();
    await waitFor(() => el.querySelector(".dsh-predict-reveal") !== null);
    expect(currentStage(el)).toBe("4");
    expect(el.querySelector(".dsh-predict-reveal")?.getAttribute("data-match")).toBe("true");
    expect(el.querySelector(".dsh-predict-real")?.textContent).toBe("[10]");
  });

  it("replay of a saved log: stage 03 re-derives the runtime phases from tool/call → tool/result", async () => {
    const events = readmeRun().flatMap((it) => (it.type === "snapshot" ? it.events : it.type === "event" ? [it.event] : []));
    const items = [{ type: "snapshot", sessionId: "s_saved", cursor: events.length - 1, events }] as unknown as FollowItem[];
    const model = new FakeModel({ kind: "loop", session_id: "s_saved", readonly: true, error: "", create_args: {} }, items);
    const el = mount(model);
    await waitFor(() => currentStage(el) === "1");
    const fwd = () => (el.querySelector(".dsh-forward") as HTMLElement).click();
    fwd(); fwd();
    await waitFor(() => currentStage(el) === "3");
    const phases = el.querySelector(".dsh-phases") as HTMLElement;
    expect(phases.getAttribute("data-origin")).toBe("log");
    // only what the log has reached at this position: the tool/call
    expect(phases.querySelector('[data-phase="prepare"]')?.textContent).toBe("prepare · start");
    expect(phases.querySelector('[data-phase="result"]')?.className).toContain("dsh-phase-todo");
    expect(phases.querySelector(".dsh-phase-origin")?.textContent).toBe("from the log · tool/call #10 → tool/result not reached yet");
    fwd();
    await waitFor(() => currentStage(el) === "4");
    const done = el.querySelector(".dsh-phases") as HTMLElement;
    expect([...done.querySelectorAll(".dsh-phase")].map((c) => c.textContent)).toEqual(["prepare · done", "policy · allow", "execute · done", "result · done"]);
    expect(done.querySelector(".dsh-phase-origin")?.textContent).toBe("from the log · tool/call #10 → tool/result #11 · 1 ms");
  });

  it("a broken log shows its error, not a blank widget", async () => {
    const model = new FakeModel({ kind: "loop", session_id: "broken", readonly: true, error: "LOG_HEADER: line 1 is not a session header", create_args: {} }, []);
    const el = mount(model);
    await tick();
    const err = el.querySelector(".dsh-error") as HTMLElement;
    expect(err.hidden).toBe(false);
    expect(err.textContent).toContain("LOG_HEADER");
  });
});

describe("SessionInspector in the DOM", () => {
  it("renders only visible rows of a 10k-event log, filters, jumps, diffs", async () => {
    const base = readmeRun();
    const events = [];
    for (let i = 0; i < 10_000; i++) events.push({ seq: i, time: 1_000 + i, type: i % 2 ? "step/start" : "turn/start", turn: Math.floor(i / 2) + 1, step: 1 });
    const model = new FakeModel({ kind: "inspector", session_id: "s_big", readonly: true, error: "", create_args: {} },
      [{ type: "snapshot", sessionId: "s_big", cursor: 9_999, events }] as unknown as FollowItem[]);
    const el = mount(model);
    await waitFor(() => el.querySelectorAll(".dsh-row").length > 0); // a loaded machine may need more than one tick
    const rows = el.querySelectorAll(".dsh-row");
    expect(rows.length).toBeGreaterThan(5);
    expect(rows.length).toBeLessThan(100);
    expect(el.querySelector(".dsh-f-count")?.textContent).toBe("10,000 of 10,000 events");
    cleanup?.();
    document.body.innerHTML = "";

    const m2 = new FakeModel({ kind: "inspector", session_id: "s_7", readonly: true, error: "", create_args: {} }, base);
    const el2 = mount(m2);
    await waitFor(() => el2.querySelectorAll(".dsh-row").length >= 18); // the whole recorded run, on a loaded machine too
    const seqIn = el2.querySelector(".dsh-f-seq") as HTMLInputElement;
    seqIn.value = "10";
    (el2.querySelector(".dsh-f-go") as HTMLElement).click();
    await waitFor(() => el2.querySelector(".dsh-detail .dsh-citedby") !== null);
    expect(el2.querySelector(".dsh-detail .dsh-citedby")?.textContent).toContain("result citing this call: #11");
    seqIn.value = "14";
    (el2.querySelector(".dsh-f-go") as HTMLElement).click();
    (el2.querySelector('.dsh-tab[data-detail="diff"]') as HTMLElement).click();
    await tick();
    const diff = el2.querySelector(".dsh-diff")?.textContent ?? "";
    expect(diff).toContain("3 messages kept, 2 added");
    expect(diff).toContain("tool result");
    (el2.querySelector('.dsh-tab[data-detail="messages"]') as HTMLElement).click();
    expect(el2.querySelectorAll(".dsh-detail .dsh-msg")).toHaveLength(5);
    const typeSel = el2.querySelector(".dsh-f-type") as HTMLSelectElement;
    typeSel.value = "tool/call";
    typeSel.dispatchEvent(new Event("change"));
    expect(el2.querySelector(".dsh-f-count")?.textContent).toBe("1 of 18 events");
  });

  it("holding a window, shows the mode and the Keep / Revert decisions the log set before it (the kernel's pages)", async () => {
    const events: Record<string, unknown>[] = [
      { type: "turn/start", turn: 1 },
      { type: "mode/changed", mode: "accept-edits", previous: "default", by: "notebook" },
      { type: "checkpoint/changes", turn: 1, snapshot: "a1", after: "b2", added: [{ path: "NOTES.md", size: 4, sha: "x" }],
        modified: [{ path: "src/math.ts", size: 9, beforeSize: 8, sha: "y" }], deleted: [], addedCount: 1, modifiedCount: 1, deletedCount: 0 },
      { type: "checkpoint/kept", turn: 1, paths: ["NOTES.md"], by: "widget" },
      { type: "turn/end", turn: 1, reason: { kind: "completed" } },
    ];
    for (let t = 2; t < 40; t++) events.push({ type: "turn/start", turn: t }, { type: "turn/end", turn: t, reason: { kind: "completed" } });
    const all = events.map((e, i) => ({ ...e, seq: i, time: 1_000 + i }));
    const model = new FakeModel({ kind: "inspector", session_id: "s_win", readonly: true, error: "", create_args: {}, window: 10 },
      [{ type: "snapshot", sessionId: "s_win", header: { type: "session", version: 1, id: "s_win", cwd: "/home/me/p", createdAt: 0 },
        cursor: all.length - 1, events: all, live: { attached: false, status: "idle", turn: null, step: null, assistant: null } }] as unknown as FollowItem[]);
    const el = mount(model);
    await waitFor(() => el.querySelector(".dsh-f-count")?.textContent === `${all.length} of ${all.length} events`);
    // the window holds none of the first events: the mode is the kernel's facets' (the log's last mode/changed)
    await waitFor(() => (el.querySelector(".dsh-mode") as HTMLElement | null)?.dataset.mode === "accept-edits");
    expect(el.querySelector(".dsh-mode-badge")?.textContent).toBe("mode accept-edits");
    const seqIn = el.querySelector(".dsh-f-seq") as HTMLInputElement;
    seqIn.value = "2";
    (el.querySelector(".dsh-f-go") as HTMLElement).click();
    await waitFor(() => el.querySelector(".dsh-detail .dsh-changes-review") !== null);
    const status = (path: string) => el.querySelector(`.dsh-detail .dsh-change[data-path="${path}"] .dsh-change-status`)?.textContent;
    await waitFor(() => status("NOTES.md") === "kept"); // its checkpoint/kept lies before the window too
    expect(status("src/math.ts")).toBe("");
  });

  it("a Keep logged while a checkpoint's review is open shows in place: a diff opened in it stays open", async () => {
    const all = [
      { type: "turn/start", turn: 1 },
      { type: "checkpoint/changes", turn: 1, snapshot: "a1", after: "b2", added: [{ path: "NOTES.md", size: 4, sha: "x" }],
        modified: [{ path: "src/math.ts", size: 9, beforeSize: 8, sha: "y" }], deleted: [], addedCount: 1, modifiedCount: 1, deletedCount: 0 },
      { type: "turn/end", turn: 1, reason: { kind: "completed" } },
    ].map((e, i) => ({ ...e, seq: i, time: 1_000 + i }));
    const model = new FakeModel({ kind: "inspector", session_id: "s_keep", readonly: false, error: "", create_args: {} },
      [{ type: "snapshot", sessionId: "s_keep", header: { type: "session", version: 1, id: "s_keep", cwd: "/home/me/p", createdAt: 0 },
        cursor: all.length - 1, events: all, live: { attached: true, status: "idle", turn: null, step: null, assistant: null } }] as unknown as FollowItem[]);
    const el = mount(model);
    await waitFor(() => el.querySelector(".dsh-f-count")?.textContent === "3 of 3 events");
    const seqIn = el.querySelector(".dsh-f-seq") as HTMLInputElement;
    seqIn.value = "1";
    (el.querySelector(".dsh-f-go") as HTMLElement).click();
    await waitFor(() => el.querySelector(".dsh-detail .dsh-changes-review") !== null);
    const toggle = el.querySelector('.dsh-detail .dsh-change[data-path="src/math.ts"] .dsh-diff-toggle') as HTMLButtonElement;
    toggle.click();
    expect(toggle.getAttribute("aria-expanded")).toBe("true");
    // another widget keeps NOTES.md: its checkpoint/kept arrives on the follow stream
    const open = model.sent.find((m) => (m.envelope as { type?: string })?.type === "open") as { cid: string; envelope: { streamId: string } };
    const kept = { seq: 3, time: 1_003, type: "checkpoint/kept", turn: 1, paths: ["NOTES.md"], by: "widget" };
    model.emit({ kind: "batch", cid: open.cid, items: [JSON.stringify({ type: "item", streamId: open.envelope.streamId, value: { type: "event", event: kept } })] });
    const status = (path: string) => el.querySelector(`.dsh-detail .dsh-change[data-path="${path}"] .dsh-change-status`)?.textContent;
    await waitFor(() => status("NOTES.md") === "kept");
    expect(toggle.isConnected && toggle.getAttribute("aria-expanded")).toBe("true"); // the same review, its diff open
    expect(status("src/math.ts")).toBe("");
  });
});
