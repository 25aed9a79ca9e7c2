// Writes schema/gatehouse.schema.json from the zod schema of gatehouse.json.
// `--check` writes nothing and exits 1 when the checked-in file is stale (for CI).
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { CONFIG_SCHEMA_FILE, renderConfigJsonSchema } from "../src/config/schema.js";

const target = fileURLToPath(new URL(`../${CONFIG_SCHEMA_FILE}`, import.meta.url));
const text = renderConfigJsonSchema();

if (process.argv.includes("--check")) {
  let current = "";
  try {
    current = readFileSync(target, "utf8");
  } catch {}
  if (current !== text) {
    process.stderr.write(`${CONFIG_SCHEMA_FILE} is stale; regenerate it with: tsx scripts/gen-config-schema.ts\n`);
    process.exit(1);
  }
} else {
  writeFileSync(target, text);
  process.stdout.write(`wrote ${CONFIG_SCHEMA_FILE}\n`);
}
