// Pacing for a classroom (issue 23 item 2, issue 37 item 5): a stage stays at least as long as
// its narration takes to read aloud — 150 words a minute at 1× by default (the presenter can set
// another pace), scaled by the chosen speed — or, with "hold" (the default in presenter mode),
// until the presenter says "next".

/** Reading speed at 1×, words per minute: reading aloud to a class (12–20 s for a stage's text). */
export const WORDS_PER_MINUTE = 150;
/** The paces a presenter can set (words a minute) and the step between them. */
export const WPM_MIN = 60;
export const WPM_MAX = 400;
export const WPM_STEP = 10;

/** A pace as the control takes it: a whole step between WPM_MIN and WPM_MAX (the default for
 *  anything that is not a number). */
export function clampWpm(wpm: number): number {
  if (!Number.isFinite(wpm)) return WORDS_PER_MINUTE;
  return Math.min(WPM_MAX, Math.max(WPM_MIN, Math.round(wpm / WPM_STEP) * WPM_STEP));
}

/** The number of words of `text` (what a reader reads: runs of letters, digits, #seqs, ids). */
export function wordCount(text: string): number {
  return (text.match(/[\p{L}\p{N}#_]+(?:[-'.:/][\p{L}\p{N}#_]+)*/gu) ?? []).length;
}

/** Milliseconds to read `text` at 1× at `wpm` words a minute (0 for no text); rounded up, so a
 *  dwell of this long is never under the reading time. */
export function readingMs(text: string, wpm = WORDS_PER_MINUTE): number {
  return Math.ceil((wordCount(text) * 60_000) / wpm);
}

/** How long a playback step stays on screen: the recorded gap (already scaled), but never less
 *  than the reading time of the step's narration at this speed. */
export function paceDelay(recordedMs: number, readMs: number, speed: number): number {
  return Math.max(recordedMs, Math.ceil(readMs / speed));
}

/** Live mode at reading pace: while the run is going each missed stage stays its reading time
 *  (the diagram may fall behind); between turns it catches up at `catchUpMs` a stage. */
export function livePace(readMs: number, speed: number, running: boolean, catchUpMs: number): number {
  return running ? Math.max(catchUpMs, Math.ceil(readMs / speed)) : catchUpMs;
}
