// The pieces under the chat's input: the multi-line composer (readline's lines and paste keys in,
// prompts out) and the input history file (newest first, torn lines skipped, cut back when long).
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { InputHistory, MultilineComposer } from "../../src/cli/chat-input.js";

describe("MultilineComposer", () => {
  test("lines inside a paste and lines ending in \\ continue the prompt; Enter outside a paste sends it", () => {
    const c = new MultilineComposer();
    c.key("paste-start");
    assert.equal(c.line("one"), undefined);
    assert.equal(c.line("two"), undefined);
    c.key("paste-end");
    assert.equal(c.continuing, true);
    assert.equal(c.line("three"), "one\ntwo\nthree");
    assert.equal(c.continuing, false);
    assert.equal(c.line("first\\"), undefined);
    assert.equal(c.line("second"), "first\nsecond");
    assert.equal(c.line("plain"), "plain");
  });

  test("a paste ending in a newline drops the empty last line; clear() forgets what was collected", () => {
    const c = new MultilineComposer();
    c.key("paste-start");
    c.line("a");
    c.line("b");
    c.key("paste-end");
    assert.equal(c.line(""), "a\nb");
    c.line("dropped\\");
    c.clear();
    assert.equal(c.line("kept"), "kept");
  });
});

describe("InputHistory", () => {
  let dir = "";
  after(() => rm(dir, { recursive: true, force: true }));

  test("newest first, repeats folded, a torn line skipped; record appends owner-only", async () => {
    dir = await mkdtemp(join(tmpdir(), "gatehouse-history-"));
    await writeFile(join(dir, InputHistory.FILE), `"one"\n"two"\n"two"\n"multi\\nline"\n{"torn`);
    const history = await InputHistory.open(dir);
    assert.deepEqual(history.entries, ["multi\nline", "two", "one"]);
    await history.record(["three", "  "]);
    assert.deepEqual((await InputHistory.open(dir)).entries, ["three", "multi\nline", "two", "one"]);
    assert.equal((await stat(join(dir, InputHistory.FILE))).mode & 0o777, 0o600);
  });

  test("past twice its size the file is cut back to the newest entries, in order", async () => {
    const big = await mkdtemp(join(tmpdir(), "gatehouse-history-"));
    try {
      const n = 2 * InputHistory.SIZE + 10;
      await writeFile(
        join(big, InputHistory.FILE),
        Array.from({ length: n }, (_, i) => `${JSON.stringify(`p${i}`)}\n`).join(""),
      );
      const history = await InputHistory.open(big);
      assert.equal(history.entries.length, InputHistory.SIZE);
      assert.equal(history.entries[0], `p${n - 1}`);
      const lines = (await readFile(join(big, InputHistory.FILE), "utf8")).trimEnd().split("\n");
      assert.equal(lines.length, InputHistory.SIZE);
      assert.equal(lines.at(-1), JSON.stringify(`p${n - 1}`));
      assert.deepEqual((await InputHistory.open(big)).entries, history.entries, "reads back the same");
    } finally {
      await rm(big, { recursive: true, force: true });
    }
  });
});
