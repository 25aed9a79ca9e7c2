import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, test } from "node:test";
import { BashInputSchema, createBashTool, interpretExitCode } from "../../src/tools/builtin/bash.js";
import { processIsDead, tempDir, toolCtx, toolError } from "./helpers.js";

const bash = createBashTool();

describe("Bash", () => {
  test("runs in the project directory and returns stdout and stderr separately", async (t) => {
    const dir = await tempDir(t);
    const out = await bash.execute({ command: "pwd; echo oops >&2" }, toolCtx(dir));
    assert.deepEqual(out, { stdout: `${dir}\n`, stderr: "oops\n", interrupted: false, exitCode: 0 });
    assert.equal(bash.toModelOutput?.(out), `${dir}\noops`);
  });

  test("uses bash when /bin/bash exists", { skip: !existsSync("/bin/bash") && "no /bin/bash" }, async (t) => {
    const dir = await tempDir(t);
    const out = await bash.execute({ command: "echo $0" }, toolCtx(dir));
    assert.equal(out.stdout, "/bin/bash\n");
  });

  test("stdin is empty, so a command reading it does not hang", async (t) => {
    const dir = await tempDir(t);
    const out = await bash.execute({ command: "cat; echo done" }, toolCtx(dir));
    assert.equal(out.stdout, "done\n");
  });

  test("a non-zero exit is a ToolError starting with 'Exit code N' that carries the output", async (t) => {
    const dir = await tempDir(t);
    const err = await toolError(
      bash.execute({ command: "echo out; echo err >&2; exit 3" }, toolCtx(dir)),
      /^Exit code 3\nout\nerr$/,
    );
    assert.deepEqual(err.details, { stdout: "out\n", stderr: "err\n", interrupted: false, exitCode: 3 });
  });

  test("exit code 1 of grep is an answer (no matches), not an error", async (t) => {
    const dir = await tempDir(t);
    const out = await bash.execute({ command: "echo abc | grep -q xyz" }, toolCtx(dir));
    assert.equal(out.exitCode, 1);
    assert.equal(out.returnCodeInterpretation, "No matches found");
    assert.equal(bash.toModelOutput?.(out), "(exit code 1: No matches found)");
  });

  test("interpretExitCode looks at the last command only and ignores env assignments", () => {
    assert.equal(interpretExitCode("LC_ALL=C grep foo bar", 1), "No matches found");
    assert.equal(interpretExitCode("grep foo bar | wc -l", 1), undefined);
    assert.equal(interpretExitCode("cd x && diff a b", 1), "Files differ");
    assert.equal(interpretExitCode("grep foo bar", 2), undefined);
  });

  test("on timeout the whole process group dies, background grandchildren included", async (t) => {
    const dir = await tempDir(t);
    const out = await bash.execute({ command: "sleep 30 & echo $!; wait", timeout: 300 }, toolCtx(dir));
    assert.equal(out.interrupted, true);
    assert.match(out.stderr, /timed out after 300 ms/);
    const pid = Number(out.stdout.trim());
    assert.ok(pid > 0);
    assert.equal(await processIsDead(pid), true);
  });

  test("members that ignore SIGTERM are killed with SIGKILL after the grace", async (t) => {
    const dir = await tempDir(t);
    const tool = createBashTool({ killGraceMs: 100 });
    const out = await tool.execute({ command: "trap '' TERM; sleep 30 & echo $!; wait", timeout: 200 }, toolCtx(dir));
    assert.equal(out.interrupted, true);
    assert.equal(await processIsDead(Number(out.stdout.trim())), true);
  });

  test("aborting the run's signal kills the process group and reports interrupted", async (t) => {
    const dir = await tempDir(t);
    const fifo = path.join(dir, "pid.fifo");
    execFileSync("mkfifo", [fifo]);
    const ac = new AbortController();
    const running = bash.execute({ command: `sleep 30 & echo $! > ${fifo}; wait` }, toolCtx(dir, ac.signal));
    // Opening the FIFO waits for the command to write the pid: no sleeping in the test.
    const pid = Number((await readFile(fifo, "utf8")).trim());
    ac.abort();
    const out = await running;
    assert.equal(out.interrupted, true);
    assert.match(out.stderr, /aborted/);
    assert.equal(await processIsDead(pid), true);
  });

  test("an already aborted signal runs nothing", async (t) => {
    const dir = await tempDir(t);
    const ac = new AbortController();
    ac.abort();
    const out = await bash.execute({ command: "touch ran" }, toolCtx(dir, ac.signal));
    assert.equal(out.interrupted, true);
    assert.equal(existsSync(path.join(dir, "ran")), false);
  });

  test("each stream is capped, keeping head and tail and saying how much was cut", async (t) => {
    const dir = await tempDir(t);
    const tool = createBashTool({ maxOutputChars: 1000 });
    const out = await tool.execute(
      {
        command:
          "echo START; head -c 100000 /dev/zero | tr '\\0' a; echo; echo END; head -c 5000 /dev/zero | tr '\\0' e >&2",
      },
      toolCtx(dir),
    );
    assert.ok(out.stdout.startsWith("START\naaa"));
    assert.ok(out.stdout.endsWith("aaa\nEND\n"));
    assert.match(out.stdout, /\[\d+ characters truncated\]/);
    assert.ok(out.stdout.length < 1100);
    assert.match(out.stderr, /\[4000 characters truncated\]/);
  });

  test("a project directory that does not exist is a clear error", async (t) => {
    const dir = await tempDir(t);
    await toolError(
      bash.execute({ command: "true" }, toolCtx(path.join(dir, "missing"))),
      /working directory .* does not exist/,
    );
  });

  test("the input schema accepts Claude Code's fields and caps timeout at 600000 ms", () => {
    assert.equal(BashInputSchema.safeParse({ command: "ls", timeout: 1000, description: "list" }).success, true);
    assert.equal(BashInputSchema.safeParse({ command: "ls", timeout: 600_001 }).success, false);
    assert.equal(BashInputSchema.safeParse({ command: "" }).success, false);
  });
});
