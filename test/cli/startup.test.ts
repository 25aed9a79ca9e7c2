import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { describe, test } from "node:test";
import { PACKAGE_NAME, VERSION } from "../../src/version.js";

/** What `gatehouse --version` and `--help` may load: everything else waits for a command's action. */
const ALLOWED = new Set(["commander", "../version.js", "./exit.js", "./run-command.js"]);

async function staticImports(relative: string): Promise<string[]> {
  const source = await readFile(new URL(relative, import.meta.url), "utf8");
  return [...source.matchAll(/^\s*(?:import|export)\s[^;]*?from\s+"([^"]+)"/gm)].map((m) => m[1] ?? "");
}

describe("CLI start-up stays lazy", () => {
  test("main.ts imports only commander, the version, the exit codes and run's flags at load time", async () => {
    const imports = await staticImports("../../src/cli/main.ts");
    assert.ok(imports.includes("commander"));
    for (const specifier of imports) assert.ok(ALLOWED.has(specifier), `main.ts imports ${specifier} eagerly`);
    assert.deepEqual(await staticImports("../../src/cli/exit.ts"), []);
    assert.deepEqual(await staticImports("../../src/cli/run-command.ts"), ["commander", "./exit.js"]);
  });

  test("version.ts imports nothing and holds package.json's version and name", async () => {
    assert.deepEqual(await staticImports("../../src/version.ts"), []);
    const pkg = JSON.parse(await readFile(new URL("../../package.json", import.meta.url), "utf8")) as {
      version: string;
      name: string;
      bin: Record<string, string>;
    };
    assert.equal(VERSION, pkg.version, "bump src/version.ts with package.json");
    assert.equal(PACKAGE_NAME, pkg.name, "src/version.ts names the package as package.json does");
    assert.deepEqual(Object.keys(pkg.bin), ["gatehouse"], "the command stays gatehouse");
  });
});
