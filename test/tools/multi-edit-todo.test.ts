import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { createMultiEditTool, createNotebookEditTool, createTodoWriteTool } from "../../src/tools/builtin/index.js";
import { tempDir } from "../command-hooks/helpers.js";

const ctx = (cwd: string, sessionId = "s1") => ({ signal: new AbortController().signal, cwd, sessionId });

describe("MultiEdit and TodoWrite, with Claude Code's input shapes", () => {
  test("MultiEdit applies its edits in order, each on the result of the one before", async () => {
    const dir = tempDir();
    const file = join(dir, "a.ts");
    writeFileSync(file, "let a = 1;\nlet b = a;\n");
    const tool = createMultiEditTool();
    const out = await tool.execute(
      {
        file_path: file,
        edits: [
          { old_string: "let a", new_string: "const a" },
          { old_string: "const a = 1", new_string: "const a = 2" },
        ],
      },
      ctx(dir),
    );
    assert.equal(readFileSync(file, "utf8"), "const a = 2;\nlet b = a;\n");
    assert.equal(out.originalFile, "let a = 1;\nlet b = a;\n");
  });

  test("MultiEdit is all or nothing: one edit that does not apply leaves the file unchanged", async () => {
    const dir = tempDir();
    const file = join(dir, "a.txt");
    writeFileSync(file, "one two two");
    const tool = createMultiEditTool();
    await assert.rejects(
      tool.execute(
        {
          file_path: file,
          edits: [
            { old_string: "one", new_string: "1" },
            { old_string: "two", new_string: "2" },
          ],
        },
        ctx(dir),
      ),
      /edit 2: found 2 matches/,
    );
    assert.equal(readFileSync(file, "utf8"), "one two two");
  });

  test("TodoWrite replaces the session's list and reports the old one; other sessions keep theirs", async () => {
    const tool = createTodoWriteTool();
    const todo = (content: string, status: "pending" | "in_progress" | "completed") => ({
      content,
      status,
      activeForm: `${content}ing`,
    });
    const first = [todo("Test", "in_progress")];
    assert.deepEqual(await tool.execute({ todos: first }, ctx("/", "s1")), { oldTodos: [], newTodos: first });
    const second = [todo("Test", "completed"), todo("Ship", "pending")];
    assert.deepEqual(await tool.execute({ todos: second }, ctx("/", "s1")), { oldTodos: first, newTodos: second });
    assert.deepEqual((await tool.execute({ todos: [] }, ctx("/", "s2"))).oldTodos, []);
    assert.ok(todoSchemaRejects(tool));
  });
});

function todoSchemaRejects(tool: ReturnType<typeof createTodoWriteTool>): boolean {
  return !tool.inputSchema.safeParse({ todos: [{ content: "x", status: "done", activeForm: "x" }] }).success;
}

describe("NotebookEdit, with Claude Code's input shape", () => {
  const notebook = () => ({
    cells: [
      { id: "a1", cell_type: "code", source: "print(1)", metadata: {}, outputs: [{ text: "1" }], execution_count: 1 },
      { id: "b2", cell_type: "markdown", source: "# Title", metadata: {} },
    ],
    metadata: { language_info: { name: "python" } },
    nbformat: 4,
    nbformat_minor: 5,
  });

  test("replace clears a code cell's outputs; insert adds a cell after cell_id; delete removes one", async () => {
    const dir = tempDir();
    const file = join(dir, "n.ipynb");
    writeFileSync(file, JSON.stringify(notebook()));
    const tool = createNotebookEditTool();
    const replaced = await tool.execute({ notebook_path: file, cell_id: "a1", new_source: "print(2)" }, ctx(dir));
    assert.deepEqual([replaced.cell_type, replaced.language, replaced.edit_mode], ["code", "python", "replace"]);
    await tool.execute(
      { notebook_path: file, cell_id: "a1", new_source: "x = 3", cell_type: "code", edit_mode: "insert" },
      ctx(dir),
    );
    await tool.execute({ notebook_path: file, cell_id: "b2", new_source: "", edit_mode: "delete" }, ctx(dir));
    const after = JSON.parse(readFileSync(file, "utf8")) as { cells: { source: string; outputs?: unknown[] }[] };
    assert.deepEqual(
      after.cells.map((c) => c.source),
      ["print(2)", "x = 3"],
    );
    assert.deepEqual(after.cells[0]?.outputs, []);
    await assert.rejects(
      tool.execute({ notebook_path: file, cell_id: "zz", new_source: "" }, ctx(dir)),
      /No cell "zz"/,
    );
    await assert.rejects(
      tool.execute({ notebook_path: file, new_source: "y", edit_mode: "insert" }, ctx(dir)),
      /cell_type is required/,
    );
  });
});
