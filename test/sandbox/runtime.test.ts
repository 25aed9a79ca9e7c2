import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { sandboxPolicy } from "../../src/sandbox/policy.js";
import type { SandboxRefusalKind } from "../../src/sandbox/refusals.js";
import { resetSandbox, sandboxAvailability, wrapInSandbox } from "../../src/sandbox/runtime.js";
import { DEFAULT_SANDBOX_SETTINGS, type SandboxSettings } from "../../src/sandbox/settings.js";

const availability = sandboxAvailability();
const skip = availability.available ? false : `the sandbox is unavailable here: ${availability.reason}`;
// `.invalid` never resolves: a host allowed by mistake still sends nothing anywhere.
const HOST = "gatehouse-runtime-test.invalid";

function project(t: { after(fn: () => unknown): void }): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "gatehouse-sandbox-runtime-")));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function policyFor(dir: string, network: Partial<SandboxSettings["network"]> = {}) {
  const settings = { ...DEFAULT_SANDBOX_SETTINGS, network: { ...DEFAULT_SANDBOX_SETTINGS.network, ...network } };
  return sandboxPolicy(settings, [], { projectDir: dir, homeDir: join(dir, "home") });
}

/** Runs a wrapped command to its end: its stdout, then the release. */
function run(argv: readonly string[], cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0] as string, argv.slice(1), { cwd, stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.on("error", reject);
    child.on("close", () => resolve(out));
  });
}

describe("the sandbox runtime shared by a process's commands", { skip }, () => {
  test("commands of two projects wrapped at the same moment, after a third project's command, each reach the network check and each refusal is reported", async (t) => {
    t.after(() => resetSandbox());
    const [first, a, b] = [project(t), project(t), project(t)];
    const earlier = await wrapInSandbox("true", { shell: "/bin/sh", cwd: first, policy: policyFor(first) });
    await run(earlier.argv, first);
    earlier.release();
    // Wrapped together: neither may restart the runtime under the other (a restart left a
    // command with a proxy that had no policy: refused, and no refusal reported).
    const refused: Record<string, SandboxRefusalKind[]> = { a: [], b: [] };
    const command = `curl -s -m 20 -o /dev/null -w 'status %{http_code}' http://${HOST}/`;
    const wrapped = await Promise.all(
      (["a", "b"] as const).map((name) => {
        const cwd = name === "a" ? a : b;
        return wrapInSandbox(command, {
          shell: "/bin/sh",
          cwd,
          policy: policyFor(cwd),
          ask: async () => false,
          refused: (kind) => refused[name]?.push(kind),
        });
      }),
    );
    const outputs = await Promise.all(wrapped.map((w, n) => run(w.argv, n === 0 ? a : b)));
    for (const w of wrapped) w.release();
    assert.deepEqual(outputs, ["status 403", "status 403"]);
    assert.ok(refused.a?.includes("network"), JSON.stringify(refused));
    assert.ok(refused.b?.includes("network"), JSON.stringify(refused));
  });

  test("a command whose socket settings differ waits for the commands running with other settings to end, and one whose signal aborts meanwhile is not started", async (t) => {
    t.after(() => resetSandbox());
    const [a, b, c] = [project(t), project(t), project(t)];
    const running = await wrapInSandbox("true", { shell: "/bin/sh", cwd: a, policy: policyFor(a) });
    const order: string[] = [];
    const waiting = wrapInSandbox("true", {
      shell: "/bin/sh",
      cwd: b,
      policy: policyFor(b, { allowLocalBinding: true }),
    }).then((w) => {
      order.push("admitted");
      return w;
    });
    const cancel = new AbortController();
    const cancelled = wrapInSandbox("true", {
      shell: "/bin/sh",
      cwd: c,
      policy: policyFor(c, { allowLocalBinding: true }),
      signal: cancel.signal,
    });
    // A command with the running settings is admitted after both were looked at, and neither was.
    const same = await wrapInSandbox("true", { shell: "/bin/sh", cwd: a, policy: policyFor(a) });
    same.release();
    assert.equal(order.length, 0, "neither waiting command was admitted");
    cancel.abort();
    await assert.rejects(cancelled, /running with other socket settings .* this command was not started/);
    order.push("released");
    running.release();
    const admitted = await waiting;
    assert.deepEqual(order, ["released", "admitted"]);
    assert.equal((await run(admitted.argv, b)).trim(), "");
    admitted.release();
  });

  test("a program that started the sandbox and has no signal handler of its own still ends on its first SIGTERM (the runtime's cleanup listens for it)", async (t) => {
    const dir = project(t);
    const runtimeModule = new URL("../../src/sandbox/runtime.ts", import.meta.url).href;
    const policyModule = new URL("../../src/sandbox/policy.ts", import.meta.url).href;
    const settingsModule = new URL("../../src/sandbox/settings.ts", import.meta.url).href;
    const program = join(dir, "embedder.mts");
    writeFileSync(
      program,
      `import { wrapInSandbox } from ${JSON.stringify(runtimeModule)};
import { sandboxPolicy } from ${JSON.stringify(policyModule)};
import { DEFAULT_SANDBOX_SETTINGS } from ${JSON.stringify(settingsModule)};
const policy = sandboxPolicy(DEFAULT_SANDBOX_SETTINGS, [], { projectDir: ${JSON.stringify(dir)}, homeDir: ${JSON.stringify(dir)} });
const wrapped = await wrapInSandbox("true", { shell: "/bin/sh", cwd: ${JSON.stringify(dir)}, policy });
wrapped.release();
setInterval(() => {}, 60_000);
process.stdout.write("started\\n");
`,
    );
    // From this checkout, where tsx resolves.
    const child = spawn(process.execPath, ["--import", "tsx", program], { stdio: ["ignore", "pipe", "inherit"] });
    t.after(() => child.kill("SIGKILL"));
    const ended = new Promise<NodeJS.Signals | number | null>((resolve) =>
      child.on("exit", (code, signal) => resolve(signal ?? code)),
    );
    const started = new Promise<void>((resolve) =>
      child.stdout.on("data", (chunk: Buffer) => chunk.includes("started") && resolve()),
    );
    assert.equal(await Promise.race([started.then(() => "started"), ended]), "started");
    child.kill("SIGTERM");
    assert.equal(await ended, "SIGTERM");
  });
});
