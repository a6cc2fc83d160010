// Playback over the stages of every tool call, with the recorded timing of the log.
import { clampWpm, paceDelay, WORDS_PER_MINUTE } from "./pacing";
import type { PlaybackStep } from "./stages";

export interface Scheduler {
  set(fn: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}
const realScheduler: Scheduler = {
  set: (fn, ms) => setTimeout(fn, ms),
  clear: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
};

/** Delay before moving from step a to step b: the recorded gap, clamped so a learner can follow
 *  (a 40 ms tool run still shows; a 5-minute pause does not stall the replay). */
export function recordedDelay(a: PlaybackStep, b: PlaybackStep, speed = 1, min = 350, max = 2500): number {
  const gap = Math.max(0, b.time - a.time);
  return Math.min(max, Math.max(min, gap)) / speed;
}

/** The playback speeds a learner can pick. */
export const SPEEDS = [0.5, 1, 2, 4] as const;
export type Speed = (typeof SPEEDS)[number];

/** Live mode never skips a stage, but it must not lag the run: each missed stage dwells this
 *  long, shorter the further behind the diagram is (and with the chosen speed). */
export function liveDwell(behind: number, speed: number, base = 320, min = 60): number {
  if (behind <= 0) return 0;
  const factor = behind <= 2 ? 1 : Math.min(5, behind / 2);
  return Math.max(min, Math.round(base / factor / speed));
}

/** Stop before `index` (predict-then-reveal asks first): return true to hold the player. */
export type Gate = (index: number) => boolean;

const now = (): number => (typeof performance !== "undefined" ? performance.now() : Date.now());

export class Player {
  steps: PlaybackStep[] = [];
  index = -1;
  playing = false;
  speed: number = 1;
  /** Step-only mode: no auto-advance; forward / back only. */
  stepOnly = false;
  /** How long the step being played stays on screen, as last scheduled (ms; the widget's
   *  data-step-ms): its recorded gap or its reading time at this pace and speed. */
  lastDelay = 0;
  gate: Gate | null = null;
  /** Reading pace: the reading time (ms at 1×, at `wpm`) of step `index`'s narration; a step
   *  never advances on its own before it (model/pacing.ts). Null: the recorded timing only. */
  readMs: ((index: number) => number) | null = null;
  /** Steps follow the last one held (a window of a long session reads the next part of it): at
   *  the last step, play waits for them (`waiting`) instead of stopping; `setSteps` with more
   *  steps and a `seek` past the old position go on. Null: the steps are all there are. */
  more: (() => boolean) | null = null;
  /** Playing, at the last step held, waiting for the next part of the session. */
  waiting = false;
  /** The reading pace in words a minute at 1× (what `readMs` reads at; the presenter sets it). */
  wpm: number = WORDS_PER_MINUTE;
  /** When the shown step last changed (the page clock, ms): the widget's data-step-at. */
  shownAt = 0;
  private handle: unknown = null;
  private listeners = new Set<() => void>();

  constructor(private readonly scheduler: Scheduler = realScheduler) {}

  onChange(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }
  private emit(): void {
    for (const fn of this.listeners) fn();
  }

  setSteps(steps: PlaybackStep[]): void {
    this.steps = steps;
    if (this.index >= steps.length) this.index = steps.length - 1;
  }

  get current(): PlaybackStep | undefined {
    return this.index >= 0 ? this.steps[this.index] : undefined;
  }

  seek(index: number): void {
    const next = Math.max(-1, Math.min(this.steps.length - 1, index));
    if (next !== this.index) this.shownAt = now();
    this.index = next;
    this.emit();
  }
  /** Go to a stage of a tool call (the nearest recorded step at or before it). */
  seekStage(call: number, stage: number): boolean {
    let best = -1;
    this.steps.forEach((s, i) => { if (s.call === call && s.stage <= stage) best = i; });
    if (best < 0) return false;
    this.seek(best);
    return true;
  }
  /** First step of tool call `call`. */
  seekCall(call: number): void {
    const i = this.steps.findIndex((s) => s.call === call);
    if (i >= 0) this.seek(i);
  }
  forward(): void {
    // a question before the next step holds the player, pressed or played: a tick still due
    // would otherwise hold again after the answer and withdraw its reveal
    if (this.gate?.(this.index + 1)) { this.pause(); return; }
    this.seek(this.index + 1);
  }
  setSpeed(speed: number): void {
    this.speed = speed;
    if (this.playing && this.handle !== null) { this.scheduler.clear(this.handle); this.handle = null; this.tick(false); }
    this.emit();
  }
  /** Set the reading pace (words a minute; clamped to the control's range). A stage being played
   *  is rescheduled at the new pace (the time it has been shown counts). */
  setWpm(wpm: number): void {
    this.wpm = clampWpm(wpm);
    if (this.playing && this.handle !== null) { this.scheduler.clear(this.handle); this.handle = null; this.tick(true); }
    this.emit();
  }
  /** The reading time step `index` is owed at this pace and speed (ms; 0 without reading pace). */
  owedMs(index: number): number {
    return Math.ceil((this.readMs?.(index) ?? 0) / this.speed);
  }
  /** Play pressed while "hold" is on: one press releases the hold and plays. */
  releaseHold(): void {
    this.stepOnly = false;
    this.play();
    if (!this.playing) this.emit();
  }
  setStepOnly(on: boolean): void {
    this.stepOnly = on;
    if (on) this.pause();
    else this.emit();
  }
  back(): void { this.seek(this.index - 1); }

  play(): void {
    if (this.playing || this.stepOnly) return;
    if (this.index >= this.steps.length - 1 && !(this.index >= 0 && this.more?.())) { // replay from the start: its first stage, never none
      this.playing = true;
      this.seek(0);
      this.tick(false);
      return;
    }
    this.playing = true;
    this.emit();
    this.tick(true);
  }
  pause(): void {
    this.playing = false;
    this.waiting = false;
    if (this.handle !== null) this.scheduler.clear(this.handle);
    this.handle = null;
    this.emit();
  }
  /** The next part of the session arrived (its steps set, the position sought): play on. */
  resume(): void {
    if (!this.waiting) return;
    this.waiting = false;
    if (this.playing && this.handle === null) this.tick(false);
  }
  private tick(first: boolean): void {
    if (!this.playing) return;
    if (this.index >= this.steps.length - 1) {
      if (this.more?.()) { this.waiting = true; this.emit(); return; }
      this.pause();
      return;
    }
    const cur = this.current;
    const next = this.steps[this.index + 1];
    // play pressed on a stage: at reading pace it stays until its text is read (the time it has
    // been shown counts); otherwise the next stage comes at once
    const ms = !cur ? 0 : first ? Math.max(0, Math.ceil(this.owedMs(this.index) - (now() - this.shownAt)))
      : paceDelay(recordedDelay(cur, next, this.speed), this.readMs?.(this.index) ?? 0, this.speed);
    // the dwell of the step shown: play pressed on it counts the time it has been shown already
    this.lastDelay = first ? (cur ? Math.max(ms + Math.round(now() - this.shownAt), this.owedMs(this.index)) : this.lastDelay) : ms;
    this.handle = this.scheduler.set(() => {
      this.handle = null;
      if (this.gate?.(this.index + 1)) { this.pause(); return; }
      this.seek(this.index + 1);
      this.tick(false);
    }, ms);
  }
  dispose(): void {
    this.pause();
    this.listeners.clear();
  }
}
