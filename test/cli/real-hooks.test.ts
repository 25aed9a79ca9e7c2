// Real Claude Code hooks published on npm, run unchanged through `gatehouse run`: each package
// is a devDependency, configured in the temp project's .claude/settings(.local).json as its
// README says, the command pointing at the installed files (no network at test time). The model
// is scripted; `{{lastToolResult}}` echoes what the model read back from the tool call, so the
// reply proves what a hook's answer made of it.
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { gatehouse, tempProjects } from "./helpers.js";
import { gatehouseOnTerminal } from "./project-helpers.js";

const MODULES = fileURLToPath(new URL("../../node_modules/", import.meta.url));
const BIN = join(MODULES, ".bin/");

/** One tool call, then a reply that repeats what the model read back from it. */
const oneCall = (name: string, input: Record<string, unknown>) => ({
  runs: [{ turns: [{ toolCalls: [{ name, input }] }, { text: "model read: {{lastToolResult}}" }] }],
});

/** A Claude Code settings file with one tool-event group. */
const settings = (event: string, matcher: string, command: string) => ({
  hooks: { [event]: [{ matcher, hooks: [{ type: "command", command }] }] },
});

describe("cc-safety-net@2.4.5 (PreToolUse guard) runs unchanged", { concurrency: 2 }, () => {
  const fresh = tempProjects();
  // Its Claude Code integration runs `npx -y cc-safety-net hook --claude-code`; the same bin, installed.
  const hook = `"${BIN}cc-safety-net" hook --claude-code`;
  const project = (script: object, files: Record<string, unknown> = {}) =>
    fresh({
      "s.json": script,
      "gatehouse.json": { model: "scripted:s.json" },
      ".claude/settings.json": settings("PreToolUse", "Bash|Read", hook),
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
  // Its README: PostToolUse, matcher "Write|Edit|MultiEdit", command "comment-checker".
  const project = (content: string) =>
    fresh({
      "s.json": oneCall("Write", { file_path: "add.ts", content }),
      "gatehouse.json": { model: "scripted:s.json" },
      ".claude/settings.json": settings("PostToolUse", "Write|Edit|MultiEdit", `"${BIN}comment-checker"`),
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

describe("@torka/claude-qol@0.3.0 auto-approve (PreToolUse allow / deny / ask) runs unchanged", {
  concurrency: 3,
}, () => {
  const fresh = tempProjects();
  const installed = (file: string) => readFileSync(join(MODULES, "@torka/claude-qol/hooks", file), "utf8");
  /** Its installer copies hooks/ into the project's .claude/scripts/; its README wires it in settings.local.json. */
  const project = (command: string) =>
    fresh({
      "s.json": oneCall("Bash", { command }),
      "gatehouse.json": { model: "scripted:s.json" },
      "deploy.sh": "touch deployed\n",
      ".claude/scripts/auto_approve_safe.py": installed("auto_approve_safe.py"),
      ".claude/scripts/auto_approve_safe.rules.json": installed("auto_approve_safe.rules.json"),
      ".claude/settings.local.json": settings(
        "PreToolUse",
        "Bash|Read|Grep|Glob|Write|Edit|MultiEdit",
        'python3 "$CLAUDE_PROJECT_DIR"/.claude/scripts/auto_approve_safe.py',
      ),
    });
  /** The hook's own log of what it decided, next to the script as its README says. */
  const decisions = (cwd: string) =>
    readFileSync(join(cwd, ".claude/auto_approve_safe.decisions.jsonl"), "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => (JSON.parse(l) as { decision: string }).decision);

  test("an allowlisted command is allowed and runs", async () => {
    const cwd = await project("git status; touch ran");
    const r = await gatehouse(["run", "-p", "status"], { cwd });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(existsSync(join(cwd, "ran")), true);
    assert.deepEqual(decisions(cwd), ["allow"]);
  });

  test("a dangerous command is denied and the model reads the hook's reason", async () => {
    const cwd = await project("rm -rf build && touch ran");
    const r = await gatehouse(["run", "-p", "clean"], { cwd });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^model read: .*Command matches dangerous pattern/);
    assert.equal(existsSync(join(cwd, "ran")), false);
    assert.deepEqual(decisions(cwd), ["deny"]);
  });

  test("ask defers to Gatehouse's approval: refused without a terminal, run once the user says yes", async () => {
    const refused = await project("sh deploy.sh");
    const r = await gatehouse(["run", "-p", "deploy"], { cwd: refused });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^model read: The Bash call was not approved/);
    assert.equal(existsSync(join(refused, "deployed")), false);
    assert.deepEqual(decisions(refused), ["ask"]);

    const approved = await project("sh deploy.sh");
    let answered = false;
    const onTerminal = await gatehouseOnTerminal(["run", "-p", "deploy"], {
      cwd: approved,
      env: { NO_COLOR: "1" },
      keepStdinOpen: true,
      onStderr: (soFar, child) => {
        if (!answered && soFar.includes("[y]es once")) answered = child.stdin?.write("y\r") ?? false;
      },
    });
    assert.ok(answered, onTerminal.stderr);
    assert.equal(onTerminal.code, 0, onTerminal.stderr);
    assert.equal(existsSync(join(approved, "deployed")), true);
  });
});
