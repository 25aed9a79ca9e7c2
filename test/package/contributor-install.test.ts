// A contributor's `npm install` stays lean: the linter, the hook packages and the host SDKs and
// clients the tests install on first use (see ON_DEMAND in scripts/on-demand.ts) are not
// devDependencies, so neither package.json nor the lockfile makes every install download them;
// and what tests import of them still type-checks, through tsconfig.test.json's paths.
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { parse } from "jsonc-parser";
import { installTestImports, ON_DEMAND, TEST_IMPORTS } from "../../scripts/on-demand.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const read = (file: string) => JSON.parse(readFileSync(join(ROOT, file), "utf8"));

test("a package installed on demand (the linter, heavy hook packages) is neither a dependency nor in the lockfile", () => {
  const pkg = read("package.json") as Record<string, Record<string, string> | undefined>;
  const lock = read("package-lock.json") as { packages: Record<string, unknown> };
  assert.ok(Object.keys(ON_DEMAND).length > 0);
  for (const name of Object.keys(ON_DEMAND)) {
    for (const field of ["dependencies", "devDependencies", "optionalDependencies", "allowScripts"])
      assert.equal(pkg[field]?.[name], undefined, `${name} in package.json's ${field}`);
    assert.equal(lock.packages[`node_modules/${name}`], undefined, `${name} in package-lock.json`);
  }
});

test("tsconfig.test.json types each on-demand import (and nothing else) from a file of its install", async () => {
  const config = parse(readFileSync(join(ROOT, "tsconfig.test.json"), "utf8")) as {
    compilerOptions: { paths: Record<string, string[]> };
  };
  const paths = config.compilerOptions.paths;
  assert.deepEqual(Object.keys(paths).sort(), [...TEST_IMPORTS].sort());
  const installed = await installTestImports();
  for (const name of TEST_IMPORTS) {
    const [target = "", ...more] = paths[name] ?? [];
    assert.deepEqual(more, [], name);
    const prefix = `./node_modules/.cache/gatehouse-test-hooks/imports/node_modules/${name}/`;
    assert.ok(target.startsWith(prefix), `${name}: ${target} is not under ${prefix}`);
    assert.ok(
      existsSync(join(installed, "node_modules", name, target.slice(prefix.length))),
      `${name}: ${target} exists`,
    );
    assert.ok(existsSync(join(ROOT, target)), `${name}: the imports link leads to ${target}`);
  }
});
