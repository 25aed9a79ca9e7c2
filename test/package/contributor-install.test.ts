// A contributor's `npm install` stays lean: the linter and the hook packages the tests install on
// first use (heavy bundled binaries, see ON_DEMAND in scripts/on-demand.ts) are not devDependencies,
// so neither package.json nor the lockfile makes every install download them.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { ON_DEMAND } from "../../scripts/on-demand.js";

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
