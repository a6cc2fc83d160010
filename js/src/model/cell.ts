// "from cell [n]": the notebook cell a user message came from (its source.cell), for labels.
import type { Message } from "../types";

export function fromCell(m: Message | undefined): string {
  if (!m || m.role !== "user") return "";
  const n = m.source?.cell?.executionCount;
  return typeof n === "number" ? `from cell [${n}]` : m.source?.cell?.cellId ? "from a cell" : "";
}
