// Hooks that match MultiEdit and TodoWrite fire, with Claude Code's input shapes.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { gatehouse, tempProjects } from "./helpers.js";

// Tools ask in default mode and nobody can answer here (docs/permissions.md): a rule lets them run.
const ALLOW_ALL = { allow: ["Bash", "Write", "Edit", "MultiEdit", "NotebookEdit", "WebFetch", "Agent"] };

const todos = [{ content: "Rename a", status: "in_progress", activeForm: "Renaming a" }];
const SCRIPT = {
  runs: [
    {
      turns: [
        { toolCalls: [{ name: "TodoWrite", input: { todos } }] },
        {
          toolCalls: [
            {
              name: "MultiEdit",
              input: {
                file_path: "a.txt",
                edits: [
                  { old_string: "a", new_string: "b" },
                  { old_string: "b", new_string: "c" },
                ],
              },
            },
          ],
        },
        { text: "done" },
      ],
    },
  ],
};

describe("Claude Code's MultiEdit and TodoWrite tools", () => {
  const fresh = tempProjects();

  test("PostToolUse hooks matching MultiEdit|TodoWrite fire with Claude Code's tool_input", async () => {
    const record = { type: "command", command: 'cat >> "$CLAUDE_PROJECT_DIR/calls.jsonl"' };
    const cwd = await fresh({
      "s.json": SCRIPT,
      "a.txt": "a",
      "gatehouse.json": {
        model: "scripted:s.json",
        permissions: ALLOW_ALL,
        hooks: { PostToolUse: [{ matcher: "MultiEdit|TodoWrite", hooks: [record] }] },
      },
    });
    const r = await gatehouse(["run", "-p", "go"], { cwd });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(readFileSync(join(cwd, "a.txt"), "utf8"), "c");
    const calls = readFileSync(join(cwd, "calls.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { tool_name: string; tool_input: Record<string, unknown> });
    assert.deepEqual(
      calls.map((c) => c.tool_name),
      ["TodoWrite", "MultiEdit"],
    );
    assert.deepEqual(calls[0]?.tool_input, { todos });
    assert.equal(calls[1]?.tool_input.file_path, join(cwd, "a.txt"), "file_path is absolute, as in Claude Code");
  });
});
