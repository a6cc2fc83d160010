// What the two time-axis views share (the inspector's session timeline, ui/timeline.ts, and its
// one-turn waterfall, ui/waterfall.ts): the step between the axis's ticks, the zoom keys, and
// redrawing what scrolled into view once per frame.
import { frameThrottle } from "./dom";

/** The smallest round step (1, 2 or 5 × a power of ten, in ms) of at least `minMs`. */
export function niceStep(minMs: number): number {
  const p = 10 ** Math.floor(Math.log10(Math.max(minMs, 1e-3)));
  for (const m of [1, 2, 5, 10]) if (m * p >= minMs) return m * p;
  return 10 * p;
}

export interface ZoomKeys {
  zoomIn(): void;
  zoomOut(): void;
  reset(): void;
}

/** The zoom keys of an axis: + (or =) zooms in, − (or _) out, 0 resets; whether `key` was one. */
export function zoomKey(key: string, zoom: ZoomKeys): boolean {
  if (key === "+" || key === "=") zoom.zoomIn();
  else if (key === "-" || key === "_") zoom.zoomOut();
  else if (key === "0") zoom.reset();
  else return false;
  return true;
}

/** Call `draw` at most once a frame while `el` scrolls (only the rows in view are in the DOM). */
export function redrawOnScroll(el: HTMLElement, draw: () => void): void {
  el.addEventListener("scroll", frameThrottle(draw).schedule);
}
