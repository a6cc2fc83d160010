import { defineConfig } from "vitest/config";

// isolate: false — the test files share their workers' module graphs and jsdom instead of building
// them anew for each of the 28 files: the suite takes half the time (25 → 13 s, 24 → 9 s of CPU)
// and passes in any file order (checked with --sequence.shuffle over several seeds).
export default defineConfig({ test: { include: ["test/**/*.test.ts"], environment: "node", isolate: false } });
