// node <bundle of this file> FIXTURE.jsonl [WINDOW] → one JSON line per step: {"line", "state"}.
import { readFileSync } from "node:fs";
import { replay, type TranscriptLine } from "./driver";

const path = process.argv[2];
if (!path) {
  console.error("usage: main FIXTURE.jsonl");
  process.exit(2);
}
const lines = readFileSync(path, "utf8").split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l) as TranscriptLine);
const window = process.argv[3] ? Number(process.argv[3]) : undefined;
process.stdout.write(replay(lines, window).map((s) => JSON.stringify(s)).join("\n") + "\n");
