// Real Claude Code hooks published on npm that guard tool calls or give feedback, run unchanged
// through `gatehouse run`: each package is installed on first use into a cache (see ON_DEMAND in
// scripts/on-demand.ts), configured in the temp project's .claude/settings.json as
// its docs say, the command pointing at the installed bin. The model is scripted; `{{lastToolResult}}` echoes what the model read back
// from the tool call, so the reply proves what a hook's answer made of it.
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { before, describe, test } from "node:test";
import { gatehouse, tempProjects } from "./helpers.js";
import { onDemandBin, oneCall, settings } from "./real-hooks-helpers.js";

describe("cc-safety-net@2.4.5 (PreToolUse guard) runs unchanged", { concurrency: 2 }, () => {
  const fresh = tempProjects();
  // Its Claude Code integration runs `npx -y cc-safety-net hook --claude-code`; the same bin, installed.
  let hook = "";
  before(async () => {
    hook = `"${await onDemandBin("cc-safety-net")}cc-safety-net" hook --claude-code`;
  });
  const project = (script: object, files: Record<string, unknown> = {}) =>
    fresh({
      "s.json": script,
      "gatehouse.json": { model: "scripted:s.json" },
      ".claude/settings.json": settings("PreToolUse", "Bash|Read", hook, ["Bash"]),
      ...files,
    });

  test("find -delete is denied before it runs; the model reads the guard's rule and reason", async () => {
    const cwd = await project(oneCall("Bash", { command: "find . -delete && touch ran" }), { "keep.txt": "kept" });
    const r = await gatehouse(["run", "-p", "clean up"], { cwd, env: { HOME: await fresh() } });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^model read: .*BLOCKED by CC Safety Net.*Rule: find\.delete/s);
    assert.match(r.stdout, /Use -print first to preview/);
    assert.equal(existsSync(join(cwd, "ran")), false);
    assert.equal(readFileSync(join(cwd, "keep.txt"), "utf8"), "kept");
  });

  test("Read of a .env file is denied and its contents never reach the model", async () => {
    const secret = "sk-live-canary-0123456789abcdef";
    const cwd = await project(oneCall("Read", { file_path: ".env" }), { ".env": `API_KEY=${secret}\n` });
    const r = await gatehouse(["run", "-p", "show the config"], { cwd, env: { HOME: await fresh() } });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^model read: .*BLOCKED by CC Safety Net.*Rule: secret\.basename\.env/s);
    assert.equal(r.stdout.includes(secret), false);
  });

  test("a harmless command passes the guard and runs", async () => {
    const cwd = await project(oneCall("Bash", { command: "touch ran && echo made" }));
    const r = await gatehouse(["run", "-p", "make it"], { cwd, env: { HOME: await fresh() } });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^model read: .*made/s);
    assert.equal(existsSync(join(cwd, "ran")), true);
  });
});

describe("@code-yeongyu/comment-checker@0.8.0 (PostToolUse feedback) runs unchanged", { concurrency: 2 }, () => {
  const fresh = tempProjects();
  let bin = "";
  before(async () => {
    bin = await onDemandBin("@code-yeongyu/comment-checker");
  });
  // Its README: PostToolUse, matcher "Write|Edit|MultiEdit", command "comment-checker".
  const project = (content: string) =>
    fresh({
      "s.json": oneCall("Write", { file_path: "add.ts", content }),
      "gatehouse.json": { model: "scripted:s.json" },
      ".claude/settings.json": settings("PostToolUse", "Write|Edit|MultiEdit", `"${bin}comment-checker"`, ["Write"]),
    });

  test("a memo comment the model wrote: the file is written and the checker's feedback reaches the model", async () => {
    const cwd = await project("// add one to x\nexport const add = (x: number) => x + 1;\n");
    const r = await gatehouse(["run", "-p", "write add"], { cwd });
    assert.equal(r.code, 0, r.stderr);
    // Its exit 2 blocks: Gatehouse withholds the Write's output and the model reads the checker's
    // stderr in the notice instead (Claude Code keeps the output and adds the stderr next to it).
    assert.match(r.stdout, /^model read: \[The output of this Write call was withheld by a policy \(command-hooks\): /);
    assert.match(r.stdout, /COMMENT DETECTED.*Line 1: \/\/ add one to x/s);
    assert.match(readFileSync(join(cwd, "add.ts"), "utf8"), /^\/\/ add one to x/, "PostToolUse runs after the write");
  });

  test("code without comments: no feedback, the model reads the tool's own result", async () => {
    const cwd = await project("export const add = (x: number) => x + 1;\n");
    const r = await gatehouse(["run", "-p", "write add"], { cwd });
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stdout, /COMMENT DETECTED|withheld/);
    assert.match(r.stdout, /^model read: \S/);
  });
});
