import assert from "node:assert/strict";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
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
});
