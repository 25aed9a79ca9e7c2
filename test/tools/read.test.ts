import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, test } from "node:test";
import { createReadTool, numberLines } from "../../src/tools/builtin/read.js";
import { tempDir, toolCtx, toolError } from "./helpers.js";

const read = createReadTool();

describe("Read", () => {
  test("returns the file's lines, a final newline ending one more empty line, and numbers them for the model as Claude Code does", async (t) => {
    const dir = await tempDir(t);
    await writeFile(path.join(dir, "a.txt"), "alpha\nbeta\ngamma\n");
    const out = await read.execute({ file_path: path.join(dir, "a.txt") }, toolCtx(dir));
    assert.deepEqual(out, {
      type: "text",
      file: {
        filePath: path.join(dir, "a.txt"),
        content: "alpha\nbeta\ngamma\n",
        numLines: 4,
        startLine: 1,
        totalLines: 4,
      },
    });
    assert.equal(read.toModelOutput?.(out), "1\talpha\n2\tbeta\n3\tgamma\n4\t");
  });

  test("offset (1-based) and limit select a range and the model is told which lines it sees", async (t) => {
    const dir = await tempDir(t);
    const file = path.join(dir, "n.txt");
    await writeFile(file, Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join("\n"));
    const out = await read.execute({ file_path: file, offset: 4, limit: 3 }, toolCtx(dir));
    assert.equal(out.file.content, "line 4\nline 5\nline 6");
    assert.equal(out.file.startLine, 4);
    assert.equal(out.file.numLines, 3);
    assert.equal(out.file.totalLines, 10);
    assert.equal(read.toModelOutput?.(out), "4\tline 4\n5\tline 5\n6\tline 6\n(showing lines 4-6 of 10)");
  });

  test("offset 0 is read as the first line, as Claude Code does", async (t) => {
    const dir = await tempDir(t);
    await writeFile(path.join(dir, "a.txt"), "one\ntwo");
    const out = await read.execute({ file_path: "a.txt", offset: 0, limit: 1 }, toolCtx(dir));
    assert.equal(out.file.content, "one");
    assert.equal(out.file.startLine, 1);
  });

  test("reads at most 2000 lines by default", async (t) => {
    const dir = await tempDir(t);
    await writeFile(path.join(dir, "big.txt"), "x\n".repeat(2500));
    const out = await read.execute({ file_path: "big.txt" }, toolCtx(dir));
    assert.equal(out.file.numLines, 2000);
    assert.equal(out.file.totalLines, 2501);
  });

  test("an offset past the end yields no lines and says so", async (t) => {
    const dir = await tempDir(t);
    await writeFile(path.join(dir, "a.txt"), "one\ntwo\n");
    const out = await read.execute({ file_path: "a.txt", offset: 9 }, toolCtx(dir));
    assert.equal(out.file.numLines, 0);
    assert.match(read.toModelOutput?.(out) ?? "", /has 3 lines; offset 9 is past its end/);
  });

  test("an empty file reads as empty and the model is told it is empty", async (t) => {
    const dir = await tempDir(t);
    await writeFile(path.join(dir, "e.txt"), "");
    const out = await read.execute({ file_path: "e.txt" }, toolCtx(dir));
    assert.equal(out.file.totalLines, 0);
    assert.match(read.toModelOutput?.(out) ?? "", /exists but is empty/);
  });

  test("CRLF line endings are not left in the lines", async (t) => {
    const dir = await tempDir(t);
    await writeFile(path.join(dir, "w.txt"), "a\r\nb\r\n");
    const out = await read.execute({ file_path: "w.txt" }, toolCtx(dir));
    assert.equal(out.file.content, "a\nb\n");
  });

  test("lines longer than the cap are truncated", async (t) => {
    const dir = await tempDir(t);
    await writeFile(path.join(dir, "long.txt"), `${"y".repeat(50)}\nshort`);
    const out = await createReadTool({ maxLineLength: 10 }).execute({ file_path: "long.txt" }, toolCtx(dir));
    assert.equal(out.file.content, `${"y".repeat(10)}… [line truncated]\nshort`);
  });

  test("a binary file (NUL bytes) is refused", async (t) => {
    const dir = await tempDir(t);
    await writeFile(path.join(dir, "b.bin"), Buffer.from([0x50, 0x4e, 0x00, 0x47]));
    await toolError(read.execute({ file_path: "b.bin" }, toolCtx(dir)), /binary file/);
  });

  test("a NUL byte past the sniffed prefix still makes the file binary", async (t) => {
    const dir = await tempDir(t);
    await writeFile(path.join(dir, "late.bin"), `${"a\n".repeat(10_000)}\0tail`);
    await toolError(read.execute({ file_path: "late.bin", limit: 1_000_000 }, toolCtx(dir)), /binary file/);
  });

  test("a whole file over the size cap is refused, but a range of it can be read", async (t) => {
    const dir = await tempDir(t);
    await writeFile(path.join(dir, "huge.txt"), "z\n".repeat(1000));
    const small = createReadTool({ maxFileBytes: 100 });
    await toolError(
      small.execute({ file_path: "huge.txt" }, toolCtx(dir)),
      /exceeds the maximum allowed size.*offset and limit/,
    );
    const out = await small.execute({ file_path: "huge.txt", offset: 500, limit: 2 }, toolCtx(dir));
    assert.equal(out.file.content, "z\nz");
    assert.equal(out.file.totalLines, 1001);
  });

  test("reading a directory is an error", async (t) => {
    const dir = await tempDir(t);
    await mkdir(path.join(dir, "sub"));
    await toolError(read.execute({ file_path: "sub" }, toolCtx(dir)), /is a directory/);
  });

  test("a FIFO is refused instead of blocking on open", async (t) => {
    const dir = await tempDir(t);
    execFileSync("mkfifo", [path.join(dir, "pipe")]);
    await toolError(read.execute({ file_path: "pipe" }, toolCtx(dir)), /not a regular file/);
  });

  test("a missing file is an error naming the absolute path", async (t) => {
    const dir = await tempDir(t);
    await toolError(
      read.execute({ file_path: "nope.txt" }, toolCtx(dir)),
      new RegExp(`does not exist: ${path.join(dir, "nope.txt")}`),
    );
  });

  test("normalizeInput resolves a relative file_path against the project directory", async (t) => {
    const dir = await tempDir(t);
    const normalized = read.normalizeInput?.({ file_path: "src/x.ts", limit: 5 }, toolCtx(dir));
    assert.deepEqual(normalized, { file_path: path.join(dir, "src/x.ts"), limit: 5 });
  });

  test("numberLines writes each line after its number and a tab, as Claude Code shows a file", () => {
    assert.equal(numberLines("a\nb", 99), "99\ta\n100\tb");
  });
});
