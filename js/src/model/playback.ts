// Playback over the stages of every tool call, with the recorded timing of the log.
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

export class Player {
  steps: PlaybackStep[] = [];
  index = -1;
  playing = false;
  speed = 1;
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
    this.index = Math.max(-1, Math.min(this.steps.length - 1, index));
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
  forward(): void { this.seek(this.index + 1); }
  back(): void { this.seek(this.index - 1); }

  play(): void {
    if (this.playing) return;
    if (this.index >= this.steps.length - 1) this.index = -1; // replay from the start
    this.playing = true;
    this.emit();
    this.tick(true);
  }
  pause(): void {
    this.playing = false;
    if (this.handle !== null) this.scheduler.clear(this.handle);
    this.handle = null;
    this.emit();
  }
  private tick(first: boolean): void {
    if (!this.playing) return;
    if (this.index >= this.steps.length - 1) { this.pause(); return; }
    const cur = this.current;
    const next = this.steps[this.index + 1];
    const ms = first || !cur ? 0 : recordedDelay(cur, next, this.speed);
    this.handle = this.scheduler.set(() => {
      this.handle = null;
      this.seek(this.index + 1);
      this.tick(false);
    }, ms);
  }
  dispose(): void {
    this.pause();
    this.listeners.clear();
  }
}
