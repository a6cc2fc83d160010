// Keyboard for the inspector's virtualised event list (role="listbox", rows role="option"):
// ArrowUp / ArrowDown / Home / End / PageUp / PageDown move the selection (selection follows
// focus) and focus the row; Space and Enter select the focused row.
import { roveIndex } from "./a11y";

const PAGE = 10;

/** The row index a key moves to from `index` among `count` rows, or null for other keys. */
export function listIndex(key: string, index: number, count: number): number | null {
  if (count <= 0) return null;
  if (index < 0) return ["ArrowDown", "ArrowUp", "Home", "End", "PageDown", "PageUp"].includes(key) ? (key === "End" ? count - 1 : 0) : null;
  if (key === "PageDown") return Math.min(count - 1, index + PAGE);
  if (key === "PageUp") return Math.max(0, index - PAGE);
  return roveIndex(key, index, count, "vertical");
}

/** The list's keys: `count()` rows, `current()` the selected row's index (-1: none),
 *  `selectIndex(j)` selects row j (its event may still be on its way: the rows are pages). */
export function listKeys(list: HTMLElement, count: () => number, current: () => number, selectIndex: (j: number) => void): () => void {
  const onKey = (e: KeyboardEvent) => {
    const t = e.target as HTMLElement;
    if (t !== list && !t.classList.contains("dsh-row")) return;
    if ((e.key === "Enter" || e.key === " ") && t.classList.contains("dsh-row")) {
      e.preventDefault();
      selectIndex(Number(t.dataset.index));
      return;
    }
    const from = t.classList.contains("dsh-row") ? Number(t.dataset.index) : current();
    const j = listIndex(e.key, from, count());
    if (j === null) return;
    e.preventDefault();
    selectIndex(j);
  };
  list.addEventListener("keydown", onKey);
  return () => list.removeEventListener("keydown", onKey);
}
