// Runs every bench/*.bench.ts in its own process, one after another (benchmarks must not
// share the two cores with each other). `npm run bench -- hooks` runs only hooks.bench.ts.
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const filter = process.argv[2];
const all = readdirSync(here)
  .filter((f) => f.endsWith(".bench.ts"))
  .sort();
// An exact name ("hooks" → hooks.bench.ts) wins over a substring match (which would add command-hooks).
const exact = all.filter((f) => f === `${filter}.bench.ts`);
const files = !filter ? all : exact.length ? exact : all.filter((f) => f.includes(filter));
let failed = 0;
for (const file of files) {
  const r = spawnSync(process.execPath, ["--expose-gc", "--import", "tsx", join(here, file)], { stdio: "inherit" });
  if (r.status !== 0) {
    failed++;
    console.error(`${file}: exited with ${r.status ?? r.signal}`);
  }
}
process.exit(failed ? 1 : 0);
