import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdir, utimes, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, type TestContext, test } from "node:test";
import { createGrepTool } from "../../src/tools/builtin/grep.js";
import { tempDir, toolCtx, toolError } from "./helpers.js";

const grep = createGrepTool();

async function tree(t: TestContext, files: Readonly<Record<string, string | Buffer>>): Promise<string> {
  const dir = await tempDir(t);
  let second = 1_700_000_000;
  for (const [name, content] of Object.entries(files)) {
    const file = path.join(dir, name);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, content);
    second += 10;
    await utimes(file, second, second);
  }
  return dir;
}

const CODE = {
  "src/a.ts": "import x from 'y';\nconst Foo = 1;\nexport default Foo;\n",
  "src/b.py": "def foo():\n    return 1\n",
  "notes.md": "nothing here\n",
};

describe("Grep", () => {
  test("files_with_matches is the default and lists absolute paths, newest first", async (t) => {
    const dir = await tree(t, CODE);
    const out = await grep.execute({ pattern: "foo", "-i": true }, toolCtx(dir));
    assert.equal(out.mode, "files_with_matches");
    assert.deepEqual(out.filenames, [path.join(dir, "src/b.py"), path.join(dir, "src/a.ts")]);
    assert.equal(out.numFiles, 2);
    assert.equal(grep.toModelOutput?.(out), `Found 2 files\n${out.filenames.join("\n")}`);
  });

  test("matching is case-sensitive unless -i is set", async (t) => {
    const dir = await tree(t, CODE);
    const out = await grep.execute({ pattern: "Foo" }, toolCtx(dir));
    assert.deepEqual(out.filenames, [path.join(dir, "src/a.ts")]);
  });

  test("content mode prints path:line:text with paths relative to the project directory", async (t) => {
    const dir = await tree(t, CODE);
    const out = await grep.execute({ pattern: "Foo", output_mode: "content" }, toolCtx(dir));
    assert.equal(out.content, "src/a.ts:2:const Foo = 1;\nsrc/a.ts:3:export default Foo;");
    assert.equal(out.numLines, 2);
    assert.equal(out.numFiles, 1);
  });

  test("-n false drops line numbers", async (t) => {
    const dir = await tree(t, CODE);
    const out = await grep.execute({ pattern: "return", output_mode: "content", "-n": false }, toolCtx(dir));
    assert.equal(out.content, "src/b.py:    return 1");
  });

  test("context lines use '-' and non-adjacent groups are separated by '--'", async (t) => {
    const lines = ["m1", "a", "b", "c", "d", "m2", "e"].join("\n");
    const dir = await tree(t, { "f.txt": lines });
    const out = await grep.execute({ pattern: "^m", output_mode: "content", "-A": 1, path: "f.txt" }, toolCtx(dir));
    assert.equal(out.content, "1:m1\n2-a\n--\n6:m2\n7-e");
    const around = await grep.execute({ pattern: "m2", output_mode: "content", "-C": 1, path: "f.txt" }, toolCtx(dir));
    assert.equal(around.content, "5-d\n6:m2\n7-e");
    const before = await grep.execute({ pattern: "m2", output_mode: "content", "-B": 2, path: "f.txt" }, toolCtx(dir));
    assert.equal(before.content, "4-c\n5-d\n6:m2");
  });

  test("searching a single file prints no file name", async (t) => {
    const dir = await tree(t, CODE);
    const out = await grep.execute({ pattern: "def", output_mode: "content", path: "src/b.py" }, toolCtx(dir));
    assert.equal(out.content, "1:def foo():");
  });

  test("count mode reports matching lines per file and in total", async (t) => {
    const dir = await tree(t, CODE);
    const out = await grep.execute({ pattern: "o", output_mode: "count" }, toolCtx(dir));
    assert.equal(out.content, "notes.md:1\nsrc/a.ts:3\nsrc/b.py:1");
    assert.equal(out.numMatches, 5);
    assert.equal(out.numFiles, 3);
  });

  test("glob filters by file name at any depth; !glob excludes", async (t) => {
    const dir = await tree(t, CODE);
    const ts = await grep.execute({ pattern: ".", glob: "*.ts" }, toolCtx(dir));
    assert.deepEqual(ts.filenames, [path.join(dir, "src/a.ts")]);
    const notMd = await grep.execute({ pattern: "o", glob: "!*.md" }, toolCtx(dir));
    assert.deepEqual([...notMd.filenames].sort(), [path.join(dir, "src/a.ts"), path.join(dir, "src/b.py")]);
    const braces = await grep.execute({ pattern: ".", glob: "*.{py,md}" }, toolCtx(dir));
    assert.equal(braces.numFiles, 2);
  });

  test("type filters by ripgrep type name; an unknown type is an error", async (t) => {
    const dir = await tree(t, CODE);
    const py = await grep.execute({ pattern: ".", type: "py" }, toolCtx(dir));
    assert.deepEqual(py.filenames, [path.join(dir, "src/b.py")]);
    await toolError(grep.execute({ pattern: ".", type: "cobol" }, toolCtx(dir)), /Unknown file type "cobol"/);
  });

  test("binary files, node_modules and .git are skipped", async (t) => {
    const dir = await tree(t, {
      "img.bin": Buffer.from("needle\0\x01"),
      "node_modules/x/index.js": "needle",
      ".git/HEAD": "needle",
      "src/ok.txt": "needle",
    });
    const out = await grep.execute({ pattern: "needle" }, toolCtx(dir));
    assert.deepEqual(out.filenames, [path.join(dir, "src/ok.txt")]);
  });

  test("a FIFO in the tree is skipped instead of blocking the search", async (t) => {
    const dir = await tree(t, { "a.txt": "needle" });
    execFileSync("mkfifo", [path.join(dir, "pipe")]);
    const out = await grep.execute({ pattern: "needle" }, toolCtx(dir));
    assert.deepEqual(out.filenames, [path.join(dir, "a.txt")]);
  });

  test("head_limit and offset page through results and report the applied limit", async (t) => {
    const dir = await tree(t, { "f.txt": "x1\nx2\nx3\nx4\nx5\n" });
    const out = await grep.execute({ pattern: "x", output_mode: "content", head_limit: 2, offset: 1 }, toolCtx(dir));
    assert.equal(out.content, "f.txt:2:x2\nf.txt:3:x3");
    assert.equal(out.appliedLimit, 2);
    assert.equal(out.appliedOffset, 1);
    assert.match(grep.toModelOutput?.(out) ?? "", /limited to 2/);
    const all = await grep.execute({ pattern: "x", output_mode: "content", head_limit: 0 }, toolCtx(dir));
    assert.equal(all.numLines, 5);
    assert.equal(all.appliedLimit, undefined);
  });

  test("the default head_limit caps the output", async (t) => {
    const dir = await tree(t, { "f.txt": "hit\n".repeat(300) });
    const out = await grep.execute({ pattern: "hit", output_mode: "content" }, toolCtx(dir));
    assert.equal(out.numLines, 250);
    assert.equal(out.appliedLimit, 250);
  });

  test("multiline lets a pattern span lines", async (t) => {
    const dir = await tree(t, { "f.ts": "function a(\n  x,\n) {}\nconst b = 1;\n" });
    const single = await grep.execute({ pattern: "a\\(.*\\)", output_mode: "content" }, toolCtx(dir));
    assert.equal(single.content, "");
    const multi = await grep.execute({ pattern: "a\\(.*?\\)", output_mode: "content", multiline: true }, toolCtx(dir));
    assert.equal(multi.content, "f.ts:1:function a(\nf.ts:2:  x,\nf.ts:3:) {}");
  });

  test("very long lines are replaced by a placeholder", async (t) => {
    const dir = await tree(t, { "min.js": `${"q".repeat(600)}needle` });
    const out = await grep.execute({ pattern: "needle", output_mode: "content" }, toolCtx(dir));
    assert.equal(out.content, "min.js:1:[Omitted long matching line]");
  });

  test("unicode property escapes work and an invalid regex is an error", async (t) => {
    const dir = await tree(t, { "u.txt": "straße\nplain\n" });
    const out = await grep.execute({ pattern: "\\p{L}ß", output_mode: "content" }, toolCtx(dir));
    assert.equal(out.content, "u.txt:1:straße");
    await toolError(grep.execute({ pattern: "(unclosed" }, toolCtx(dir)), /Invalid regular expression/);
  });

  test("no match reads 'No files found' / 'No matches found'", async (t) => {
    const dir = await tree(t, CODE);
    assert.equal(grep.toModelOutput?.(await grep.execute({ pattern: "zzz" }, toolCtx(dir))), "No files found");
    const content = await grep.execute({ pattern: "zzz", output_mode: "content" }, toolCtx(dir));
    assert.equal(grep.toModelOutput?.(content), "No matches found");
  });

  test("a missing path is an error; normalizeInput makes path absolute", async (t) => {
    const dir = await tree(t, CODE);
    await toolError(grep.execute({ pattern: "x", path: "missing" }, toolCtx(dir)), /does not exist/);
    assert.equal(grep.normalizeInput?.({ pattern: "x", path: "src" }, toolCtx(dir))?.path, path.join(dir, "src"));
  });
});
