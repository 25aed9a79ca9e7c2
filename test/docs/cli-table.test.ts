// docs/cli.md opens with a table of the commands: every command that has a section is in it.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

const CLI_MD = readFileSync(new URL("../../docs/cli.md", import.meta.url), "utf8");

test("every `## gatehouse NAME` section of docs/cli.md has its row in the command table", () => {
  const sections = [...CLI_MD.matchAll(/^## gatehouse (\w+)$/gm)].map((m) => m[1] as string);
  assert.ok(sections.length >= 10, `found the sections (${sections.length})`);
  const missing = sections.filter((name) => !CLI_MD.includes(`| [\`${name}\`](#gatehouse-${name}) |`));
  assert.deepEqual(missing, []);
});
