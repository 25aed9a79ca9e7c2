// Writes docs/hooks.md from the hook catalog, and the OpenClaw mapping tables of docs/plugins.md
// from the adapter's data, and the Claude Code compatibility tables of docs/command-hooks.md (`npm run docs`). test/hooks/docs.test.ts and
// test/plugins/openclaw-docs.test.ts fail when the checked-in files are out of date.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { withCompatTables } from "../src/command-hooks/compat.js";
import { renderHooksDoc } from "./hooks-doc.js";
import { AGENTS, HOST_PAGES, renderHostPage } from "./hosts-doc.js";
import { withOpenClawTables } from "./openclaw-doc.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const target = join(root, "docs", "hooks.md");
mkdirSync(dirname(target), { recursive: true });
writeFileSync(target, renderHooksDoc());
console.log(`wrote ${target}`);

const plugins = join(root, "docs", "plugins.md");
writeFileSync(plugins, withOpenClawTables(readFileSync(plugins, "utf8")));
console.log(`wrote the OpenClaw tables of ${plugins}`);

const commandHooks = join(root, "docs", "command-hooks.md");
writeFileSync(commandHooks, withCompatTables(readFileSync(commandHooks, "utf8")));
console.log(`wrote the Claude Code compatibility tables of ${commandHooks}`);

for (const agent of AGENTS) {
  const page = join(root, "docs", "hosts", HOST_PAGES[agent]);
  mkdirSync(dirname(page), { recursive: true });
  writeFileSync(page, renderHostPage(agent));
  console.log(`wrote ${page}`);
}
