import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdir, readFile, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, test } from "node:test";
import { createWriteTool } from "../../src/tools/builtin/write.js";
import { tempDir, toolCtx, toolError } from "./helpers.js";

const write = createWriteTool();

describe("Write", () => {
  test("creates a file and its missing parent directories", async (t) => {
    const dir = await tempDir(t);
    const out = await write.execute({ file_path: "a/b/c.txt", content: "hello\n" }, toolCtx(dir));
    const file = path.join(dir, "a/b/c.txt");
    assert.deepEqual(out, {
      type: "create",
      filePath: file,
      content: "hello\n",
      structuredPatch: [],
      originalFile: null,
      userModified: false,
    });
    assert.equal(await readFile(file, "utf8"), "hello\n");
    assert.equal(
      write.toModelOutput?.(out),
      `File created successfully at: ${file} (file state is current in your context — no need to Read it back)`,
    );
  });

  test("overwrites an existing file, reports the previous content and keeps the file's mode", async (t) => {
    const dir = await tempDir(t);
    const file = path.join(dir, "run.sh");
    await writeFile(file, "old", { mode: 0o755 });
    const out = await write.execute({ file_path: file, content: "new" }, toolCtx(dir));
    assert.equal(out.type, "update");
    assert.equal(out.originalFile, "old");
    assert.equal(await readFile(file, "utf8"), "new");
    assert.equal((await stat(file)).mode & 0o777, 0o755);
    assert.match(write.toModelOutput?.(out) ?? "", /has been updated/);
  });

  test("writing to a path that is a directory is an error", async (t) => {
    const dir = await tempDir(t);
    await mkdir(path.join(dir, "sub"));
    await toolError(write.execute({ file_path: "sub", content: "x" }, toolCtx(dir)), /is a directory/);
  });

  test("a FIFO is refused instead of blocking", async (t) => {
    const dir = await tempDir(t);
    execFileSync("mkfifo", [path.join(dir, "pipe")]);
    await toolError(write.execute({ file_path: "pipe", content: "x" }, toolCtx(dir)), /not a regular file/);
  });

  test("a parent that is a file is an error, not a crash", async (t) => {
    const dir = await tempDir(t);
    await writeFile(path.join(dir, "plain"), "");
    await toolError(write.execute({ file_path: "plain/child.txt", content: "x" }, toolCtx(dir)), /plain/);
  });

  test("normalizeInput makes file_path absolute and keeps the content", async (t) => {
    const dir = await tempDir(t);
    assert.deepEqual(write.normalizeInput?.({ file_path: "x.txt", content: "c" }, toolCtx(dir)), {
      file_path: path.join(dir, "x.txt"),
      content: "c",
    });
  });
});
