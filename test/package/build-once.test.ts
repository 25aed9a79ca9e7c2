// An install builds once: `prepare` (what `npm install` and npx's link of a clone run) skips the
// build when dist/ was built from the sources as they are, and says so; an edit makes it stale.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { distIsCurrent, writeStamp } from "../../scripts/build-stamp.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const PREPARE = join(ROOT, "scripts", "prepare.ts");
const dirs: string[] = [];
after(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

/** A package folder with sources and a dist/ built from them. */
async function builtPackage(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), "gatehouse-build-once-"));
  dirs.push(root);
  await mkdir(join(root, "src"));
  await mkdir(join(root, "dist"));
  await writeFile(join(root, "src", "index.ts"), "export const a = 1;\n");
  await writeFile(join(root, "package.json"), "{}\n");
  writeStamp(root);
  return root;
}

test("npm install's prepare script is the one that skips an up-to-date build", () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> };
  assert.equal(pkg.scripts.prepare, "tsx scripts/prepare.ts");
});

test("prepare on a dist/ built from the current sources builds nothing and says so", async () => {
  const root = await builtPackage();
  // No scripts/build.ts in this folder: a build attempt would fail the command.
  const r = await promisify(execFile)(process.execPath, ["--import", import.meta.resolve("tsx"), PREPARE, root], {
    cwd: root,
  });
  assert.match(r.stderr, /dist\/ is up to date with the sources; not rebuilding/);
  assert.equal(existsSync(join(root, "dist", "index.js")), false);
});

test("an edited source, or a new one, makes dist/ stale", async () => {
  const root = await builtPackage();
  assert.equal(distIsCurrent(root), true);
  await writeFile(join(root, "src", "index.ts"), "export const a = 2;\n");
  assert.equal(distIsCurrent(root), false);
  writeStamp(root);
  await writeFile(join(root, "src", "extra.ts"), "export {};\n");
  assert.equal(distIsCurrent(root), false);
});
