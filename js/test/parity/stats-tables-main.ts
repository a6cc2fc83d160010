// node <bundle of this file> INPUT.json → the `show --stats` text the inspector's Stats view
// draws (js/src/model/stats-tables.ts over js/src/model/trajectory.ts) of
// `{"events": [...], "pricing": {...}, "override": n | null}`, and its HTML tables' cells.
import { readFileSync } from "node:fs";
import { Pricing } from "../../src/model/pricing";
import { formatStats, statsTables } from "../../src/model/stats-tables";
import { TrajectoryFold } from "../../src/model/trajectory";

const path = process.argv[2];
if (!path) {
  console.error("usage: stats-tables-main INPUT.json");
  process.exit(2);
}
const input = JSON.parse(readFileSync(path, "utf8"));
const stats = new TrajectoryFold(new Pricing(input.pricing), input.override ?? null).update(input.events).stats();
process.stdout.write(JSON.stringify({ text: formatStats(stats), tables: statsTables(stats) }) + "\n");
