import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, test } from "node:test";
import { countOccurrences, createEditTool } from "../../src/tools/builtin/edit.js";
import { tempDir, toolCtx, toolError } from "./helpers.js";

const edit = createEditTool();

async function fileWith(t: Parameters<typeof tempDir>[0], content: string): Promise<{ dir: string; file: string }> {
  const dir = await tempDir(t);
  const file = path.join(dir, "f.ts");
  await writeFile(file, content);
  return { dir, file };
}

describe("Edit", () => {
  test("replaces the one exact occurrence of old_string", async (t) => {
    const { dir, file } = await fileWith(t, "const a = 1;\nconst b = 2;\n");
    const out = await edit.execute({ file_path: "f.ts", old_string: "b = 2", new_string: "b = 3" }, toolCtx(dir));
    assert.equal(await readFile(file, "utf8"), "const a = 1;\nconst b = 3;\n");
    assert.deepEqual(out, {
      filePath: file,
      oldString: "b = 2",
      newString: "b = 3",
      originalFile: "const a = 1;\nconst b = 2;\n",
      replaceAll: false,
      replacements: 1,
    });
    assert.match(edit.toModelOutput?.(out) ?? "", /has been updated \(1 replacement\)/);
  });

  test("old_string that is not in the file is an error naming the file", async (t) => {
    const { dir, file } = await fileWith(t, "abc");
    await toolError(
      edit.execute({ file_path: file, old_string: "xyz", new_string: "q" }, toolCtx(dir)),
      new RegExp(`old_string not found in ${file}`),
    );
    assert.equal(await readFile(file, "utf8"), "abc");
  });

  test("old_string found several times without replace_all is an error saying how many, and nothing changes", async (t) => {
    const { dir, file } = await fileWith(t, "x x x");
    await toolError(
      edit.execute({ file_path: file, old_string: "x", new_string: "y" }, toolCtx(dir)),
      /Found 3 matches of old_string.*replace_all/,
    );
    assert.equal(await readFile(file, "utf8"), "x x x");
  });

  test("replace_all replaces every occurrence", async (t) => {
    const { dir, file } = await fileWith(t, "foo(); foo(); bar();");
    const out = await edit.execute(
      { file_path: file, old_string: "foo", new_string: "baz", replace_all: true },
      toolCtx(dir),
    );
    assert.equal(await readFile(file, "utf8"), "baz(); baz(); bar();");
    assert.equal(out.replacements, 2);
  });

  test("old_string equal to new_string is an error", async (t) => {
    const { dir, file } = await fileWith(t, "same");
    await toolError(
      edit.execute({ file_path: file, old_string: "same", new_string: "same" }, toolCtx(dir)),
      /No changes to make/,
    );
  });

  test("replacement text is literal: $& and $1 are not expanded", async (t) => {
    const { dir, file } = await fileWith(t, "price: X");
    await edit.execute({ file_path: file, old_string: "X", new_string: "$& $1 $$" }, toolCtx(dir));
    assert.equal(await readFile(file, "utf8"), "price: $& $1 $$");
  });

  test("a missing file is an error", async (t) => {
    const dir = await tempDir(t);
    await toolError(
      edit.execute({ file_path: "gone.ts", old_string: "a", new_string: "b" }, toolCtx(dir)),
      /does not exist/,
    );
  });

  test("an empty old_string creates a file that does not exist yet", async (t) => {
    const dir = await tempDir(t);
    const out = await edit.execute({ file_path: "new.ts", old_string: "", new_string: "export {};\n" }, toolCtx(dir));
    assert.equal(await readFile(path.join(dir, "new.ts"), "utf8"), "export {};\n");
    assert.match(edit.toModelOutput?.(out) ?? "", /created/);
  });

  test("an empty old_string on an existing non-empty file is an error", async (t) => {
    const { dir, file } = await fileWith(t, "content");
    await toolError(edit.execute({ file_path: file, old_string: "", new_string: "x" }, toolCtx(dir)), /already exists/);
  });

  test("a binary file is refused", async (t) => {
    const { dir, file } = await fileWith(t, "a\0b");
    await toolError(edit.execute({ file_path: file, old_string: "a", new_string: "c" }, toolCtx(dir)), /binary/);
  });

  test("a FIFO is refused instead of blocking", async (t) => {
    const dir = await tempDir(t);
    execFileSync("mkfifo", [path.join(dir, "pipe")]);
    await toolError(
      edit.execute({ file_path: "pipe", old_string: "a", new_string: "b" }, toolCtx(dir)),
      /not a regular file/,
    );
  });

  test("normalizeInput makes file_path absolute", async (t) => {
    const dir = await tempDir(t);
    const input = { file_path: "./src/../f.ts", old_string: "a", new_string: "b" };
    assert.equal(edit.normalizeInput?.(input, toolCtx(dir))?.file_path, path.join(dir, "f.ts"));
  });

  test("countOccurrences counts non-overlapping matches", () => {
    assert.equal(countOccurrences("aaaa", "aa"), 2);
    assert.equal(countOccurrences("abc", "d"), 0);
  });
});
