// Each agent's answer, read back by Gatehouse's own reader of that agent's hooks
// (src/command-hooks/, the other direction): what `gatehouse hook <agent>` says is what that
// agent's hook protocol means by the verdict. The payloads are built by the same module that
// builds each agent's payloads for Gatehouse's command hooks.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { createGatehouse } from "../../src/assembly/gatehouse.js";
import { loadSources, permissionPolicy } from "../../src/assembly/sources.js";
import type { Dialect } from "../../src/command-hooks/dialects.js";
import type { CommandHookEvent } from "../../src/command-hooks/events.js";
import { nativePayload } from "../../src/command-hooks/foreign.js";
import { interpret } from "../../src/command-hooks/protocol.js";
import type { NormalizedVerdict } from "../../src/command-hooks/verdict.js";
import { answer } from "../../src/host-hooks/answer.js";
import { evaluate, failClosed, type GuardProject } from "../../src/host-hooks/evaluate.js";
import { AGENTS, type Agent } from "../../src/host-hooks/hosts.js";
import { readRequest } from "../../src/host-hooks/request.js";
import { loadShellParser } from "../../src/permissions/index.js";
import type { PluginDefinition } from "../../src/plugins/define.js";

const EMAIL = /[\w.+-]+@[\w-]+(\.[\w-]+)+/g;

/** A policy with every verdict, keyed by the command or prompt it sees. */
const policyPlugin: PluginDefinition = {
  id: "policy",
  setup(api) {
    api.on("before_tool_call", (e) => {
      const command = String((e.params as { command?: unknown }).command ?? "");
      if (command.includes("rm -rf")) return { outcome: "block", reason: "INTERNAL-7", message: "No deleting." };
      if (command.includes("THROWS")) throw new Error("plugin bug");
      if (command.includes("ASK")) return { requireApproval: { title: "Really run it?" } };
      if (command.includes("REWRITE")) return { params: { ...(e.params as object), command: "echo safe" } };
      if (command.includes("TRUSTED")) return { permissionDecision: "allow" };
      return undefined;
    });
    api.on("after_tool_call", (e) => {
      const text = JSON.stringify(e.result ?? "");
      if (text.includes("TOP-SECRET")) return { outcome: "block", reason: "INTERNAL-8", message: "secret" };
      if (EMAIL.test(text))
        return {
          result:
            typeof e.result === "string"
              ? e.result.replace(EMAIL, "[email]")
              : JSON.parse(text.replace(EMAIL, "[email]")),
          additionalContext: "An email was redacted.",
        };
      return undefined;
    });
    api.on("before_input", (e) =>
      e.prompt.includes("forbidden")
        ? { outcome: "block", reason: "INTERNAL-9", message: "Not that." }
        : { outcome: "pass" },
    );
    api.on("before_agent_finalize", (e) =>
      e.lastAssistantMessage.includes("TODO")
        ? { action: "revise", retry: { instruction: "Finish the TODO." } }
        : undefined,
    );
  },
};

/** What each agent's event names are, for the Claude Code events these tests send. */
const NATIVE: Readonly<Record<Agent, Partial<Record<CommandHookEvent, string>>>> = {
  claude: { PreToolUse: "PreToolUse", PostToolUse: "PostToolUse", UserPromptSubmit: "UserPromptSubmit", Stop: "Stop" },
  codex: { PreToolUse: "PreToolUse", PostToolUse: "PostToolUse", UserPromptSubmit: "UserPromptSubmit", Stop: "Stop" },
  gemini: { PreToolUse: "BeforeTool", PostToolUse: "AfterTool", UserPromptSubmit: "BeforeAgent", Stop: "AfterAgent" },
  cursor: {
    PreToolUse: "preToolUse",
    PostToolUse: "postToolUse",
    UserPromptSubmit: "beforeSubmitPrompt",
    Stop: "stop",
  },
};

const claudePayload = (event: CommandHookEvent, fields: Record<string, unknown>) => ({
  session_id: "s1",
  run_id: "r1",
  transcript_path: "",
  cwd: "/p",
  hook_event_name: event,
  tool_use_id: "t1",
  ...fields,
});

let project: GuardProject;
const dir = mkdtempSync(join(tmpdir(), "gatehouse-host-hooks-"));

/** The agent's payload for the event, answered by Gatehouse, then read back as that agent's hook answer. */
async function roundTrip(agent: Agent, event: CommandHookEvent, fields: Record<string, unknown>) {
  const native = NATIVE[agent][event] as string;
  const payload = nativePayload(agent as Dialect, native, claudePayload(event, fields));
  const request = readRequest(agent, { ...payload, hook_event_name: native });
  assert.ok(request, `${agent} ${native} is served`);
  const said = answer(request, await evaluate(project, request));
  const verdict = interpret(
    event,
    { exitCode: said.exitCode, signal: null, stdout: said.stdout, stderr: said.stderr, timedOut: false },
    { dialect: agent as Dialect, onFailure: "continue", native: { event: native, payload } },
  );
  return { said, verdict };
}

const bash = (command: string) => ({ tool_name: "Bash", tool_input: { command } });
const bashOutput = (stdout: string) => ({
  ...bash("cat f"),
  tool_response: { stdout, stderr: "", interrupted: false, isImage: false },
});

before(async () => {
  await loadShellParser();
  const loaded = loadSources({
    projectDir: dir,
    permissions: { rules: [{ behavior: "deny", rule: "Bash(shutdown *)" }] },
  });
  const policy = permissionPolicy(loaded.permissions, dir, false);
  const gatehouse = createGatehouse({
    model: "scripted:echo",
    plugins: [policyPlugin],
    tools: [],
    store: { kind: "memory" },
    permissions: policy,
    logger: { debug() {}, info() {}, warn() {}, error() {} },
  });
  await gatehouse.ready();
  project = { gatehouse, policy };
});
after(() => project.gatehouse.close());

const blocks = (v: NormalizedVerdict) => v.decision === "deny" || v.decision === "block";

for (const agent of AGENTS) {
  describe(`gatehouse hook ${agent}`, () => {
    test("a before_tool_call block denies the call with the plugin's message, never its reason", async () => {
      const { said, verdict } = await roundTrip(agent, "PreToolUse", bash("rm -rf x"));
      assert.ok(blocks(verdict), JSON.stringify(verdict));
      assert.match(verdict.reason ?? "", /No deleting\./);
      assert.doesNotMatch(said.stdout + said.stderr, /INTERNAL/);
    });

    test("a plugin that throws denies the call (fail closed)", async () => {
      const { verdict } = await roundTrip(agent, "PreToolUse", bash("echo THROWS"));
      assert.ok(blocks(verdict), JSON.stringify(verdict));
    });

    test("a permission deny rule denies the call", async () => {
      const { verdict } = await roundTrip(agent, "PreToolUse", bash("shutdown now"));
      assert.ok(blocks(verdict), JSON.stringify(verdict));
      assert.match(verdict.reason ?? "", /Bash\(shutdown \*\)/);
    });

    test("a params rewrite reaches the call's input", async () => {
      const { verdict } = await roundTrip(agent, "PreToolUse", bash("REWRITE me"));
      assert.deepEqual(verdict.updatedInput, { command: "echo safe" });
    });

    test("requireApproval asks where the agent can ask, and denies where it cannot", async () => {
      const { verdict } = await roundTrip(agent, "PreToolUse", bash("ASK me"));
      assert.equal(verdict.decision, agent === "codex" ? "deny" : "ask", JSON.stringify(verdict));
    });

    test("permissionDecision allow skips the agent's prompt", async () => {
      const { verdict } = await roundTrip(agent, "PreToolUse", bash("TRUSTED"));
      assert.equal(verdict.decision, "allow", JSON.stringify(verdict));
    });

    test("a call no plugin minds gets no decision", async () => {
      const { said, verdict } = await roundTrip(agent, "PreToolUse", bash("ls"));
      assert.equal(verdict.decision, undefined);
      assert.equal(said.stdout, "");
    });

    test("a before_input block refuses the prompt with the plugin's message", async () => {
      const { said, verdict } = await roundTrip(agent, "UserPromptSubmit", { prompt: "a forbidden thing" });
      assert.ok(blocks(verdict), JSON.stringify(verdict));
      assert.doesNotMatch(said.stdout, /INTERNAL/);
    });

    test("a before_agent_finalize retry sends the agent back with the instruction", async () => {
      const { verdict } = await roundTrip(agent, "Stop", {
        last_assistant_message: "TODO later",
        stop_hook_active: false,
      });
      // Cursor's stop carries no answer text: the plugin sees an empty lastAssistantMessage.
      if (agent === "cursor") return assert.equal(verdict.decision, undefined);
      assert.equal(verdict.decision, "block", JSON.stringify(verdict));
      assert.match(verdict.reason ?? "", /Finish the TODO\./);
    });

    test("an after_tool_call rewrite replaces the output where the agent can, and stops the turn or says so where it cannot", async () => {
      const { said, verdict } = await roundTrip(agent, "PostToolUse", bashOutput("mail bob@example.com"));
      const shown = JSON.stringify(verdict);
      assert.doesNotMatch(said.stdout, /bob@example\.com/);
      if (agent === "claude") assert.match(JSON.stringify(verdict.updatedToolOutput), /mail \[email\]/);
      if (agent === "gemini") assert.ok(blocks(verdict) && /mail \[email\]/.test(verdict.reason ?? ""), shown);
      if (agent === "codex") assert.equal(verdict.continue, false, shown);
      if (agent === "cursor") assert.match(said.stderr, /cannot rewrite a tool output/);
      assert.match(verdict.additionalContext ?? "", /An email was redacted\./);
    });

    test("an after_tool_call block withholds the output where the agent can, never giving the reason", async () => {
      const { said, verdict } = await roundTrip(agent, "PostToolUse", bashOutput("TOP-SECRET"));
      assert.doesNotMatch(said.stdout + said.stderr, /INTERNAL/);
      if (agent === "claude")
        assert.match(JSON.stringify(verdict.updatedToolOutput), /withheld by a policy \(policy\): secret/);
      if (agent === "gemini") assert.ok(blocks(verdict), JSON.stringify(verdict));
      if (agent === "codex") assert.equal(verdict.continue, false);
      if (agent === "cursor") assert.match(said.stderr, /cannot withhold/);
    });

    test("a guard that could not load refuses the call and never sends a Stop back", async () => {
      const native = NATIVE[agent].PreToolUse as string;
      const payload = nativePayload(agent as Dialect, native, claudePayload("PreToolUse", bash("ls")));
      const request = readRequest(agent, { ...payload, hook_event_name: native });
      assert.ok(request);
      const said = answer(request, failClosed(request, "Blocked: broken."));
      const verdict = interpret(
        "PreToolUse",
        { ...said, signal: null, timedOut: false },
        {
          dialect: agent as Dialect,
          onFailure: "continue",
          native: { event: native, payload },
        },
      );
      assert.ok(blocks(verdict), JSON.stringify(verdict));
      assert.deepEqual(failClosed({ hook: "before_agent_finalize" }, "x"), {});
    });
  });
}
