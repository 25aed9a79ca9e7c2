import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { describe, test } from "node:test";
import { sandboxAvailability } from "../../src/sandbox/runtime.js";
import { gatehouse, put, tempProjects } from "../cli/helpers.js";

const availability = sandboxAvailability();
const skip = availability.available ? false : `the sandbox is unavailable here: ${availability.reason}`;

// `git diff --output=FILE` writes FILE, and a fresh `gatehouse init` project allows `git diff`:
// the model asks to write one level above the project, which only the sandbox stops.
const escapeScript = (target: string) => ({
  runs: [
    {
      turns: [
        {
          toolCalls: [
            { name: "Bash", input: { command: `git diff --no-index --output=${target} /dev/null gatehouse.json` } },
          ],
        },
        { text: "tool said: {{lastToolResult}}" },
      ],
    },
  ],
});

describe("gatehouse run in a fresh init project", { skip }, () => {
  const fresh = tempProjects();

  async function initProject(): Promise<{ cwd: string; env: Record<string, string>; outside: string }> {
    const root = await fresh();
    const cwd = join(root, "project");
    const env = { HOME: join(root, "home") };
    await mkdir(cwd);
    await mkdir(env.HOME);
    assert.equal((await gatehouse(["init"], { cwd, env })).code, 0);
    await put(cwd, "escape.json", escapeScript("../escaped.txt"));
    return { cwd, env, outside: join(root, "escaped.txt") };
  }

  test("runs Bash sandboxed with no extra step: a write outside the project fails, and hooks check says the sandbox is on", async () => {
    const { cwd, env, outside } = await initProject();
    const r = await gatehouse(["run", "-p", "diff", "--model", "scripted:escape.json"], { cwd, env });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /Read-only file system/);
    assert.ok(!existsSync(outside), "the command wrote outside the project");
    const check = await gatehouse(["hooks", "check"], { cwd, env });
    assert.match(check.stdout, /; sandbox on \(the default\)$/m);
  });

  test("control: with sandbox.enabled false the same command writes outside the project", async () => {
    const { cwd, env, outside } = await initProject();
    await put(cwd, ".claude/settings.local.json", { sandbox: { enabled: false } });
    const r = await gatehouse(["run", "-p", "diff", "--model", "scripted:escape.json"], { cwd, env });
    assert.equal(r.code, 0, r.stderr);
    assert.ok(existsSync(outside), r.stdout);
    const check = await gatehouse(["hooks", "check"], { cwd, env });
    assert.match(check.stdout, /; sandbox off \(sandbox\.enabled in .*settings\.local\.json\)$/m);
  });
});
