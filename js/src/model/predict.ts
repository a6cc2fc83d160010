// Predict, then reveal (issue 11 item 9, issue 37 item 3): before a stage is revealed in replay,
// the learner guesses what comes next — the tool arguments (before 01), the seqs the tool/result
// will cite in sourceEventSeqs (before 04), the messages the next request will carry (before the
// history is derived at 05) — and the widget shows this run's real values beside the guess, each
// marked match / mismatch. Until the reveal the widget shows nothing of the answer: the question
// is asked on the step before the one that holds it (the arguments of the first call, asked on
// that call's 01, are masked: model/predict-mask.ts), and a question the learner steps past
// unanswered is withdrawn.
import type { SessionEvent } from "../types";
import { resolveMessageSeqs } from "./diff";
import { deriveMessages, messageText } from "./history";
import { previousFrozen } from "./history-focus";
import type { PlaybackStep, ToolCallTrace } from "./stages";

export type PredictKind = "arguments" | "sources" | "messages";
export interface PredictOption { seq: number; label: string }
export interface Question {
  key: string;
  kind: PredictKind;
  /** The step index the question comes before (revealed after the answer). */
  target: number;
  callId: string;
  name: string;
  prompt: string;
  options: PredictOption[];
}
export type Guess =
  | { kind: "arguments"; text: string }
  | { kind: "sources" | "messages"; seqs: number[] }
  /** "Not sure": the answer is shown; the question counts as asked, never as right. */
  | { kind: "unsure" }
  /** "Class vote, then reveal": the class votes aloud; the presenter marks the vote afterwards. */
  | { kind: "vote" };
/** One row of a reveal. `match` is null while a class vote waits for the presenter's mark. */
export interface Mark { label: string; guess: string; real: string; match: boolean | null }
export interface Reveal { question: Question; guess: Guess; match: boolean; real: string; marks: Mark[]; judged?: boolean }
/** The session's score: right answers out of the questions asked ("not sure" is asked, not right;
 *  a class vote counts once the presenter marked it). */
export interface Score { right: number; asked: number }

const EVENT_CHOICES = new Set(["user/message", "assistant/message", "tool/call", "approval/asked", "approval/decided", "request/frozen", "step/start"]);

function eventLabel(ev: SessionEvent): string {
  const m = "message" in ev ? (ev.message as { role?: string } | undefined) : undefined;
  return `#${ev.seq} ${ev.type}${m?.role ? ` (${m.role})` : ""}`;
}

function messageLabel(events: readonly SessionEvent[], seq: number): string {
  const ev = events[seq];
  const m = ev && "message" in ev ? (ev.message as Parameters<typeof messageText>[0]) : undefined;
  if (!m) return `#${seq}`;
  const text = m.role === "tool" ? `result of ${m.toolCallId}` : messageText(m) || (m.role === "assistant" ? "tool calls" : "");
  return `#${seq} ${m.role}: ${text.length > 60 ? `${text.slice(0, 60)}…` : text}`;
}

/** The question to ask before step `index` is revealed, if that step is a prediction point. */
export function questionFor(steps: readonly PlaybackStep[], index: number, traces: readonly ToolCallTrace[], events: readonly SessionEvent[]): Question | null {
  const step = steps[index];
  if (!step) return null;
  const t = traces[step.call];
  if (!t) return null;
  const base = { target: index, callId: t.callId, name: t.name };
  const firstOfCall = index === 0 || steps[index - 1].call !== step.call;
  if (firstOfCall && step.stage <= 2) {
    return { ...base, key: `${t.callId}:arguments`, kind: "arguments", options: [],
      prompt: `The model is about to call ${t.name}. What arguments will it send? (free text or JSON)` };
  }
  if (step.stage === 4 && t.resultSeq !== undefined) {
    const from = previousFrozen(events, t.assistantSeq ?? t.callSeq ?? 0) ?? 0;
    const chosen = events.slice(from, t.resultSeq).filter((e) => EVENT_CHOICES.has(e.type)).slice(-10);
    const cited = events[t.resultSeq] && "sourceEventSeqs" in events[t.resultSeq] ? (events[t.resultSeq] as { sourceEventSeqs?: number[] | null }).sourceEventSeqs ?? [] : [];
    for (const s of cited) if (events[s] && !chosen.includes(events[s])) chosen.push(events[s]);
    const options = chosen.sort((a, b) => a.seq - b.seq).map((e) => ({ seq: e.seq, label: eventLabel(e) }));
    return { ...base, key: `${t.callId}:sources`, kind: "sources", options,
      prompt: `tool/result #${t.resultSeq} is about to be committed. Which events will its sourceEventSeqs cite?` };
  }
  // before the history is derived (05 shows it: the answer); a call without a 05 step, before 06
  const derivedFirst = step.stage === 6 && index > 0 && steps[index - 1].call === step.call && steps[index - 1].stage === 5;
  if ((step.stage === 5 || (step.stage === 6 && !derivedFirst)) && t.frozenSeq !== undefined) {
    const real = resolveMessageSeqs(events, t.frozenSeq);
    const seqs = [...new Set([...deriveMessages(events, t.frozenSeq - 1).map((d) => d.seq), ...real])].sort((a, b) => a - b);
    return { ...base, key: `${t.callId}:messages`, kind: "messages", options: seqs.map((s) => ({ seq: s, label: messageLabel(events, s) })),
      prompt: `The next step derives its history and freezes request #${t.frozenSeq}. Which messages will that request carry?` };
  }
  return null;
}

function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === "object") return Object.fromEntries(Object.keys(v).sort().map((k) => [k, canonical((v as Record<string, unknown>)[k])]));
  return v;
}
function parseJson(text: string): unknown {
  try { return JSON.parse(text) as unknown; } catch { return undefined; }
}
const norm = (s: string) => s.replace(/\s+/g, " ").trim();
const show = (v: unknown) => (v === undefined ? "—" : typeof v === "string" ? v : JSON.stringify(v));

function compareArguments(guess: string, real: string): { match: boolean; marks: Mark[] } {
  const g = parseJson(guess);
  const r = parseJson(real);
  if (r && typeof r === "object" && !Array.isArray(r)) {
    const ro = r as Record<string, unknown>;
    const go = g && typeof g === "object" && !Array.isArray(g) ? (g as Record<string, unknown>) : {};
    const keys = [...new Set([...Object.keys(ro), ...Object.keys(go)])];
    const marks = keys.map((k) => ({ label: k, guess: show(go[k]), real: show(ro[k]),
      match: JSON.stringify(canonical(go[k])) === JSON.stringify(canonical(ro[k])) }));
    // free text: the real values appear in it
    const match = g !== undefined ? marks.every((m) => m.match) : Object.values(ro).every((v) => norm(guess).includes(norm(show(v))));
    return { match, marks: g !== undefined ? marks : marks.map((m) => ({ ...m, guess: norm(guess).includes(norm(m.real)) ? m.real : "—", match: norm(guess).includes(norm(m.real)) })) };
  }
  return { match: norm(guess) === norm(real), marks: [] };
}

function compareSeqs(guess: readonly number[], real: readonly number[], q: Question): { match: boolean; marks: Mark[] } {
  const g = new Set(guess);
  const r = new Set(real);
  const marks = q.options.map((o) => ({ label: o.label, guess: g.has(o.seq) ? "yes" : "no", real: r.has(o.seq) ? "yes" : "no", match: g.has(o.seq) === r.has(o.seq) }));
  return { match: g.size === r.size && [...g].every((s) => r.has(s)), marks };
}

/** This run's real values beside the guess. */
export function reveal(q: Question, guess: Guess, traces: readonly ToolCallTrace[], events: readonly SessionEvent[]): Reveal {
  const t = traces.find((x) => x.callId === q.callId);
  if (q.kind === "arguments") {
    const real = t?.arguments ?? "";
    const r = compareArguments(guess.kind === "arguments" ? guess.text : "", real);
    return voteMarks({ question: q, guess, real, ...r, match: guess.kind === "arguments" && r.match });
  }
  let realSeqs: number[] = [];
  if (q.kind === "sources" && t?.resultSeq !== undefined) {
    const ev = events[t.resultSeq];
    realSeqs = [...(("sourceEventSeqs" in ev ? ev.sourceEventSeqs : null) ?? [])];
  } else if (q.kind === "messages" && t?.frozenSeq !== undefined) realSeqs = resolveMessageSeqs(events, t.frozenSeq);
  const guessed = guess.kind === "sources" || guess.kind === "messages";
  const r = compareSeqs(guessed ? guess.seqs : [], realSeqs, q);
  return voteMarks({ question: q, guess, real: `[${realSeqs.join(", ")}]`, ...r, match: guessed && r.match });
}

/** A class vote's rows carry no guess of their own: each says "class vote" and waits for the
 *  presenter's mark; "not sure" rows say so and are not right. */
function voteMarks(r: Reveal): Reveal {
  if (r.guess.kind === "vote") return { ...r, match: false, marks: r.marks.map((m) => ({ ...m, guess: "class vote", match: null })) };
  if (r.guess.kind === "unsure") return { ...r, match: false, marks: r.marks.map((m) => ({ ...m, guess: "not sure", match: false })) };
  return r;
}

/** The teaching mode's state: on/off, the question held before a step, the answered ones, the
 *  last reveal (shown while the player stays on the revealed step). */
export class PredictMode {
  on = false;
  /** "Class vote, then reveal": no input; the presenter marks the class's vote after the reveal. */
  vote = false;
  question: Question | null = null;
  revealed: Reveal | null = null;
  private readonly answered = new Map<string, Reveal>();

  set(on: boolean): void {
    this.on = on;
    if (!on) { this.question = null; this.revealed = null; }
  }
  /** Turned on at step `from`: the first question at or after it (never one behind, never by
   *  wrapping past the end); it is shown at once, and answering it reveals its step. */
  start(steps: readonly PlaybackStep[], from: number, traces: readonly ToolCallTrace[], events: readonly SessionEvent[]): Question | null {
    this.revealed = null;
    this.question = null;
    if (!this.on) return null;
    for (let i = Math.max(0, from); i < steps.length; i++) {
      const q = questionFor(steps, i, traces, events);
      if (q && !this.answered.has(q.key)) { this.question = q; break; }
    }
    return this.question;
  }
  /** The score of the session so far: matches (and votes marked right) out of the answered
   *  questions; "not sure" is asked and not right; a vote counts once it is marked. */
  score(): Score {
    let right = 0, asked = 0;
    for (const r of this.answered.values()) {
      if (r.guess.kind === "vote" && !r.judged) continue;
      asked += 1;
      if (r.match) right += 1;
    }
    return { right, asked };
  }
  /** Mark the class's vote on the current reveal right or wrong (once): the reveal's title, every
   *  row and the score follow the presenter's mark. */
  judge(right: boolean): void {
    const r = this.revealed;
    if (!r || r.guess.kind !== "vote" || r.judged) return;
    r.match = right;
    r.judged = true;
    r.marks = r.marks.map((m) => ({ ...m, match: right }));
  }
  /** The player's gate: hold before step `i` when it asks a question not answered yet. */
  gate(steps: readonly PlaybackStep[], i: number, traces: readonly ToolCallTrace[], events: readonly SessionEvent[]): boolean {
    if (!this.on) return false;
    const q = questionFor(steps, i, traces, events);
    if (!q || this.answered.has(q.key)) return false;
    this.question = q;
    this.revealed = null;
    return true;
  }
  /** Record the guess and reveal; returns the step to show (the one the question came before). */
  answer(g: Guess, traces: readonly ToolCallTrace[], events: readonly SessionEvent[]): number | null {
    const q = this.question;
    if (!q) return null;
    this.revealed = reveal(q, g, traces, events);
    this.answered.set(q.key, this.revealed);
    this.question = null;
    return q.target;
  }
  /** The step to show while `q` is asked: the one before its target (that step holds nothing of
   *  the answer); the first call's arguments, asked on its own 01, stay on it (masked). */
  static shownFor(q: Question): number {
    return q.target > 0 ? q.target - 1 : q.target;
  }
  /** Whether the widget at step `index` can keep question `q` open: its answer is not on screen
   *  (before its target; on it only for masked arguments). */
  static hides(q: Question, index: number): boolean {
    return index < q.target || (index === q.target && q.kind === "arguments");
  }
  /** What the panel shows now: nothing outside replay, a reveal only on its own step, a question
   *  only while its answer is not on screen (stepped past unanswered, it is withdrawn and asked
   *  again the next time the player comes to it). */
  view(replaying: boolean, index: number): { question: Question | null; reveal: Reveal | null } {
    if (!this.on || !replaying) { this.question = null; this.revealed = null; }
    if (this.revealed && index !== this.revealed.question.target) this.revealed = null;
    if (this.question && !PredictMode.hides(this.question, index)) this.question = null;
    return { question: this.question, reveal: this.revealed };
  }
}
