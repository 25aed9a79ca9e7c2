// SessionStart's and UserPromptSubmit's `sessionTitle` output and their `session_title` input
// (docs/command-hooks.md): a title a hook sets is the session's, and the next hooks read it.
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, test } from "node:test";
import { gatehouse, tempProjects } from "./helpers.js";

const SCRIPT = { runs: [{ turns: [{ text: "done" }] }] };
const titleHook = (event: string, text: string) =>
  `echo '{"hookSpecificOutput":{"hookEventName":"${event}","sessionTitle":"${text}"}}'`;
const record = `cat > "$CLAUDE_PROJECT_DIR/prompt.json"`;
/** The hooks, run once on session `id`; what UserPromptSubmit read, and the session's title after. */
async function runWith(cwd: string, id: string) {
  const r = await gatehouse(["run", "-p", "go", "--session", id], { cwd });
  assert.equal(r.code, 0, r.stderr);
  const payload = JSON.parse(await readFile(join(cwd, "prompt.json"), "utf8")) as Record<string, unknown>;
  const listed = await gatehouse(["sessions", "list", "--json"], { cwd });
  const sessions = JSON.parse(listed.stdout) as { id: string; title: string | null }[];
  return { payload, title: sessions.find((s) => s.id === id)?.title };
}

describe("sessionTitle from hooks", { concurrency: 2 }, () => {
  const fresh = tempProjects();

  test("a SessionStart sessionTitle names the session, and UserPromptSubmit reads it as session_title", async () => {
    const cwd = await fresh({
      "s.json": SCRIPT,
      "gatehouse.json": { model: "scripted:s.json" },
      ".claude/settings.json": {
        hooks: {
          SessionStart: [{ hooks: [{ type: "command", command: titleHook("SessionStart", "auth-refactor") }] }],
          UserPromptSubmit: [{ hooks: [{ type: "command", command: record }] }],
        },
      },
    });
    const { payload, title } = await runWith(cwd, "s-title");
    assert.equal(payload.session_title, "auth-refactor");
    assert.equal(title, "auth-refactor");
  });

  test("without a title no session_title is sent; a UserPromptSubmit sessionTitle names the session", async () => {
    const cwd = await fresh({
      "s.json": SCRIPT,
      "gatehouse.json": { model: "scripted:s.json" },
      ".claude/settings.json": {
        hooks: {
          UserPromptSubmit: [
            { hooks: [{ type: "command", command: record }] },
            { hooks: [{ type: "command", command: titleHook("UserPromptSubmit", "from-prompt") }] },
          ],
        },
      },
    });
    const { payload, title } = await runWith(cwd, "s-prompt");
    assert.equal("session_title" in payload, false);
    assert.equal(title, "from-prompt");
  });
});
