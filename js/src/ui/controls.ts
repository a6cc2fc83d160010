// Playback controls (play / pause / step / scrubber over tool calls / live) and the prompt box.
import { SPEEDS } from "../model/playback";
import type { ToolCallTrace } from "../model/stages";
import { h } from "./dom";

export interface PlaybackInput {
  playing: boolean;
  live: boolean;
  canLive: boolean;
  calls: ToolCallTrace[];
  callIndex: number;
  stepIndex: number;
  stepCount: number;
  speed: number;
  stepOnly: boolean;
  predict: boolean;
}
export interface PlaybackCallbacks {
  play(): void;
  pause(): void;
  back(): void;
  forward(): void;
  scrub(call: number): void;
  goLive(): void;
  setSpeed(speed: number): void;
  setStepOnly(on: boolean): void;
  setPredict(on: boolean): void;
}

/** Speed (0.5×–4×), step-only and the predict-then-reveal teaching mode. */
function pacing(d: PlaybackInput, cb: PlaybackCallbacks): HTMLElement {
  const speeds = h("div", { class: "dsh-speeds", role: "group", "aria-label": "playback speed" },
    ...SPEEDS.map((sp) => {
      const b = h("button", { class: `dsh-btn dsh-speed ${sp === d.speed ? "dsh-speed-on" : ""}`, type: "button", "data-speed": sp,
        "aria-pressed": sp === d.speed ? "true" : "false", title: `play at ${sp}× speed` }, `${sp}×`);
      b.addEventListener("click", () => cb.setSpeed(sp));
      return b;
    }));
  const toggle = (cls: string, label: string, title: string, on: boolean, fn: (v: boolean) => void) => {
    const box = h("input", { type: "checkbox", class: cls, title }) as HTMLInputElement;
    box.checked = on;
    box.addEventListener("change", () => fn(box.checked));
    return h("label", { class: "dsh-toggle", title }, box, ` ${label}`);
  };
  return h("div", { class: "dsh-pacing" }, h("span", { class: "dsh-muted" }, "speed"), speeds,
    toggle("dsh-steponly", "step only", "no auto-advance: next / back only", d.stepOnly, cb.setStepOnly),
    toggle("dsh-predict-toggle", "predict, then reveal", "before a stage is revealed, guess what comes next", d.predict, cb.setPredict));
}

export function renderPlayback(d: PlaybackInput, cb: PlaybackCallbacks): HTMLElement {
  const btn = (cls: string, label: string, title: string, fn: () => void, disabled = false) => {
    const b = h("button", { class: `dsh-btn ${cls}`, type: "button", title, "aria-label": title, disabled }, label);
    b.addEventListener("click", fn);
    return b;
  };
  const n = d.calls.length;
  const scrub = h("input", { class: "dsh-scrubber", type: "range", min: 0, max: Math.max(0, n - 1), step: 1, value: Math.max(0, d.callIndex), disabled: n < 2, "aria-label": "tool call" }) as HTMLInputElement;
  scrub.addEventListener("input", () => cb.scrub(Number(scrub.value)));
  const call = d.calls[d.callIndex];
  const label = n ? `call ${d.callIndex + 1}/${n}${call ? `: ${call.name} · ${call.callId}` : ""}` : "no tool calls yet";
  return h("div", { class: "dsh-playback" },
    btn("dsh-back", "◀ back", "step back", cb.back, d.stepIndex <= 0 && !d.live),
    d.playing ? btn("dsh-pause", "▮▮ pause", "pause", cb.pause) : btn("dsh-play", "▶ play", d.stepOnly ? "play (off in step-only mode)" : "play", cb.play, d.stepCount === 0 || d.stepOnly),
    btn("dsh-forward", "next ▶", "step forward", cb.forward, d.stepIndex >= d.stepCount - 1 && !d.live),
    scrub,
    h("span", { class: "dsh-scrub-label" }, label),
    d.canLive ? btn(`dsh-live ${d.live ? "dsh-live-on" : ""}`, d.live ? "● live" : "○ live", d.live ? "following the running session" : "follow the running session", cb.goLive) : null,
    pacing(d, cb));
}

export interface PromptCallbacks {
  submit(text: string, steer: boolean): void;
  stop(): void;
}

export interface PromptBox { el: HTMLElement; setStatus(text: string, kind?: "ok" | "err" | "info"): void; setAnswer(text: string): void; setRunning(running: boolean): void }

export function createPromptBox(cb: PromptCallbacks): PromptBox {
  const input = h("textarea", { class: "dsh-prompt-input", rows: 2, placeholder: "Ask the agent… (Ctrl+Enter to send)" }) as HTMLTextAreaElement;
  const steer = h("input", { type: "checkbox", class: "dsh-steer" }) as HTMLInputElement;
  const send = h("button", { class: "dsh-btn dsh-send", type: "button" }, "Send");
  const stop = h("button", { class: "dsh-btn dsh-stop", type: "button", disabled: true, title: "session/cancel" }, "Stop");
  const status = h("div", { class: "dsh-prompt-status", role: "status" });
  const answer = h("div", { class: "dsh-prompt-answer" });
  const doSend = () => {
    const text = input.value.trim();
    if (!text) return;
    cb.submit(text, steer.checked);
    input.value = "";
  };
  send.addEventListener("click", doSend);
  input.addEventListener("keydown", (e) => { if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) { e.preventDefault(); doSend(); } });
  stop.addEventListener("click", () => cb.stop());
  const el = h("div", { class: "dsh-prompt" },
    h("div", { class: "dsh-prompt-row" }, input, h("div", { class: "dsh-prompt-buttons" }, send, stop)),
    h("label", { class: "dsh-toggle" }, steer, " steer the running turn (mode: steer)"),
    status, answer);
  return {
    el,
    setStatus(text, kind = "info") { status.textContent = text; status.dataset.kind = kind; },
    setAnswer(text) { answer.textContent = text; answer.hidden = !text; },
    setRunning(running) { stop.disabled = !running; },
  };
}
