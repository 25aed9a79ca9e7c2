import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { before, describe, test } from "node:test";
import { mergeVerdicts, runCommandHooks, selectHandlers } from "../../src/command-hooks/dispatch.js";
import { matchValueOf } from "../../src/command-hooks/events.js";
import type { HandlerOutcome } from "../../src/command-hooks/executor.js";
import type { NormalizedVerdict } from "../../src/command-hooks/verdict.js";
import { loadShellParser } from "../../src/permissions/index.js";
import { execHook, execOptions, hook, inputFor, shellHook, tempDir } from "./helpers.js";

before(() => loadShellParser());

const emit = (exit: number, stdout: string, stderr = "", o: Parameters<typeof execHook>[2] = {}) =>
  execHook("emit.sh", [String(exit), stdout, stderr], o);
const pre = (o: Record<string, unknown>) =>
  JSON.stringify({ hookSpecificOutput: { hookEventName: "PreToolUse", ...o } });

/** A fake run for merge-rule tests that need no process. */
const run = (verdict: NormalizedVerdict, handler = shellHook("true")) => ({
  handler,
  outcome: { verdict } as HandlerOutcome,
});

describe("dispatch: parallel runs merged in source order", () => {
  test("handlers that finish in reverse order still merge in source order", async () => {
    const dir = tempDir();
    const fifo = join(dir, "handoff");
    execFileSync("mkfifo", [fifo]);
    // The first handler waits until the second has exited and been reaped, so it finishes last.
    const first = execHook("wait-for-peer.sh", [fifo]);
    const second = execHook("peer.sh", [fifo]);
    const merged = await runCommandHooks(
      "PreToolUse",
      "Bash",
      inputFor("PreToolUse"),
      [first, second],
      execOptions(dir),
    );
    const [a, b] = merged.runs;
    assert.equal(a?.handler, first);
    assert.equal(b?.handler, second);
    assert.ok(
      (a?.outcome.durationMs ?? 0) > (b?.outcome.durationMs ?? 0),
      "the first handler started first and finished last",
    );
    assert.equal(merged.decision, "ask");
    assert.equal(merged.reason, "first (finished last)", "equal decisions: the first in source order wins");
    assert.equal(merged.decidedBy, first);
    assert.equal(merged.additionalContext, "first\n\nsecond");
    assert.deepEqual(merged.updatedInput, { from: "second" }, "the last source in order, not the last to finish");
  });

  test("all matching handlers run in parallel: a blocked-on-peer handler does not serialize the others", async () => {
    const dir = tempDir();
    const fifo = join(dir, "handoff");
    execFileSync("mkfifo", [fifo]);
    // Would deadlock if handlers ran one after another.
    const merged = await runCommandHooks(
      "PreToolUse",
      "Bash",
      inputFor("PreToolUse"),
      [execHook("wait-for-peer.sh", [fifo]), emit(0, ""), execHook("peer.sh", [fifo])],
      execOptions(dir),
    );
    assert.equal(merged.runs.length, 3);
  });

  test("deny beats ask beats allow, whatever the order", async () => {
    const allow = emit(0, pre({ permissionDecision: "allow", permissionDecisionReason: "ok" }));
    const ask = emit(0, pre({ permissionDecision: "ask", permissionDecisionReason: "sure?" }));
    const deny = emit(2, "", "never");
    const opts = execOptions(tempDir());
    const input = inputFor("PreToolUse");
    for (const order of [
      [allow, ask, deny],
      [deny, ask, allow],
      [ask, deny, allow],
    ]) {
      const m = await runCommandHooks("PreToolUse", "Bash", input, order, opts);
      assert.equal(m.decision, "deny");
      assert.equal(m.reason, "never");
      assert.equal(m.decidedBy, deny);
    }
    const m = await runCommandHooks("PreToolUse", "Bash", input, [allow, ask], opts);
    assert.equal(m.decision, "ask");
    assert.equal(m.reason, "sure?");
  });

  test("only handlers whose matcher matches run", async () => {
    const dir = tempDir();
    const marker = (name: string) => shellHook(`touch "${dir}/${name}"`, { matcher: name === "all" ? "*" : name });
    const handlers = [marker("Bash"), marker("Edit|Write"), marker("mcp__fs__.*"), marker("all")];
    const m = await runCommandHooks(
      "PreToolUse",
      undefined,
      inputFor("PreToolUse", { tool_name: "mcp__fs__write" }),
      handlers,
      execOptions(dir),
    );
    assert.deepEqual(
      m.runs.map((r) => r.handler.matcher),
      ["mcp__fs__.*", "*"],
    );
  });

  test("the matcher tests the event's own payload field (SessionStart source, PreCompact trigger, Notification type)", () => {
    const h = (event: "SessionStart" | "PreCompact" | "Notification", matcher: string) =>
      shellHook("true", { event, matcher });
    const handlers = [h("SessionStart", "resume"), h("PreCompact", "auto"), h("Notification", "idle_prompt")];
    const count = (event: "SessionStart" | "PreCompact" | "Notification", payload: Record<string, unknown>) =>
      selectHandlers(event, matchValueOf(event, payload), payload, handlers, "/").length;
    assert.equal(count("SessionStart", { source: "resume" }), 1);
    assert.equal(count("SessionStart", { source: "startup" }), 0);
    assert.equal(count("PreCompact", { trigger: "auto" }), 1);
    assert.equal(count("PreCompact", { trigger: "manual" }), 0);
    assert.equal(count("Notification", { notification_type: "idle_prompt" }), 1);
    assert.equal(count("Notification", { notification_type: "permission_prompt" }), 0);
  });

  test("identical handlers matched twice run once", () => {
    const a = shellHook("guard.sh", { matcher: "Bash", source: "user" });
    const b = shellHook("guard.sh", { matcher: "*", source: "project" });
    const c = shellHook("guard.sh", { matcher: "*", source: "project", dialect: "code-puppy" });
    const picked = selectHandlers("PreToolUse", "Bash", {}, [a, b, c], "/");
    assert.deepEqual(picked, [a, c], "same command, same dialect: once; another dialect reads exit codes differently");
    assert.deepEqual(selectHandlers("PreToolUse", "Read", {}, [a, b], "/"), [b]);
  });

  test("`if` rules narrow tool-event handlers to matching calls", () => {
    const git = hook({ type: "command", command: "g" }, { if: "Bash(git *)" });
    const ts = hook({ type: "command", command: "t" }, { if: "Edit(*.ts)" });
    const sel = (tool: string, toolInput: unknown) =>
      selectHandlers("PreToolUse", tool, { tool_name: tool, tool_input: toolInput }, [git, ts], "/p").map(
        (h) => h.definition.type === "command" && h.definition.command,
      );
    assert.deepEqual(sel("Bash", { command: "git push" }), ["g"]);
    assert.deepEqual(sel("Bash", { command: "cd x && git status" }), ["g"]);
    assert.deepEqual(sel("Bash", { command: "ls" }), []);
    assert.deepEqual(sel("Edit", { file_path: "/p/src/a.ts" }), ["t"]);
    assert.deepEqual(sel("Edit", { file_path: "/p/src/a.js" }), []);
  });

  test("no matching handler costs no process and returns an empty verdict", async () => {
    const m = await runCommandHooks("Stop", undefined, inputFor("Stop"), [shellHook("exit 2")], execOptions(tempDir()));
    assert.deepEqual(m, { runs: [] });
  });
});

describe("merge rules", () => {
  test("updatedInput and updatedToolOutput come from the last handler in order that gave one", () => {
    const m = mergeVerdicts([
      run({ updatedInput: { n: 1 }, updatedToolOutput: "one" }),
      run({ updatedInput: { n: 2 } }),
      run({}),
    ]);
    assert.deepEqual(m.updatedInput, { n: 2 });
    assert.equal(m.updatedToolOutput, "one");
  });

  test("context, system messages and feedback are concatenated with blank lines, in order", () => {
    const m = mergeVerdicts([
      run({ additionalContext: "a", systemMessage: "s1", feedback: "f1" }),
      run({ additionalContext: "b", feedback: "f2" }),
      run({ systemMessage: "s2" }),
    ]);
    assert.equal(m.additionalContext, "a\n\nb");
    assert.equal(m.systemMessage, "s1\n\ns2");
    assert.equal(m.feedback, "f1\n\nf2");
  });

  test("continue:false from any handler wins, with the first stop reason", () => {
    const m = mergeVerdicts([
      run({}),
      run({ continue: false, stopReason: "x" }),
      run({ continue: false, stopReason: "y" }),
    ]);
    assert.equal(m.continue, false);
    assert.equal(m.stopReason, "x");
  });

  test("a block without a reason does not keep a weaker decision's reason", () => {
    const m = mergeVerdicts([run({ decision: "allow", reason: "fine" }), run({ decision: "block" })]);
    assert.equal(m.decision, "block");
    assert.equal(m.reason, undefined);
  });

  test("errors do not count as decisions", () => {
    const m = mergeVerdicts([run({ error: "timeout" }), run({ decision: "allow" })]);
    assert.equal(m.decision, "allow");
    assert.equal("error" in m, false);
  });
});
