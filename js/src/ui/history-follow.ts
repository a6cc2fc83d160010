// Keep the history's scroll box on the item the stage speaks of: scrolled into view (inside the
// box only, never the page) when the stage changes; otherwise the box keeps where it was (the
// view is rebuilt on every render, which would reset it to the top).

export interface FollowState { key: string; scrollTop: number }

export interface HistoryFollow { before(root: Element): void; after(root: Element, key: string): void; reset(): void }

export function createHistoryFollow(): HistoryFollow {
  const st: FollowState = { key: "", scrollTop: 0 };
  return {
    /** Call before the view is replaced: remembers the box's scroll position. */
    before(root) {
      const box = root.querySelector<HTMLElement>(".dsh-history");
      if (box) st.scrollTop = box.scrollTop;
    },
    /** Call after: restores the position, or scrolls the current item into view when `key`
     *  (call and stage) changed. */
    after(root, key) {
      const box = root.querySelector<HTMLElement>(".dsh-history");
      if (!box) return;
      box.scrollTop = st.scrollTop;
      const cur = box.querySelector<HTMLElement>('[aria-current="true"]');
      if (key !== st.key && cur) {
        const b = box.getBoundingClientRect();
        const r = cur.getBoundingClientRect();
        const top = r.top - b.top + box.scrollTop;
        // the item's head in view, with a little of what precedes it; a tall item starts at the top
        const want = r.height > b.height ? top - 8 : top - (b.height - r.height) / 2;
        box.scrollTop = Math.max(0, want);
        st.key = key;
      }
      st.scrollTop = box.scrollTop;
    },
    /** The history view was left: coming back scrolls to the current item again. */
    reset() { st.key = ""; st.scrollTop = 0; },
  };
}
