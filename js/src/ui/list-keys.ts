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

export function listKeys(list: HTMLElement, rows: () => readonly number[], selected: () => number, select: (seq: number) => void): () => void {
  const focusRow = (seq: number) => list.querySelector<HTMLElement>(`.dsh-row[data-seq="${seq}"]`)?.focus({ preventScroll: true });
  const onKey = (e: KeyboardEvent) => {
    const t = e.target as HTMLElement;
    if (t !== list && !t.classList.contains("dsh-row")) return;
    const seqs = rows();
    if ((e.key === "Enter" || e.key === " ") && t.classList.contains("dsh-row")) {
      e.preventDefault();
      select(Number(t.dataset.seq));
      focusRow(Number(t.dataset.seq));
      return;
    }
    const from = t.classList.contains("dsh-row") ? seqs.indexOf(Number(t.dataset.seq)) : seqs.indexOf(selected());
    const j = listIndex(e.key, from, seqs.length);
    if (j === null) return;
    e.preventDefault();
    select(seqs[j]);
    focusRow(seqs[j]);
  };
  list.addEventListener("keydown", onKey);
  return () => list.removeEventListener("keydown", onKey);
}
