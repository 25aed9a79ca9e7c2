// SessionStart's and UserPromptSubmit's `sessionTitle` output and their `session_title` input
// (docs/command-hooks.md): a title a hook sets is the session's, and the next hooks read it.
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, test } from "node:test";
import { gatehouse, tempProjects } from "./helpers.js";

const SCRIPT = { runs: [{ turns: [{ text: "done" }] }] };
const title = (event: string, text: string) =>
  `echo '{"hookSpecificOutput":{"hookEventName":"${event}","sessionTitle":"${text}"}}'`;
const record = `cat > "$CLAUDE_PROJECT_DIR/prompt.json"`;

describe("sessionTitle from hooks", { concurrency: 2 }, () => {
  const fresh = tempProjects();

  test("a SessionStart sessionTitle names the session, and UserPromptSubmit reads it as session_title", async () => {
    const cwd = await fresh({
      "s.json": SCRIPT,
      "gatehouse.json": { model: "scripted:s.json" },
      ".claude/settings.json": {
        hooks: {
          SessionStart: [{ hooks: [{ type: "command", command: title("SessionStart", "auth-refactor") }] }],
          UserPromptSubmit: [{ hooks: [{ type: "command", command: record }] }],
        },
      },
    });
    const r = await gatehouse(["run", "-p", "go", "--session", "s-title"], { cwd });
    assert.equal(r.code, 0, r.stderr);
    const payload = JSON.parse(await readFile(join(cwd, "prompt.json"), "utf8")) as { session_title?: string };
    assert.equal(payload.session_title, "auth-refactor");
    const listed = await gatehouse(["sessions", "list", "--json"], { cwd });
    const sessions = JSON.parse(listed.stdout) as { id: string; title: string | null }[];
    assert.equal(sessions.find((s) => s.id === "s-title")?.title, "auth-refactor");
  });

  test("without a title no session_title is sent; a UserPromptSubmit sessionTitle names the session", async () => {
    const cwd = await fresh({
      "s.json": SCRIPT,
      "gatehouse.json": { model: "scripted:s.json" },
      ".claude/settings.json": {
        hooks: {
          UserPromptSubmit: [
            { hooks: [{ type: "command", command: record }] },
            { hooks: [{ type: "command", command: title("UserPromptSubmit", "from-prompt") }] },
          ],
        },
      },
    });
    const r = await gatehouse(["run", "-p", "go", "--session", "s-prompt"], { cwd });
    assert.equal(r.code, 0, r.stderr);
    const payload = JSON.parse(await readFile(join(cwd, "prompt.json"), "utf8")) as Record<string, unknown>;
    assert.equal("session_title" in payload, false);
    const listed = await gatehouse(["sessions", "list", "--json"], { cwd });
    const sessions = JSON.parse(listed.stdout) as { id: string; title: string | null }[];
    assert.equal(sessions.find((s) => s.id === "s-prompt")?.title, "from-prompt");
  });
});
