// jsdom has no DragEvent, which @lumino/dragdrop (loaded by @lumino/widgets) extends when it loads;
// the page's browsers all have it. A MouseEvent stands in: no test drags.
if (typeof globalThis.DragEvent === 'undefined') {
  (globalThis as { DragEvent?: unknown }).DragEvent = class DragEvent extends MouseEvent {};
}
