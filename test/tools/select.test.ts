import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { selectTools, toolNameMatcher, unmatchedToolPatterns } from "../../src/tools/select.js";

const tools = [
  "Read",
  "Write",
  "Edit",
  "Bash",
  "mcp__github__create_issue",
  "mcp__github__list",
  "mcp__my_db__query",
].map((name) => ({ name }));
const names = (list: readonly { name: string }[]) => list.map((t) => t.name);

describe("selectTools", () => {
  test("without allow or deny every tool is kept, in order", () => {
    assert.deepEqual(names(selectTools(tools, {})), names(tools));
  });

  test("allow keeps only the listed tools", () => {
    assert.deepEqual(names(selectTools(tools, { allow: ["Read", "Bash"] })), ["Read", "Bash"]);
  });

  test("an empty allow list allows nothing", () => {
    assert.deepEqual(selectTools(tools, { allow: [] }), []);
  });

  test("deny removes tools, and wins over allow", () => {
    assert.deepEqual(
      names(selectTools(tools, { deny: ["Bash"] })),
      names(tools).filter((n) => n !== "Bash"),
    );
    assert.deepEqual(names(selectTools(tools, { allow: ["Read", "Bash"], deny: ["Bash"] })), ["Read"]);
  });

  test("glob patterns select MCP tools by server", () => {
    assert.deepEqual(names(selectTools(tools, { allow: ["mcp__github__*"] })), [
      "mcp__github__create_issue",
      "mcp__github__list",
    ]);
    assert.deepEqual(names(selectTools(tools, { deny: ["mcp__*"] })), ["Read", "Write", "Edit", "Bash"]);
    assert.deepEqual(names(selectTools(tools, { allow: ["{Edit,Write}"] })), ["Write", "Edit"]);
  });

  test("a bare mcp__<server> means all of that server's tools, as in Claude Code permissions", () => {
    assert.deepEqual(names(selectTools(tools, { deny: ["mcp__github"] })), [
      "Read",
      "Write",
      "Edit",
      "Bash",
      "mcp__my_db__query",
    ]);
    assert.deepEqual(names(selectTools(tools, { allow: ["mcp__my_db"] })), ["mcp__my_db__query"]);
  });

  test("names are case-sensitive and exact", () => {
    assert.deepEqual(selectTools(tools, { allow: ["read", "Rea"] }), []);
    assert.equal(toolNameMatcher(["mcp__github__list"])("mcp__github__list_all"), false);
  });

  test("unmatchedToolPatterns reports entries that match no tool (a misspelt deny denies nothing)", () => {
    assert.deepEqual(unmatchedToolPatterns(tools, { allow: ["Read", "mcp__gitlab__*"], deny: ["bash"] }), [
      "mcp__gitlab__*",
      "bash",
    ]);
  });
});
