import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { describe, test } from "node:test";

/** What the modules main.ts loads at start-up to register commands may load themselves. */
// terminal.ts imports nothing: the sanitizer every printer uses; version.ts (two literals) and
// core/text.ts (one string function) import nothing either.
const LIGHT = new Set([
  "commander",
  "./exit.js",
  "./common.js",
  "./format.js",
  "./terminal.js",
  "../version.js",
  "../core/text.js",
  // node:path only: how a path is shown (relative inside the project).
  "../core/shown-path.js",
]);
const MODULES = ["sessions", "audit", "plugins", "config", "mcp", "init", "serve", "common", "format"];

/** Static imports that are loaded at run time (`import type` is erased). */
async function runtimeImports(relative: string): Promise<string[]> {
  const source = await readFile(new URL(relative, import.meta.url), "utf8");
  return [...source.matchAll(/^\s*(import|export)\s(?!type\s)[^;]*?from\s+"([^"]+)"/gm)].map((m) => m[2] ?? "");
}

describe("project commands keep start-up light", () => {
  for (const name of MODULES) {
    test(`src/cli/${name}.ts imports only commander, node builtins and light CLI modules at load time`, async () => {
      for (const specifier of await runtimeImports(`../../src/cli/${name}.ts`))
        assert.ok(LIGHT.has(specifier) || specifier.startsWith("node:"), `${name}.ts imports ${specifier} eagerly`);
    });
  }
});
