import assert from "node:assert/strict";
import { mkdir, utimes, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, type TestContext, test } from "node:test";
import { createGlobTool, splitPattern } from "../../src/tools/builtin/glob.js";
import { tempDir, toolCtx, toolError } from "./helpers.js";

const globTool = createGlobTool();

/** Creates files with explicit, increasing mtimes so "newest first" is deterministic. */
async function tree(t: TestContext, files: readonly string[]): Promise<string> {
  const dir = await tempDir(t);
  let second = 1_700_000_000;
  for (const f of files) {
    const file = path.join(dir, f);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, f);
    second += 10;
    await utimes(file, second, second);
  }
  return dir;
}

describe("Glob", () => {
  test("returns absolute paths of matching files, newest first", async (t) => {
    const dir = await tree(t, ["src/old.ts", "src/mid.ts", "README.md", "src/deep/new.ts"]);
    const out = await globTool.execute({ pattern: "**/*.ts" }, toolCtx(dir));
    assert.deepEqual(
      out.filenames,
      ["src/deep/new.ts", "src/mid.ts", "src/old.ts"].map((f) => path.join(dir, f)),
    );
    assert.equal(out.numFiles, 3);
    assert.equal(out.truncated, false);
    assert.equal(typeof out.durationMs, "number");
    assert.equal(globTool.toModelOutput?.(out), out.filenames.join("\n"));
  });

  test("path narrows the search and may be relative to the project directory", async (t) => {
    const dir = await tree(t, ["a/x.js", "b/y.js"]);
    const out = await globTool.execute({ pattern: "*.js", path: "b" }, toolCtx(dir));
    assert.deepEqual(out.filenames, [path.join(dir, "b/y.js")]);
    assert.deepEqual(globTool.normalizeInput?.({ pattern: "*", path: "b" }, toolCtx(dir)), {
      pattern: "*",
      path: path.join(dir, "b"),
    });
  });

  test("hidden files are found; node_modules and .git are skipped unless the pattern names them", async (t) => {
    const dir = await tree(t, [".env.example", "node_modules/pkg/index.js", ".git/config", "src/index.js"]);
    const all = await globTool.execute({ pattern: "**/*" }, toolCtx(dir));
    assert.deepEqual([...all.filenames].sort(), [path.join(dir, ".env.example"), path.join(dir, "src/index.js")]);
    const named = await globTool.execute({ pattern: "node_modules/**/*.js" }, toolCtx(dir));
    assert.deepEqual(named.filenames, [path.join(dir, "node_modules/pkg/index.js")]);
  });

  test("results are capped and flagged as truncated, keeping the newest", async (t) => {
    const dir = await tree(t, ["1.txt", "2.txt", "3.txt"]);
    const out = await createGlobTool({ maxResults: 2 }).execute({ pattern: "*.txt" }, toolCtx(dir));
    assert.deepEqual(out.filenames, [path.join(dir, "3.txt"), path.join(dir, "2.txt")]);
    assert.equal(out.truncated, true);
    assert.match(createGlobTool().toModelOutput?.(out) ?? "", /truncated/);
  });

  test("an absolute pattern searches from its static prefix", async (t) => {
    const dir = await tree(t, ["lib/a.ts", "other/b.ts"]);
    const out = await globTool.execute({ pattern: `${dir}/lib/**/*.ts` }, toolCtx("/"));
    assert.deepEqual(out.filenames, [path.join(dir, "lib/a.ts")]);
  });

  test("no match says 'No files found' to the model", async (t) => {
    const dir = await tree(t, ["a.txt"]);
    const out = await globTool.execute({ pattern: "*.rs" }, toolCtx(dir));
    assert.equal(out.numFiles, 0);
    assert.equal(globTool.toModelOutput?.(out), "No files found");
  });

  test("a missing path or a file as path is an error", async (t) => {
    const dir = await tree(t, ["a.txt"]);
    await toolError(globTool.execute({ pattern: "*", path: "nope" }, toolCtx(dir)), /does not exist/);
    await toolError(globTool.execute({ pattern: "*", path: "a.txt" }, toolCtx(dir)), /is not a directory/);
  });

  test("splitPattern starts absolute patterns at the first dynamic segment", () => {
    assert.deepEqual(splitPattern("/a/b/**/*.ts", "/cwd"), { base: "/a/b", pattern: "**/*.ts" });
    assert.deepEqual(splitPattern("src/*.ts", "/cwd"), { base: "/cwd", pattern: "src/*.ts" });
    assert.deepEqual(splitPattern("/a/file.ts", "/cwd"), { base: "/a", pattern: "file.ts" });
  });
});
