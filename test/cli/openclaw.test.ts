import assert from "node:assert/strict";
import { cp, readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { gatehouse, tempProjects } from "./helpers.js";

/**
 * OpenClaw plugins through the CLI: a guard on `exec` against Gatehouse's Bash, a redactor and
 * a gate written for OpenClaw, OpenClaw's own documented examples, and a plugin from npm
 * (jasper-context-compactor, a devDependency).
 */

const FIXTURES = fileURLToPath(new URL("../plugins/fixtures/openclaw/", import.meta.url));

const GUARD = `import { definePluginEntry } from "openclaw/plugin-sdk/plugin-entry";

export default definePluginEntry({
  id: "exec-guard",
  name: "Exec guard",
  description: "Refuses destructive shell commands.",
  register(api) {
    api.on(
      "before_tool_call",
      (event) => {
        if (event.toolName !== "exec") return;
        if (/\\brm\\s+-rf\\b/.test(String(event.params.command))) return { block: true, blockReason: "rm -rf is not allowed" };
      },
      { matcher: ["exec"], registrationId: "no-rm-rf", priority: 10 },
    );
    api.on("gateway_start", () => api.logger.info("gateway up"));
  },
});
`;

/** A redactor on before_response_emit, a gate with metadata, a void after_tool_call observer. */
const POLICY = `const seen = [];
export default {
  id: "policy",
  register(api) {
    api.on("before_agent_run", (event) =>
      event.prompt.includes("payroll")
        ? { outcome: "block", reason: "hr-data", message: "Payroll questions go to HR.", category: "hr", metadata: { rule: "hr-1" } }
        : { outcome: "pass" });
    api.on("before_response_emit", (event) => ({
      allContent: event.allContent.map((t) => t.replace(/\\b\\d{4}-\\d{4}-\\d{4}-\\d{4}\\b/g, "[card]")),
    }));
    api.on("after_tool_call", (e) => seen.push(e.toolName));
    api.on("message_sending", (event) => ({ content: event.content, metadata: { footer: false } }));
  },
};
`;

const SCRIPT = {
  runs: [
    {
      match: "clean",
      turns: [
        { toolCalls: [{ name: "Bash", input: { command: "rm -rf victim" } }] },
        { text: "cleanup said: {{lastToolResult}}" },
      ],
    },
    {
      match: "card",
      turns: [
        { toolCalls: [{ name: "Bash", input: { command: "echo 4111-1111-1111-1111" } }] },
        { text: "card {{lastToolResult}}" },
      ],
    },
    { turns: [{ text: "echo: {{prompt}}" }] },
  ],
};

describe("OpenClaw plugins through the CLI", { concurrency: 3 }, () => {
  const fresh = tempProjects();

  test("an OpenClaw guard on exec blocks Gatehouse's Bash, and plugins inspect lists what has no meaning here", async () => {
    const cwd = await fresh({
      "plugins/exec-guard.mjs": GUARD,
      "script.json": SCRIPT,
      victim: "keep me",
      "gatehouse.json": { model: "scripted:script.json", plugins: [{ path: "plugins/exec-guard.mjs" }] },
    });
    const run = await gatehouse(["run", "-p", "clean up", "--json"], { cwd });
    assert.equal(run.code, 0, run.stderr);
    const result = JSON.parse(run.stdout) as { reply: string };
    assert.match(result.reply, /rm -rf is not allowed/);
    assert.equal(await readFile(join(cwd, "victim"), "utf8"), "keep me");
    assert.match(run.stderr, /exec-guard \(gateway_start\): OpenClaw hook "gateway_start" has no meaning in Gatehouse/);

    const inspect = await gatehouse(["plugins", "inspect", "--json"], { cwd });
    assert.equal(inspect.code, 0, inspect.stderr);
    const [plugin] = (JSON.parse(inspect.stdout) as { plugins: { registrations: object[]; diagnostics: object[] }[] })
      .plugins;
    assert.deepEqual(
      plugin?.registrations.map((r) => JSON.stringify(r)),
      [
        JSON.stringify({
          hook: "before_tool_call",
          id: "no-rm-rf",
          priority: 10,
          timeoutMs: 15000,
          failure: "closed",
          matcher: true,
        }),
      ],
    );
    assert.deepEqual(
      plugin?.diagnostics.map((d) => `${(d as { code: string; hook: string }).code}:${(d as { hook: string }).hook}`),
      ["no-meaning:gateway_start"],
    );
  });

  test("a redactor on before_response_emit and a gate with metadata work unchanged; a void observer's return value withholds nothing", async () => {
    const cwd = await fresh({
      "plugins/policy.mjs": POLICY,
      "script.json": SCRIPT,
      "gatehouse.json": {
        model: "scripted:script.json",
        plugins: [{ path: "plugins/policy.mjs", hooks: { allowConversationAccess: true } }],
        // Bash asks in default mode and nobody can answer: a rule lets the plugins decide.
        permissions: { allow: ["Bash"] },
      },
    });
    const blocked = await gatehouse(["run", "-p", "what is the payroll of Ann?", "--json"], { cwd });
    assert.equal(blocked.code, 3, blocked.stderr);
    const gate = JSON.parse(blocked.stdout) as { outcome: string; reply: string; blockedBy: { pluginId: string } };
    assert.equal(gate.outcome, "blocked");
    assert.match(gate.reply, /Payroll questions go to HR\./);
    assert.equal(gate.blockedBy.pluginId, "policy");
    // Reported once per hook: the gate's result, and message_sending's (the block's notice is delivered through it).
    assert.equal(
      blocked.stderr.match(/before_agent_run: result key "metadata" is OpenClaw's/g)?.length,
      1,
      blocked.stderr,
    );
    assert.equal(blocked.stderr.match(/"metadata" is OpenClaw's/g)?.length, 2, blocked.stderr);
    assert.doesNotMatch(blocked.stderr, /invalid result/);

    const redacted = await gatehouse(["run", "-p", "show the card", "--json"], { cwd });
    assert.equal(redacted.code, 0, redacted.stderr);
    const answer = JSON.parse(redacted.stdout) as { reply: string; sessionId: string };
    assert.match(answer.reply, /card \[card\]/);
    assert.doesNotMatch(answer.reply, /4111/);
    const shown = await gatehouse(["sessions", "show", answer.sessionId], { cwd });
    assert.doesNotMatch(shown.stdout.split("card [card]")[1] ?? "", /4111-1111-1111-1111/);
  });

  test("OpenClaw's documented hook-demo loads from its folder (openclaw.extensions, manifest, SDK import) and claims a turn", async () => {
    const cwd = await fresh({
      "gatehouse.json": {
        model: "scripted:echo",
        plugins: [
          { path: "plugins/hook-demo", hooks: { allowConversationAccess: true } },
          { path: "plugins/exec-approval.ts" },
          { path: "plugins/maintenance-access.ts" },
        ],
      },
    });
    await cp(join(FIXTURES, "hook-demo"), join(cwd, "plugins/hook-demo"), { recursive: true });
    await cp(join(FIXTURES, "docs-examples/exec-approval.ts"), join(cwd, "plugins/exec-approval.ts"));
    await cp(join(FIXTURES, "docs-examples/maintenance-access.ts"), join(cwd, "plugins/maintenance-access.ts"));
    const claimed = await gatehouse(["run", "-p", "hook-demo-check please"], { cwd });
    assert.equal(claimed.code, 0, claimed.stderr);
    assert.equal(claimed.stdout, "Hook is working.\n");
    // eligibleTriggers: ["user"]: a cron run is not claimed.
    const cron = await gatehouse(["run", "-p", "hook-demo-check", "--trigger", "cron"], { cwd });
    assert.equal(cron.stdout, "hook-demo-check\n");

    const inspect = await gatehouse(["plugins", "list", "--json"], { cwd });
    const listed = JSON.parse(inspect.stdout) as { id: string; status: string; hooks: number; problems: number }[];
    assert.deepEqual(
      listed.map((p) => [p.id, p.status, p.hooks]),
      [
        ["hook-demo", "loaded", 1],
        ["exec-approval", "loaded", 1],
        ["maintenance-access", "loaded", 1],
      ],
    );
    // The example's /fix command answers outside its maintenance agent, as it does in OpenClaw.
    const fix = await gatehouse(["run", "-p", "/fix the build"], { cwd });
    assert.equal(fix.stdout, "This command is only available in the maintenance conversation.\n");
  });

  test("OpenClaw's requireApproval example on exec (with severity) asks before Bash runs; without a terminal it is denied", async () => {
    const cwd = await fresh({
      "script.json": SCRIPT,
      "gatehouse.json": { model: "scripted:script.json", plugins: [{ path: "plugins/exec-approval.ts" }] },
    });
    await cp(join(FIXTURES, "docs-examples/exec-approval.ts"), join(cwd, "plugins/exec-approval.ts"));
    const run = await gatehouse(["run", "-p", "show the card", "--json"], { cwd });
    assert.equal(run.code, 0, run.stderr);
    assert.doesNotMatch((JSON.parse(run.stdout) as { reply: string }).reply, /4111/);
    assert.match(run.stderr, /"requireApproval\.severity" is OpenClaw's/);
  });

  test("jasper-context-compactor from npm loads as a package: its commands answer, its config is checked against its manifest", async () => {
    const plugin = { package: "jasper-context-compactor", hooks: { allowConversationAccess: true } };
    const cwd = await fresh({
      "gatehouse.json": { model: "scripted:echo", plugins: [{ ...plugin, config: { maxTokens: 2000 } }] },
    });
    await cp(
      fileURLToPath(new URL("../../node_modules/jasper-context-compactor", import.meta.url)),
      join(cwd, "node_modules/jasper-context-compactor"),
      { recursive: true },
    );
    const inspect = await gatehouse(["plugins", "inspect", "context-compactor", "--json"], { cwd });
    assert.equal(inspect.code, 0, inspect.stderr);
    const [report] = (
      JSON.parse(inspect.stdout) as {
        plugins: { registrations: { hook: string }[]; diagnostics: { message: string }[] }[];
      }
    ).plugins;
    assert.deepEqual(
      report?.registrations.map((r) => r.hook),
      ["before_agent_start"],
    );
    assert.match(report?.diagnostics[0]?.message ?? "", /api\.registerGatewayMethod has no meaning/);

    const command = await gatehouse(["run", "-p", "/compact-now"], { cwd });
    assert.equal(command.code, 0, command.stderr);
    assert.match(command.stdout, /Context compaction cache cleared/);

    const bad = await fresh({
      "gatehouse.json": { model: "scripted:echo", plugins: [{ ...plugin, config: { maxTokens: "lots" } }] },
    });
    await cp(join(cwd, "node_modules"), join(bad, "node_modules"), { recursive: true });
    const refused = await gatehouse(["run", "-p", "hi"], { cwd: bad });
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /config\.maxTokens: Invalid input: expected number.*openclaw\.plugin\.json/);
  });
});
