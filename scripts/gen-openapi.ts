// Writes docs/openapi.json: the document `gatehouse serve` serves at /openapi.json, generated from
// the routes' zod schemas. `--check` exits 1 when the file is stale (test/server/native.test.ts
// compares it with the served one too).
import { readFileSync, writeFileSync } from "node:fs";
import { createGatehouse } from "../src/assembly/gatehouse.js";
import { openService } from "../src/server/index.js";

export const OPENAPI_FILE = new URL("../docs/openapi.json", import.meta.url);

const service = await openService({ store: { kind: "memory" } });
const gatehouse = createGatehouse({ model: "scripted:echo", store: { kind: "memory" }, approver: service.approver });
const running = await service.listen(gatehouse, { host: "127.0.0.1", port: 0 });
const text = `${JSON.stringify(running.app.swagger(), null, 2)}\n`;
await running.close(0);
await gatehouse.close();

if (process.argv.includes("--check")) {
  if (readFileSync(OPENAPI_FILE, "utf8") !== text) {
    process.stderr.write("docs/openapi.json is stale; regenerate it with: npm run openapi\n");
    process.exitCode = 1;
  }
} else {
  writeFileSync(OPENAPI_FILE, text);
  process.stdout.write("wrote docs/openapi.json\n");
}
