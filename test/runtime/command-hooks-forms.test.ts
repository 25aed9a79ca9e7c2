import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import type { CommandHookEvent } from "../../src/command-hooks/events.js";
import type { ScriptInput } from "../../src/models/index.js";
import type { Tool } from "../../src/tools/types.js";
import { plugin, promptText, testGatehouse } from "./helpers.js";

/**
 * The JSON answers the run-level matrix (command-hooks-matrix.test.ts) does not cover, each
 * through a real run with a real bash script: what the tool receives, what the model sees,
 * what is stored, and who else is asked.
 */

// emit.sh EXIT STDOUT STDERR: prints what it is told, exits with EXIT.
const EMIT = fileURLToPath(new URL("../command-hooks/fixtures/emit.sh", import.meta.url));
const emits = (stdout: string, exit = 0) => ({ type: "command", command: EMIT, args: [String(exit), stdout, ""] });
const specific = (event: CommandHookEvent, fields: Record<string, unknown>) =>
  JSON.stringify({ hookSpecificOutput: { hookEventName: event, ...fields } });

const OUTPUT = "PROBE-OUTPUT";
const INPUT = "probe-input";

const ROOT = mkdtempSync(join(tmpdir(), "gatehouse-hook-forms-"));
after(() => rmSync(ROOT, { recursive: true, force: true }));

/** A tool that records each input it ran with. */
function probeTool(): { tool: Tool; inputs: string[] } {
  const inputs: string[] = [];
  const tool: Tool<{ text: string }, string> = {
    name: "Probe",
    description: "Returns a marker",
    inputSchema: z.object({ text: z.string() }),
    async execute({ text }) {
      inputs.push(text);
      return OUTPUT;
    },
  };
  return { tool: tool as Tool, inputs };
}

const toolTurn: ScriptInput = {
  runs: [
    { turns: [{ toolCalls: [{ name: "Probe", input: { text: INPUT } }] }, { text: "final: {{lastToolResult}}" }] },
  ],
};

const askEveryCall = plugin("approvals", (api) =>
  api.on("before_tool_call", () => ({ requireApproval: { title: "Run Probe?" } })),
);

/** One run (of `toolTurn` by default) with `hooks` as `--settings`; `approval` puts every call before the approver. */
async function runWith(hooks: Record<string, unknown>, o: { approval?: boolean; script?: ScriptInput } = {}) {
  const dir = mkdtempSync(join(ROOT, "case-"));
  const probe = probeTool();
  let approvals = 0;
  const t = testGatehouse(o.script ?? toolTurn, {
    tools: [probe.tool],
    plugins: o.approval ? [askEveryCall] : [],
    approver: async () => {
      approvals++;
      return "allow-once";
    },
    env: { ...process.env, HOOK_DIR: dir },
    config: { cwd: dir },
    commandHooks: { load: { homeDir: dir, cliSettings: JSON.stringify({ hooks }) } },
  });
  try {
    const result = await t.gatehouse.run({ prompt: "go" });
    return {
      dir,
      result,
      inputs: probe.inputs,
      approvals,
      prompts: t.calls.map(promptText),
      stored: JSON.stringify(await t.store.runMessages(result.runId)),
      audit: await t.store.listAudit({ sessionId: result.sessionId }),
      logs: t.logLines,
    };
  } finally {
    await t.gatehouse.close();
  }
}

const on = (event: CommandHookEvent, ...handlers: object[]) => ({ [event]: [{ hooks: handlers }] });

describe("command-hook JSON answers in real runs", () => {
  test("PreToolUse updatedInput: the tool runs with the rewritten input, and the model sees its result", async () => {
    const r = await runWith(
      on(
        "PreToolUse",
        emits(specific("PreToolUse", { permissionDecision: "allow", updatedInput: { text: "REWRITTEN" } })),
      ),
    );
    assert.equal(r.result.outcome, "completed");
    assert.deepEqual(r.inputs, ["REWRITTEN"]);
    assert.equal(r.result.reply, `final: ${OUTPUT}`);
  });

  test("PostToolUse updatedToolOutput: the model, the reply and the store get the replacement, never the original", async () => {
    const r = await runWith(
      on("PostToolUse", emits(specific("PostToolUse", { updatedToolOutput: "REPLACED-OUTPUT" }))),
    );
    assert.deepEqual(r.inputs, [INPUT], "the tool ran");
    assert.match(r.prompts[1] ?? "", /REPLACED-OUTPUT/);
    assert.doesNotMatch(r.prompts[1] ?? "", new RegExp(OUTPUT));
    assert.equal(r.result.reply, "final: REPLACED-OUTPUT");
    assert.match(r.stored, /REPLACED-OUTPUT/);
    assert.doesNotMatch(r.stored, new RegExp(OUTPUT), "the original output is never stored");
  });

  test('legacy PreToolUse decision "block": the tool never runs and the model gets the reason', async () => {
    const r = await runWith(on("PreToolUse", emits('{"decision":"block","reason":"LEGACY-NO"}')));
    assert.equal(r.result.outcome, "completed");
    assert.deepEqual(r.inputs, []);
    assert.match(r.prompts[1] ?? "", /LEGACY-NO/);
  });

  test('legacy PreToolUse decision "approve": the call runs as asked, its reason stays out of the conversation', async () => {
    const r = await runWith(on("PreToolUse", emits('{"decision":"approve","reason":"LEGACY-YES"}')));
    assert.deepEqual(r.inputs, [INPUT]);
    assert.equal(r.result.reply, `final: ${OUTPUT}`);
    for (const p of r.prompts) assert.doesNotMatch(p, /LEGACY-YES/);
    assert.doesNotMatch(r.stored, /LEGACY-YES/);
  });

  test("legacy approve cannot loosen policy: a call another plugin sends to approval still goes to the approver", async () => {
    const r = await runWith(on("PreToolUse", emits('{"decision":"approve"}')), { approval: true });
    assert.equal(r.approvals, 1);
    assert.deepEqual(r.inputs, [INPUT]);
  });

  test("systemMessage: shown to the user as a warning, never to the model or the store; the run goes on", async () => {
    const r = await runWith(on("PreToolUse", emits('{"systemMessage":"HEADS-UP from the guard"}')));
    assert.deepEqual(r.inputs, [INPUT]);
    assert.ok(
      r.logs.includes("warn [command-hooks] PreToolUse hook (cli): HEADS-UP from the guard"),
      r.logs.join("\n"),
    );
    for (const p of r.prompts) assert.doesNotMatch(p, /HEADS-UP/);
    assert.doesNotMatch(r.stored, /HEADS-UP/);
  });

  test("PermissionRequest deny: the tool never runs, the next approver is not asked, the model reads the hook's message", async () => {
    const deny = specific("PermissionRequest", { decision: { behavior: "deny", message: "DENY-MESSAGE" } });
    const r = await runWith(on("PermissionRequest", emits(deny)), { approval: true });
    assert.deepEqual(r.inputs, []);
    assert.equal(r.approvals, 0);
    // As in Claude Code, `message` tells the model why (docs/permissions.md).
    assert.match(r.prompts[1] ?? "", /DENY-MESSAGE/);
    assert.deepEqual(
      r.audit.filter((a) => a.hook === "permission_request").map((a) => [a.pluginId, a.outcome]),
      [["command-hooks", "deny"]],
    );
    assert.equal(r.result.outcome, "completed", "without interrupt the run goes on");
  });

  test("PermissionRequest deny with interrupt: the run ends blocked with Gatehouse's notice, no further model call", async () => {
    const deny = specific("PermissionRequest", { decision: { behavior: "deny", message: "NO", interrupt: true } });
    const r = await runWith(on("PermissionRequest", emits(deny)), { approval: true });
    assert.deepEqual(r.inputs, []);
    assert.equal(r.prompts.length, 1, "the model was not called again");
    assert.equal(r.result.outcome, "blocked");
    assert.match(
      r.result.reply ?? "",
      /The run was stopped: permission to use Probe was denied by a policy \(command-hooks\)/,
    );
  });

  test("PermissionRequest allow: the tool runs and the next approver is not asked", async () => {
    const allow = specific("PermissionRequest", { decision: { behavior: "allow" } });
    const r = await runWith(on("PermissionRequest", emits(allow)), { approval: true });
    assert.deepEqual(r.inputs, [INPUT]);
    assert.equal(r.approvals, 0);
  });

  test("PermissionRequest allow with updatedInput: the call runs with the hook's input, as in Claude Code", async () => {
    const allow = specific("PermissionRequest", {
      decision: { behavior: "allow", updatedInput: { text: "REWRITTEN" } },
    });
    const r = await runWith(on("PermissionRequest", emits(allow)), { approval: true });
    assert.equal(r.approvals, 0, "nobody else was asked");
    assert.deepEqual(r.inputs, ["REWRITTEN"]);
  });
});

describe("Stop additionalContext", () => {
  test("continues the turn with the context as the instruction, within the same 8-in-a-row cap as blocks", async () => {
    const turns = Array.from({ length: 12 }, (_, i) => ({ text: `attempt ${i}` }));
    const keepGoing = specific("Stop", { additionalContext: "also check the tests" });
    const r = await runWith(on("Stop", emits(keepGoing)), { script: { runs: [{ turns }] } });
    assert.equal(r.result.outcome, "completed");
    assert.equal(r.prompts.length, 9, "the first answer and 8 more passes");
    assert.equal(r.result.reply, "attempt 8");
    assert.match(r.prompts[1] ?? "", /also check the tests/);
  });

  test("continue: false next to additionalContext ends the turn: the answer stands", async () => {
    const stop = JSON.stringify({
      continue: false,
      hookSpecificOutput: { hookEventName: "Stop", additionalContext: "more" },
    });
    const r = await runWith(on("Stop", emits(stop)), { script: { runs: [{ turns: [{ text: "a" }, { text: "b" }] }] } });
    assert.equal(r.prompts.length, 1);
    assert.equal(r.result.reply, "a");
  });
});

describe("Notification matchers", () => {
  test("an approval request fires a permission_prompt matcher, and not an idle_prompt one", async () => {
    const writes = (name: string) => ({ type: "command", command: `cat > "$HOOK_DIR/${name}.json"` });
    const r = await runWith(
      {
        Notification: [
          { matcher: "permission_prompt", hooks: [writes("permission_prompt")] },
          { matcher: "idle_prompt", hooks: [writes("idle_prompt")] },
        ],
      },
      { approval: true },
    );
    assert.equal(r.approvals, 1);
    const fired = JSON.parse(readFileSync(join(r.dir, "permission_prompt.json"), "utf8")) as Record<string, unknown>;
    assert.equal(fired.hook_event_name, "Notification");
    assert.equal(fired.notification_type, "permission_prompt");
    assert.equal(existsSync(join(r.dir, "idle_prompt.json")), false, "the idle_prompt hook never ran");
  });
});
