// @vitest-environment jsdom
// The loop widget's debugger controls in the DOM, on a recorded real run paused at stage 04.
import { afterEach, describe, expect, it } from "vitest";
import widget from "../src/index";
import type { FollowItem } from "../src/types";
import { streamItems } from "./helpers";

type Handler = (...args: unknown[]) => void;
interface Sent { method?: string; args?: Record<string, unknown> }

/** A widget model whose kernel side answers like the bridge + Host: follow items, and replies. */
class FakeModel {
  handlers = new Map<string, Set<Handler>>();
  calls: Sent[] = [];
  constructor(public state: Record<string, unknown>, public items: FollowItem[]) {}
  get(name: string) { return this.state[name]; }
  on(ev: string, cb: Handler) { if (!this.handlers.has(ev)) this.handlers.set(ev, new Set()); this.handlers.get(ev)?.add(cb); }
  off(ev?: string | null, cb?: Handler | null) { if (ev && cb) this.handlers.get(ev)?.delete(cb); }
  emit(content: unknown) { for (const h of this.handlers.get("msg:custom") ?? []) h(content); }
  /** The follow stream's items as the kernel sends them on (the run goes on). */
  push(items: FollowItem[]) { this.follow?.(items.map((v) => JSON.stringify({ type: "item", streamId: this.followId, value: v }))); }
  follow: ((items: unknown[]) => void) | null = null;
  followId: unknown = null;
  send(content: unknown) {
    const c = content as { cid: string; envelope?: Record<string, unknown> };
    const env = c.envelope;
    if (!env) return;
    const reply = (items: unknown[]) => queueMicrotask(() => this.emit({ kind: "batch", cid: c.cid, items }));
    if (env.type === "open") { this.follow = reply; this.followId = env.streamId; }
    if (env.type === "open") reply(this.items.map((v) => JSON.stringify({ type: "item", streamId: env.streamId, value: v })));
    else if (env.type === "client-request") {
      const args = (env.payload as { args: Record<string, unknown> }).args;
      this.calls.push({ method: String(env.method), args });
      if (env.method === "session/debug" && args.action === "edit" && args.value === "REFUSE") {
        reply([{ type: "server-response", rpcId: env.rpcId, result: { ok: false, error: { code: "BAD_EDIT", message: "the edited messages do not pair tool calls and results" } } }]);
        return;
      }
      if (env.method === "session/debug" && args.action === "run-to" && args.call === "c1") {
        reply([{ type: "server-response", rpcId: env.rpcId, result: { ok: false, error: { code: "RUN_TO_PASSED", message: "stage 02 of c1 has already happened in this turn (it is at 04)" } } }]);
        return;
      }
      const value = env.method === "session/debug"
        ? { sessionId: "s_d", stages: args.action === "state" ? ["04"] : args.stages ?? ["04"], editSeq: args.action === "edit" ? 11 : null }
        : { ok: 1 };
      reply([{ type: "server-response", rpcId: env.rpcId, result: { ok: true, value } }]);
    }
  }
}

const tick = () => new Promise((r) => setTimeout(r, 40));
let cleanup: (() => void) | null = null;
afterEach(() => { cleanup?.(); cleanup = null; document.body.innerHTML = ""; });

function mount(): { el: HTMLElement; model: FakeModel } {
  const all = streamItems("debugger");
  const model = new FakeModel({ kind: "loop", session_id: "s_d", readonly: false, error: "", create_args: {} },
    all.slice(0, all.findIndex((i) => i.type === "paused") + 1));
  const el = document.createElement("div");
  document.body.append(el);
  cleanup = widget.render({ model, el } as never);
  return { el, model };
}
const debugCalls = (m: FakeModel) => m.calls.filter((c) => c.method === "session/debug").map((c) => c.args ?? {});
const q = <T extends HTMLElement = HTMLElement>(el: HTMLElement, sel: string) => el.querySelector(sel) as T;

describe("loop widget debugger controls", () => {
  it("shows the pause bar at 04 and the diagram follows the paused stage", async () => {
    const { el, model } = mount();
    await tick(); await tick();
    const bar = q(el, ".dsh-debug-bar");
    expect(bar.hidden).toBe(false);
    expect(q(el, ".dsh-debug-label").textContent).toBe("paused at 04 · c1 (read)");
    expect(q(el, ".dsh-stage[data-state=current]").dataset.stage).toBe("4");
    expect(q(el, '.dsh-stage[data-stage="4"]').classList.contains("dsh-stage-paused")).toBe(true);
    // the host's breakpoints (action state) light the toggle of 04
    expect(debugCalls(model)[0]).toEqual({ sessionId: "s_d", action: "state" });
    expect(q(el, '.dsh-break[data-stage="4"]').getAttribute("aria-pressed")).toBe("true");
    expect(q(el, '.dsh-break[data-stage="3"]').getAttribute("aria-pressed")).toBe("false");
  });

  it("Run to… by keyboard: a stage and a call select, Enter sends run-to, a passed target is said", async () => {
    const { el, model } = mount();
    await tick(); await tick();
    const run = q<HTMLButtonElement>(el, ".dsh-debug-runto");
    run.focus();
    run.click();
    const form = q(el, ".dsh-debug-runto-form");
    const stage = q<HTMLSelectElement>(el, ".dsh-debug-runto-stage"), call = q<HTMLSelectElement>(el, ".dsh-debug-runto-call");
    expect(form.hidden).toBe(false);
    expect(run.getAttribute("aria-expanded")).toBe("true");
    expect(document.activeElement).toBe(stage);
    expect(stage.value).toBe("04"); // from the pause: its stage
    expect([...stage.options].map((o) => o.textContent)).toContain("05 · Message history derived");
    expect([...call.options].map((o) => o.textContent)).toEqual(["c1 · read", "c2 · not made yet", "c3 · not made yet", "c4 · not made yet"]);
    expect(stage.labels?.[0]?.textContent).toContain("Run to stage");
    call.value = "c1"; stage.value = "02";
    stage.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true }));
    await tick();
    expect(debugCalls(model).at(-1)).toEqual({ sessionId: "s_d", action: "run-to", stage: "02", call: "c1" });
    expect(q(el, ".dsh-debug-status").textContent).toBe("run to stage 02 of c1: not set — RUN_TO_PASSED: stage 02 of c1 has already happened in this turn (it is at 04)");
    expect(form.hidden).toBe(false); // still open to choose again
    call.value = "c2"; stage.value = "05";
    call.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true }));
    await tick();
    expect(debugCalls(model).at(-1)).toEqual({ sessionId: "s_d", action: "run-to", stage: "05", call: "c2" });
    expect(q(el, ".dsh-debug-status").textContent).toBe("running to stage 05 of c2 — other breakpoints still pause on the way");
    expect(form.hidden).toBe(true);
    expect(document.activeElement).toBe(run);
    run.click(); // Escape closes without sending, focus back on the button
    const sent = debugCalls(model).length;
    q(el, ".dsh-debug-runto-stage").dispatchEvent(new KeyboardEvent("keydown", { key: "Escape", bubbles: true }));
    expect(form.hidden).toBe(true);
    expect(document.activeElement).toBe(run);
    expect(debugCalls(model).length).toBe(sent);
  });

  it("a toggle sends the whole set and keeps its focus", async () => {
    const { el, model } = mount();
    await tick(); await tick();
    const t6 = q(el, '.dsh-break[data-stage="6"]');
    t6.focus();
    t6.click();
    await tick();
    expect(debugCalls(model).at(-1)).toEqual({ sessionId: "s_d", action: "break", stages: ["04", "06"] });
    expect(q(el, '.dsh-break[data-stage="6"]').getAttribute("aria-pressed")).toBe("true");
    expect(document.activeElement).toBe(q(el, '.dsh-break[data-stage="6"]'));
    expect(q(el, ".dsh-stage[data-state=current]").dataset.stage).toBe("4"); // toggling does not seek
    const tools = q<HTMLInputElement>(el, ".dsh-debug-tools");
    tools.value = "bash, read";
    tools.dispatchEvent(new Event("change"));
    await tick();
    expect(debugCalls(model).at(-1)).toEqual({ sessionId: "s_d", action: "break", stages: ["04", "06"], tools: ["bash", "read"] });
  });

  it("Edit: invalid JSON shows an error and sends nothing; valid JSON sends the edit", async () => {
    const { el, model } = mount();
    await tick(); await tick();
    q(el, ".dsh-debug-edit").click();
    const area = q<HTMLTextAreaElement>(el, ".dsh-debug-json");
    expect(q(el, ".dsh-debug-editor").hidden).toBe(false);
    expect(JSON.parse(area.value)).toContain("# demo-math");
    const before = debugCalls(model).length;
    area.value = "MARKER without quotes";
    q(el, ".dsh-debug-apply").click();
    await tick();
    expect(q(el, ".dsh-debug-error").hidden).toBe(false);
    expect(q(el, ".dsh-debug-error").textContent).toMatch(/^Not sent — BAD_JSON: not valid JSON/);
    expect(area.getAttribute("aria-invalid")).toBe("true");
    expect(debugCalls(model).length).toBe(before);
    area.value = JSON.stringify("MARKER from the widget");
    q(el, ".dsh-debug-apply").click();
    await tick();
    expect(debugCalls(model).at(-1)).toEqual({ sessionId: "s_d", action: "edit", target: "result", callId: "c1", value: "MARKER from the widget" });
    expect(q(el, ".dsh-debug-editor").hidden).toBe(true);
    expect(q(el, ".dsh-debug-status").textContent).toContain("debug/edit #11");
    q(el, ".dsh-debug-step").click();
    await tick();
    q(el, ".dsh-debug-continue").click();
    await tick();
    expect(debugCalls(model).slice(-2).map((a) => a.action)).toEqual(["step", "continue"]);
    q(el, ".dsh-debug-cancel").click();
    await tick();
    expect(model.calls.at(-1)).toEqual({ method: "session/cancel", args: { sessionId: "s_d" } });
  });

  it("Edit by keyboard: focus into the text, Ctrl+Enter applies, Escape discards, focus back on Edit", async () => {
    const { el, model } = mount();
    await tick(); await tick();
    const edit = q<HTMLButtonElement>(el, ".dsh-debug-edit");
    edit.focus();
    edit.click();
    const area = q<HTMLTextAreaElement>(el, ".dsh-debug-json");
    expect(document.activeElement).toBe(area);
    expect(edit.getAttribute("aria-expanded")).toBe("true");
    expect(area.labels?.[0]?.textContent).toBe("Edit the tool result's text (a JSON string) at stage 04");
    const described = (area.getAttribute("aria-describedby") ?? "").split(" ");
    expect(described).toContain(q(el, ".dsh-debug-error").id);
    expect(described).toContain(q(el, ".dsh-debug-hint").id);
    // Escape: closed, nothing sent, focus on Edit; the key does not reach the notebook
    const before = debugCalls(model).length;
    let leaked = 0;
    el.addEventListener("keydown", () => leaked++);
    area.dispatchEvent(new KeyboardEvent("keydown", { key: "Escape", bubbles: true }));
    expect(q(el, ".dsh-debug-editor").hidden).toBe(true);
    expect(document.activeElement).toBe(edit);
    expect(edit.getAttribute("aria-expanded")).toBe("false");
    // Ctrl+Enter: checked, then sent; the host's refusal is shown with its code, the text stays
    edit.click();
    area.value = JSON.stringify("REFUSE");
    area.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", ctrlKey: true, bubbles: true }));
    await tick();
    expect(debugCalls(model).length).toBe(before + 1);
    const err = q(el, ".dsh-debug-error");
    expect(err.hidden).toBe(false);
    expect(err.getAttribute("role")).toBe("alert");
    expect(err.textContent).toBe("Not applied — the host refused the edit: BAD_EDIT: the edited messages do not pair tool calls and results");
    expect(area.getAttribute("aria-invalid")).toBe("true");
    expect(q(el, ".dsh-debug-editor").hidden).toBe(false);
    area.value = JSON.stringify("MARKER");
    area.dispatchEvent(new Event("input"));
    expect(area.hasAttribute("aria-invalid")).toBe(false); // typing clears the refusal
    area.focus();
    area.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", metaKey: true, bubbles: true }));
    await tick();
    expect(debugCalls(model).at(-1)).toEqual({ sessionId: "s_d", action: "edit", target: "result", callId: "c1", value: "MARKER" });
    expect(q(el, ".dsh-debug-editor").hidden).toBe(true);
    expect(document.activeElement).toBe(edit);
    expect(leaked).toBe(0);
  });

  it("Continue pressed by keyboard has the focus again at the next pause, however long the run between took", async () => {
    const all = streamItems("debugger");
    const first = all.findIndex((i) => i.type === "paused");
    const second = all.findIndex((i, k) => k > first && i.type === "paused");
    for (const touched of [false, true]) {
      const { el, model } = mount(); // paused at 04
      await tick(); await tick();
      const cont = q<HTMLButtonElement>(el, ".dsh-debug-continue");
      cont.focus();
      cont.click();
      await tick();
      expect(debugCalls(model).at(-1)?.action).toBe("continue");
      model.push(all.slice(first + 1, second)); // resumed, the run goes on: the bar hides for a while
      await tick(); await tick();
      expect(q(el, ".dsh-debug-bar").hidden).toBe(true);
      const elsewhere = document.activeElement as HTMLElement; // the widget kept the focus inside meanwhile
      expect(el.contains(elsewhere) && elsewhere !== cont).toBe(true);
      if (touched) { // the person pressed a key in the widget meanwhile: where the focus is, is theirs
        elsewhere.dispatchEvent(new KeyboardEvent("keydown", { key: "ArrowRight", bubbles: true }));
      }
      model.push([all[second]]); // paused at 05
      await tick(); await tick();
      expect(q(el, ".dsh-debug-bar").hidden).toBe(false);
      expect(document.activeElement === q(el, ".dsh-debug-continue")).toBe(!touched);
      cleanup?.(); cleanup = null; document.body.innerHTML = "";
    }
  });

  it("Continue with a changed, unapplied edit warns once; the same press again goes on without it", async () => {
    const { el, model } = mount();
    await tick(); await tick();
    q(el, ".dsh-debug-edit").click();
    const area = q<HTMLTextAreaElement>(el, ".dsh-debug-json");
    const before = debugCalls(model).length;
    q(el, ".dsh-debug-continue").click(); // unchanged text: nothing to lose, it goes on
    await tick();
    expect(debugCalls(model).at(-1)?.action).toBe("continue");
    area.value = JSON.stringify("an edit not applied");
    area.dispatchEvent(new Event("input"));
    q(el, ".dsh-debug-step").click();
    await tick();
    expect(debugCalls(model).length).toBe(before + 1); // the step was not sent
    const status = q(el, ".dsh-debug-status");
    expect(status.textContent).toBe("The edit in the editor is not applied: Apply edit (Ctrl+Enter) first, or press Step again to go on without it.");
    expect(status.getAttribute("aria-live")).toBe("polite");
    expect(status.classList.contains("dsh-debug-status-err")).toBe(true);
    q(el, ".dsh-debug-step").click();
    await tick();
    expect(debugCalls(model).at(-1)?.action).toBe("step");
    expect(debugCalls(model).length).toBe(before + 2);
  });
});
