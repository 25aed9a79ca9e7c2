import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { z } from "zod";
import { builtinTools } from "../../src/tools/builtin/index.js";

describe("builtinTools", () => {
  test("provides Claude Code's tool names; only the read-only ones run in parallel", () => {
    const tools = builtinTools();
    assert.deepEqual(
      tools.map((t) => [t.name, t.parallel === true]),
      [
        ["Read", true],
        ["Write", false],
        ["Edit", false],
        ["MultiEdit", false],
        ["NotebookEdit", false],
        ["Bash", false],
        ["Glob", true],
        ["Grep", true],
        ["TodoWrite", false],
      ],
    );
  });

  test("every input schema converts to JSON Schema with Claude Code's field names", () => {
    const schemas = Object.fromEntries(
      builtinTools().map((t) => [t.name, z.toJSONSchema(t.inputSchema) as { properties: object; required?: string[] }]),
    );
    const fields = (name: string) => Object.keys(schemas[name]?.properties ?? {});
    assert.deepEqual(fields("Read"), ["file_path", "offset", "limit"]);
    assert.deepEqual(fields("Write"), ["file_path", "content"]);
    assert.deepEqual(fields("Edit"), ["file_path", "old_string", "new_string", "replace_all"]);
    assert.deepEqual(fields("Bash"), ["command", "timeout", "description", "dangerouslyDisableSandbox"]);
    assert.deepEqual(fields("Glob"), ["pattern", "path"]);
    assert.ok(
      ["pattern", "path", "glob", "type", "output_mode", "-A", "-B", "-C", "-n", "-i", "head_limit"].every((f) =>
        fields("Grep").includes(f),
      ),
    );
    assert.deepEqual(schemas.Edit?.required, ["file_path", "old_string", "new_string"]);
  });

  test("options reach the tools they configure", () => {
    const read = builtinTools({ read: { defaultLimit: 7 } }).find((t) => t.name === "Read");
    assert.match(read?.description ?? "", /up to 7 lines/);
  });
});
