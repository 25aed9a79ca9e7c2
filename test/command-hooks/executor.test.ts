import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, watch } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { runCommandHandler } from "../../src/command-hooks/executor.js";
import { NO_DECISION_BLOCK_REASON } from "../../src/command-hooks/verdict.js";
import { isDead } from "../../src/core/process-groups.js";
import { execHook, execOptions, hook, inputFor, PROJECT_DIR_PLACEHOLDER, shellHook, tempDir } from "./helpers.js";

const readJson = (file: string) => JSON.parse(readFileSync(file, "utf8"));
const pidsIn = (file: string) =>
  readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .map((p) => Number(p));

describe("executor: processes", () => {
  test("the hook gets the input JSON on stdin, runs in the project directory and sees the session env", async () => {
    const project = tempDir();
    const out = join(project, "seen.json");
    const input = inputFor("PreToolUse", { session_id: "sess-test-1", tool_input: { command: "ls -la" } });
    const o = await runCommandHandler(execHook("record.py", [out]), input, execOptions(project));
    assert.equal(o.exitCode, 0);
    const seen = readJson(out);
    assert.deepEqual(seen.stdin, input);
    assert.equal(seen.cwd, project);
    assert.equal(seen.env.CLAUDE_PROJECT_DIR, project);
    assert.equal(seen.env.GATEHOUSE_PROJECT_DIR, project);
    assert.equal(seen.env.CLAUDE_CODE_SESSION_ID, "sess-test-1");
    assert.equal(seen.env.CLAUDE_CODE_SESSION_ID, seen.stdin.session_id);
  });

  test("shell form runs through sh -c with $CLAUDE_PROJECT_DIR in its environment", async () => {
    const project = tempDir();
    const o = await runCommandHandler(
      shellHook('printf %s "$CLAUDE_PROJECT_DIR" | wc -c; echo "$CLAUDE_PROJECT_DIR" >&2; exit 2'),
      inputFor("PreToolUse"),
      execOptions(project),
    );
    assert.equal(o.stdout.trim(), String(project.length));
    assert.deepEqual(o.verdict, { decision: "deny", reason: project });
  });

  test("shell: bash runs the command with bash", async () => {
    const o = await runCommandHandler(
      hook(
        { type: "command", command: '[[ -n "$BASH_VERSION" ]] && echo bash', shell: "bash" },
        { event: "UserPromptSubmit" },
      ),
      inputFor("UserPromptSubmit"),
      execOptions(tempDir()),
    );
    assert.deepEqual(o.verdict, { additionalContext: "bash" });
  });

  test(`exec form substitutes ${PROJECT_DIR_PLACEHOLDER} as plain text, with no shell interpretation`, async () => {
    const parent = tempDir();
    const project = join(parent, "my proj $(touch pwned) ;x `touch pwned2`");
    mkdirSync(project);
    const o = await runCommandHandler(
      execHook("record.py", [`${PROJECT_DIR_PLACEHOLDER}/seen.json`, "$HOME", "a b;c", `${PROJECT_DIR_PLACEHOLDER}`]),
      inputFor("PreToolUse"),
      execOptions(project),
    );
    assert.equal(o.exitCode, 0, o.stderr);
    const seen = readJson(join(project, "seen.json"));
    assert.deepEqual(seen.argv.slice(1), [join(project, "seen.json"), "$HOME", "a b;c", project]);
    for (const dir of [project, parent]) {
      assert.equal(existsSync(join(dir, "pwned")), false);
      assert.equal(existsSync(join(dir, "pwned2")), false);
    }
  });

  test("the placeholder is substituted in the exec-form program path too", async () => {
    const project = tempDir();
    const o = await runCommandHandler(
      hook({ type: "command", command: `${PROJECT_DIR_PLACEHOLDER}/../missing-${process.pid}`, args: [] }),
      inputFor("PreToolUse"),
      execOptions(project),
    );
    assert.equal(o.verdict.error, "spawn");
    assert.match(o.spawnError ?? "", new RegExp(`${project}/\\.\\./missing`));
  });

  test("a hook that exits without reading a large input neither hangs nor crashes us", async () => {
    const big = inputFor("PreToolUse", { tool_input: { content: "x".repeat(8 * 1024 * 1024) } });
    for (let i = 0; i < 5; i++) {
      const o = await runCommandHandler(execHook("no-stdin.sh", []), big, execOptions(tempDir()));
      assert.deepEqual(o.verdict, { decision: "deny", reason: "blocked without reading" });
    }
  });

  test("stdout and stderr are capped at 1 MiB each; the excess is dropped and noted", async () => {
    const o = await runCommandHandler(execHook("flood.js", ["3"]), inputFor("PreToolUse"), execOptions(tempDir()));
    assert.equal(o.exitCode, 0);
    assert.equal(o.stdout.length, 1024 * 1024);
    assert.equal(o.stderr.length, 1024 * 1024);
    assert.equal(o.truncated, true);
    assert.equal(o.droppedBytes, 4 * 1024 * 1024);
    const small = await runCommandHandler(
      execHook("flood.js", ["1"]),
      inputFor("PreToolUse"),
      execOptions(tempDir(), { maxOutputBytes: 1000 }),
    );
    assert.equal(small.stdout.length, 1000);
    assert.equal(small.truncated, true);
  });

  test("output under the cap is not marked truncated", async () => {
    const o = await runCommandHandler(execHook("emit.sh", ["0", "ok", ""]), inputFor("Stop"), execOptions(tempDir()));
    assert.equal(o.truncated, false);
    assert.equal(o.droppedBytes, 0);
  });

  test("a spawn failure gives no decision, or a block with a fixed reason under onFailure block", async () => {
    const def = { type: "command" as const, command: `/nonexistent/guard-${process.pid}`, args: [] };
    const o = await runCommandHandler(hook(def), inputFor("PreToolUse"), execOptions(tempDir()));
    assert.equal(o.verdict.error, "spawn");
    assert.equal(o.verdict.decision, undefined);
    const b = await runCommandHandler(
      hook(def, { onFailure: "block" }),
      inputFor("PreToolUse"),
      execOptions(tempDir()),
    );
    assert.equal(b.verdict.decision, "deny");
    assert.equal(b.verdict.reason, NO_DECISION_BLOCK_REASON);
  });
});

describe("executor: timeouts and cancellation kill the whole process group", () => {
  test("a timeout kills the hook and its grandchildren, including one that ignores SIGTERM", async () => {
    const dir = tempDir();
    const pidfile = join(dir, "pids");
    const o = await runCommandHandler(
      execHook("spawn-tree.sh", [pidfile], { timeout: 0.3 }),
      inputFor("PreToolUse"),
      execOptions(dir, { killGraceMs: 200 }),
    );
    assert.equal(o.timedOut, true);
    assert.deepEqual(o.verdict, { error: "timeout", errorDetail: "timed out" });
    const pids = pidsIn(pidfile);
    assert.equal(pids.length, 4, "two sleeps, the TERM-ignoring subshell and the hook itself");
    for (const pid of pids) assert.equal(isDead(pid), true, `pid ${pid} is still alive`);
  });

  test("a timeout with onFailure block blocks, with a reason that does not name the command", async () => {
    const dir = tempDir();
    const h = execHook("spawn-tree.sh", [join(dir, "pids")], {
      timeout: 0.3,
      onFailure: "block",
      event: "PostToolUse",
    });
    const o = await runCommandHandler(h, inputFor("PostToolUse"), execOptions(dir, { killGraceMs: 200 }));
    assert.equal(o.verdict.decision, "block");
    assert.equal(o.verdict.reason, NO_DECISION_BLOCK_REASON);
  });

  test("a background child that keeps stdout open is killed at the timeout", async () => {
    const dir = tempDir();
    const o = await runCommandHandler(
      shellHook(`sleep 1000 & echo $! > "${dir}/bg"; echo done`, { timeout: 0.3 }),
      inputFor("PreToolUse"),
      execOptions(dir),
    );
    assert.equal(o.timedOut, true);
    assert.equal(o.stdout, "done\n");
    assert.equal(isDead(pidsIn(join(dir, "bg"))[0] as number), true);
  });

  test("a process that left the group but holds our pipe does not keep the outcome waiting", async () => {
    const dir = tempDir();
    const o = await runCommandHandler(
      shellHook(`setsid sh -c 'echo $$ > "${dir}/escaped"; exec sleep 1000' & wait`, { timeout: 0.3 }),
      inputFor("PreToolUse"),
      execOptions(dir, { killGraceMs: 100 }),
    );
    assert.equal(o.timedOut, true);
    const escaped = pidsIn(join(dir, "escaped"))[0] as number;
    process.kill(escaped, "SIGKILL");
  });

  test("aborting the signal kills the group and gives no decision, even with onFailure block", async () => {
    const dir = tempDir();
    const pidfile = join(dir, "pids");
    const controller = new AbortController();
    const watcher = watch(dir, (_e, name) => {
      if (name === "pids.ready") controller.abort();
    });
    try {
      const o = await runCommandHandler(
        execHook("spawn-tree.sh", [pidfile], { onFailure: "block" }),
        inputFor("PreToolUse"),
        execOptions(dir, { signal: controller.signal, killGraceMs: 200 }),
      );
      assert.equal(o.aborted, true);
      assert.equal(o.verdict.decision, undefined);
      assert.equal(o.verdict.error, "aborted");
      for (const pid of pidsIn(pidfile)) assert.equal(isDead(pid), true, `pid ${pid} is still alive`);
    } finally {
      watcher.close();
    }
  });

  test("an already-aborted signal starts nothing", async () => {
    const dir = tempDir();
    const o = await runCommandHandler(
      execHook("record.py", [join(dir, "x")]),
      inputFor("PreToolUse"),
      execOptions(dir, { signal: AbortSignal.abort() }),
    );
    assert.equal(o.aborted, true);
    assert.equal(existsSync(join(dir, "x")), false);
  });
});
