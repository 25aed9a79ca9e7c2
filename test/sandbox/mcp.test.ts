import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { createBashSandbox } from "../../src/sandbox/bash.js";
import { resetSandbox, sandboxAvailability } from "../../src/sandbox/runtime.js";
import { DEFAULT_SANDBOX_SETTINGS } from "../../src/sandbox/settings.js";
import { connectMcpServers } from "../../src/tools/mcp.js";
import { tempDir, toolCtx } from "../tools/helpers.js";

const FIXTURE = fileURLToPath(new URL("../tools/fixtures/mcp-server.mjs", import.meta.url));
const availability = sandboxAvailability();
const skip = availability.available ? false : `the sandbox is unavailable here: ${availability.reason}`;

/** Whether the host's process `pid` is the fixture server (a PID seen inside a namespace names another process). */
function hostProcessIsFixture(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("mcp-server.mjs");
  } catch {
    return false;
  }
}

describe("MCP stdio servers and the sandbox", () => {
  test('a server with "sandbox": true runs in the sandbox (its own PID namespace); without it, on the host', {
    skip,
  }, async (t) => {
    const dir = await tempDir(t);
    const sandbox = createBashSandbox({ projectDir: dir, settings: DEFAULT_SANDBOX_SETTINGS });
    const server = { command: process.execPath, args: [FIXTURE, "--stdio"] };
    const conn = await connectMcpServers({ boxed: { ...server, sandbox: true }, open: server }, { cwd: dir, sandbox });
    t.after(async () => {
      await conn.close();
      await resetSandbox();
    });
    assert.deepEqual(conn.diagnostics, []);
    const whereami = async (name: string) => {
      const found = conn.tools.find((tool) => tool.name === `mcp__${name}__whereami`);
      assert.ok(found);
      const out = (await found.execute({}, toolCtx(dir))) as [{ text: string }];
      return JSON.parse(out[0].text) as { pid: number };
    };
    const boxed = await whereami("boxed");
    const open = await whereami("open");
    assert.ok(hostProcessIsFixture(open.pid), "control: the unsandboxed server's pid is its host pid");
    assert.ok(!hostProcessIsFixture(boxed.pid), "the sandboxed server sees a PID namespace of its own");
  });

  test('a server with "sandbox": true is not started where the sandbox is off', async (t) => {
    const dir = await tempDir(t);
    const sandbox = createBashSandbox({ projectDir: dir, settings: { ...DEFAULT_SANDBOX_SETTINGS, enabled: false } });
    const conn = await connectMcpServers(
      { boxed: { command: process.execPath, args: [FIXTURE, "--stdio"], sandbox: true } },
      { cwd: dir, sandbox },
    );
    t.after(() => conn.close());
    assert.equal(conn.tools.length, 0);
    assert.match(conn.diagnostics.map((d) => d.message).join("\n"), /"sandbox": true, but the sandbox is off/);
  });
});
