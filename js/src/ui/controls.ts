// Playback controls (play / pause / step / scrubber over tool calls / live), the pacing row
// (speed, reading pace in words a minute, hold, predict) and the prompt box.
import { clampWpm, WPM_MAX, WPM_MIN, WPM_STEP } from "../model/pacing";
import { SPEEDS } from "../model/playback";
import type { ToolCallTrace } from "../model/stages";
import { button as btn, h } from "./dom";
import { iconLabel } from "./icons";

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
  readingPace: boolean;
  /** The reading pace, words a minute at 1×. */
  wpm: number;
  /** Said instead of "call i/n: name · id" (a new turn without a tool call yet). */
  note?: string;
  /** A long session held in parts (data/loop-window.ts): the scrubber spans every call of the
   *  session and `scrub` gets the session's call number. */
  session?: SessionCalls;
}

/** Where the part held lies among the session's calls: `calls` are those of the part, the first
 *  of them the session's call number `base` (0-based) of `total` (each undefined while the kernel
 *  numbers them); `moreBefore` / `moreAfter`: the session goes on past the part; `reading`: the
 *  call number being read from the kernel (the scrubber stays there meanwhile). */
export interface SessionCalls { base?: number; total?: number; moreBefore: boolean; moreAfter: boolean; reading?: number }
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
  setReadingPace(on: boolean): void;
  /** Play pressed while "hold" is on: release the hold and play (one click). */
  releaseHold(): void;
  setWpm(wpm: number): void;
}

export interface Playback {
  /** The playback bar: back / play / next, the position, live (sticky in presenter mode). */
  el: HTMLElement;
  /** The pacing row: speed, reading pace and its words a minute, hold, predict. */
  pacing: HTMLElement;
  update(d: PlaybackInput): void;
}

/** The playback controls, built once and updated in place: a render never replaces a button
 *  under the pointer or the keyboard focus (a click at 4× is never lost). */
export function createPlayback(cb: PlaybackCallbacks): Playback {
  let playing = false;
  let held = false;
  const back = btn("dsh-back", "back", "step back", () => cb.back());
  iconLabel(back, "back", "back");
  const play = btn("dsh-play", "play", "play", () => (playing ? cb.pause() : held ? cb.releaseHold() : cb.play()));
  iconLabel(play, "play", "play");
  const forward = btn("dsh-forward", "next", "step forward", () => cb.forward());
  iconLabel(forward, "next", "next", true);
  const scrub = h("input", { class: "dsh-scrubber", type: "range", min: 0, step: 1, "aria-label": "tool call" }) as HTMLInputElement;
  scrub.addEventListener("input", () => cb.scrub(Number(scrub.value)));
  const label = h("span", { class: "dsh-scrub-label" });
  const live = btn("dsh-live", "live", "follow the running session", () => cb.goLive());
  iconLabel(live, "live-off", "live");
  const speeds = SPEEDS.map((sp) => {
    const b = h("button", { class: "dsh-btn dsh-speed", type: "button", "data-speed": sp, title: `play at ${sp}× speed` }, `${sp}×`);
    b.addEventListener("click", () => cb.setSpeed(sp));
    return b;
  });
  const toggle = (cls: string, text: string, title: string, fn: (v: boolean) => void) => {
    const box = h("input", { type: "checkbox", class: cls, title }) as HTMLInputElement;
    box.addEventListener("change", () => fn(box.checked));
    return { box, el: h("label", { class: "dsh-toggle", title }, box, ` ${text}`) };
  };
  const stepOnly = toggle("dsh-steponly", "hold (next / back only)", "hold each stage until next: no auto-advance (the default in presenter mode)", cb.setStepOnly);
  const reading = toggle("dsh-reading-pace", "reading pace", "each stage stays at least as long as its text takes to read aloud at the words a minute set here (at 1×)", cb.setReadingPace);
  const wpm = h("input", { type: "number", class: "dsh-wpm", min: WPM_MIN, max: WPM_MAX, step: WPM_STEP, "aria-label": "reading pace, words a minute",
    title: "words a minute at 1× (150: reading aloud to a class)" }) as HTMLInputElement;
  wpm.addEventListener("change", () => { const v = clampWpm(Number(wpm.value)); wpm.value = String(v); cb.setWpm(v); });
  const wpmEl = h("label", { class: "dsh-wpm-label" }, wpm, " words a minute");
  const predict = toggle("dsh-predict-toggle", "predict, then reveal", "before a stage is revealed, guess what comes next", cb.setPredict);
  const el = h("div", { class: "dsh-playback" }, back, play, forward, scrub, label, live);
  const pacing = h("div", { class: "dsh-pacing" }, h("span", { class: "dsh-muted" }, "speed"),
    h("div", { class: "dsh-speeds", role: "group", "aria-label": "playback speed" }, ...speeds), reading.el, wpmEl, stepOnly.el, predict.el);
  return {
    el,
    pacing,
    update(d) {
      playing = d.playing;
      // hold on: play is not off without a word — it says so, and one press releases the hold
      held = !d.playing && d.stepOnly && d.stepCount > 0;
      const w = d.session;
      const base = w ? w.base ?? 0 : 0;
      const n = w ? w.total ?? base + d.calls.length : d.calls.length;
      back.disabled = d.stepIndex <= 0 && !d.live && !w?.moreBefore;
      forward.disabled = d.stepIndex >= d.stepCount - 1 && !d.live && !w?.moreAfter;
      play.className = `dsh-btn ${d.playing ? "dsh-pause" : "dsh-play"}${held ? " dsh-play-held" : ""}`;
      const face = d.playing ? "pause" : held ? "held" : "play";
      if (play.dataset.face !== face) { play.dataset.face = face; iconLabel(play, d.playing ? "pause" : "play", d.playing ? "pause" : held ? "play (hold on)" : "play"); }
      const title = d.playing ? "pause" : held ? "hold is on: each stage waits for next. Press to release the hold and play at reading pace" : "play";
      play.title = title;
      play.setAttribute("aria-label", title);
      play.dataset.held = String(held);
      play.disabled = !d.playing && d.stepCount === 0;
      scrub.max = String(Math.max(0, n - 1));
      scrub.disabled = n < 2;
      const at = w?.reading ?? base + d.callIndex;
      if (!scrub.matches(":active")) scrub.value = String(Math.max(0, at));
      const call = d.calls[d.callIndex];
      // a long session's numbers once the kernel has counted its calls ("…" until then)
      const no = w && w.base === undefined ? "…" : String(base + d.callIndex + 1);
      const of = w && w.total === undefined ? "…" : String(n);
      label.textContent = w?.reading !== undefined ? `call ${w.reading + 1}/${of}: reading it from the kernel…`
        : d.note ?? (n ? `call ${no}/${of}${call ? `: ${call.name} · ${call.callId}` : ""}` : "no tool calls yet");
      live.hidden = !d.canLive;
      live.className = `dsh-btn dsh-live ${d.live ? "dsh-live-on" : ""}`;
      if (live.dataset.face !== String(d.live)) { live.dataset.face = String(d.live); iconLabel(live, d.live ? "live-on" : "live-off", "live"); }
      live.title = d.live ? "following the running session" : "follow the running session";
      live.setAttribute("aria-label", live.title);
      for (const b of speeds) {
        const on = Number(b.dataset.speed) === d.speed;
        b.classList.toggle("dsh-speed-on", on);
        b.setAttribute("aria-pressed", on ? "true" : "false");
      }
      stepOnly.box.checked = d.stepOnly;
      predict.box.checked = d.predict;
      reading.box.checked = d.readingPace;
      if (doc(wpm).activeElement !== wpm) wpm.value = String(d.wpm); // never under the typing
      wpmEl.title = `each stage stays at least its reading time at ${d.wpm} words a minute (at 1×)`;
    },
  };
}

const doc = (el: HTMLElement): Document => el.ownerDocument;

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
