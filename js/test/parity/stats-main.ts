// node <bundle of this file> INPUT.json → the JS trajectory figures (js/src/model/trajectory.ts)
// of `{"events": [...], "pricing": {...}, "override": n | null}`, shaped as `show --stats --json`.
import { readFileSync } from "node:fs";
import { Pricing } from "../../src/model/pricing";
import { TrajectoryFold } from "../../src/model/trajectory";

const path = process.argv[2];
if (!path) {
  console.error("usage: stats-main INPUT.json");
  process.exit(2);
}
const input = JSON.parse(readFileSync(path, "utf8"));
const fold = new TrajectoryFold(new Pricing(input.pricing), input.override ?? null);
// fed in two parts, as a live follow would: the incremental fold must give the same figures
const half = Math.floor(input.events.length / 2);
fold.update(input.events.slice(0, half));
fold.update(input.events);
process.stdout.write(JSON.stringify(fold.stats()) + "\n");
