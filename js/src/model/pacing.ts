// Pacing for a classroom (issue 23 item 2): a stage stays at least as long as its narration
// takes to read — about 200 words a minute at 1×, scaled by the chosen speed — or, with "hold"
// (the default in presenter mode), until the presenter says "next".

/** Reading speed at 1×, words per minute. */
export const WORDS_PER_MINUTE = 200;

/** The number of words of `text` (what a reader reads: runs of letters, digits, #seqs, ids). */
export function wordCount(text: string): number {
  return (text.match(/[\p{L}\p{N}#_]+(?:[-'.:/][\p{L}\p{N}#_]+)*/gu) ?? []).length;
}

/** Milliseconds to read `text` at 1× (0 for no text). */
export function readingMs(text: string, wpm = WORDS_PER_MINUTE): number {
  return Math.round((wordCount(text) * 60_000) / wpm);
}

/** How long a playback step stays on screen: the recorded gap (already scaled), but never less
 *  than the reading time of the step's narration at this speed. */
export function paceDelay(recordedMs: number, readMs: number, speed: number): number {
  return Math.max(recordedMs, Math.round(readMs / speed));
}

/** Live mode at reading pace: while the run is going each missed stage stays its reading time
 *  (the diagram may fall behind); between turns it catches up at `catchUpMs` a stage. */
export function livePace(readMs: number, speed: number, running: boolean, catchUpMs: number): number {
  return running ? Math.max(catchUpMs, Math.round(readMs / speed)) : catchUpMs;
}
