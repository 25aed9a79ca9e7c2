// Writes docs/hooks.md from the hook catalog (`npm run docs`). test/hooks/docs.test.ts fails
// when the checked-in file is out of date.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { renderHooksDoc } from "./hooks-doc.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const target = join(root, "docs", "hooks.md");
mkdirSync(dirname(target), { recursive: true });
writeFileSync(target, renderHooksDoc());
console.log(`wrote ${target}`);
