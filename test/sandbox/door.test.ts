import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { parseRule } from "../../src/permissions/rules.js";
import type { ApprovalRequest } from "../../src/runtime/types.js";
import { createBashSandbox } from "../../src/sandbox/bash.js";
import { resetSandbox, sandboxAvailability } from "../../src/sandbox/runtime.js";
import { DEFAULT_SANDBOX_SETTINGS } from "../../src/sandbox/settings.js";
import { createBashTool } from "../../src/tools/builtin/bash.js";
import { testGatehouse } from "../runtime/helpers.js";

const availability = sandboxAvailability();
const skip = availability.available ? false : `the sandbox is unavailable here: ${availability.reason}`;
// `.invalid` never resolves: a host that is allowed by mistake still sends nothing anywhere.
const HOST = "gatehouse-sandbox-test.invalid";

describe("a sandbox refusal through the tool door", { skip }, () => {
  test("a host no list names goes to the approver as a WebFetch of that host; refused, the model reads the proxy's refusal and the audit keeps a decision without the host", async (t) => {
    const project = realpathSync(mkdtempSync(join(tmpdir(), "gatehouse-sandbox-door-")));
    t.after(async () => {
      rmSync(project, { recursive: true, force: true });
      await resetSandbox();
    });
    const sandbox = createBashSandbox({ projectDir: project, settings: DEFAULT_SANDBOX_SETTINGS });
    const asked: ApprovalRequest[] = [];
    const command = `curl -s -m 10 -o /dev/null -w 'status %{http_code}' http://${HOST}/`;
    const { gatehouse, store } = testGatehouse(
      { runs: [{ turns: [{ toolCalls: [{ name: "Bash", input: { command } }] }, { text: "{{lastToolResult}}" }] }] },
      {
        tools: [createBashTool({ sandbox })],
        config: { cwd: project },
        approver: async (request) => {
          asked.push(request);
          return request.toolName === "Bash" ? "allow-once" : "deny";
        },
      },
    );
    const result = await gatehouse.run({ prompt: "fetch" });
    assert.deepEqual(
      asked.map((a) => a.toolName),
      ["Bash", "WebFetch"],
    );
    assert.match(asked[1]?.title ?? "", new RegExp(`connect to ${HOST.replaceAll(".", "\\.")}:80`));
    assert.match(result.reply ?? "", /status 403/);
    const records = await store.listAudit({ runId: result.runId });
    assert.ok(
      records.some((r) => r.pluginId === "sandbox" && r.outcome === "deny" && r.category === "sandbox:network"),
      JSON.stringify(records),
    );
    assert.ok(!JSON.stringify(records).includes(HOST), "no host in the audit trail");
  });

  test("a read of a Read-denied file and a write outside the project are tool errors for the model and one sandbox:filesystem decision each in the audit, with no path; a write inside the project is none", async (t) => {
    const base = realpathSync(mkdtempSync(join(tmpdir(), "gatehouse-sandbox-fs-")));
    const project = join(base, "project");
    mkdirSync(project);
    t.after(async () => {
      rmSync(base, { recursive: true, force: true });
      await resetSandbox();
    });
    writeFileSync(join(project, "vault.env"), "TOKEN=CANARY-door-4411\n");
    const parsed = parseRule("Read(./vault.env)", "deny");
    assert.ok(typeof parsed !== "string");
    const rule = {
      behavior: "deny",
      rule: "Read(./vault.env)",
      parsed,
      id: "t.deny.0",
      source: "project",
      baseDir: project,
    } as const;
    const sandbox = createBashSandbox({
      projectDir: project,
      homeDir: join(base, "home"),
      settings: DEFAULT_SANDBOX_SETTINGS,
      rules: [rule],
    });
    const commands = ["cat ./vault.env", `cp ./payload.txt ${base}/outside.txt`, "echo inside > ./inside.txt"];
    writeFileSync(join(project, "payload.txt"), "payload\n");
    const { gatehouse, store } = testGatehouse(
      {
        runs: commands.map((command) => ({
          match: command.slice(0, 8),
          turns: [{ toolCalls: [{ name: "Bash", input: { command } }] }, { text: "{{lastToolResult}}" }],
        })),
      },
      { tools: [createBashTool({ sandbox })], config: { cwd: project }, approver: async () => "allow-once" },
    );
    const audited: string[][] = [];
    const replies: string[] = [];
    for (const command of commands) {
      const result = await gatehouse.run({ prompt: command.slice(0, 8) });
      replies.push(result.reply ?? "");
      await gatehouse.engine.drain();
      const records = await store.listAudit({ runId: result.runId });
      audited.push(records.filter((r) => r.pluginId === "sandbox").map((r) => `${r.outcome} ${r.category}`));
      assert.ok(
        !JSON.stringify(records).includes("vault") && !JSON.stringify(records).includes("outside"),
        JSON.stringify(records),
      );
    }
    assert.match(replies[0] ?? "", /Permission denied/);
    assert.ok(!replies[0]?.includes("CANARY-door-4411"));
    assert.match(replies[1] ?? "", /Read-only file system/);
    assert.deepEqual(audited, [["deny sandbox:filesystem"], ["deny sandbox:filesystem"], []]);
  });
});
