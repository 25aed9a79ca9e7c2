import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, test } from "node:test";
import { importOnDemand } from "../../scripts/on-demand.js";
import { gatehouse, MAIN, tempProjects } from "./helpers.js";
import { gatehouseInProcess } from "./in-process.js";

const { default: OpenAI } = await importOnDemand<typeof import("openai")>("openai");

const TSX = import.meta.resolve("tsx");

/** `gatehouse serve --port 0` in a project; resolves with its URL once it listens. */
function serve(
  dir: string,
  args: string[] = [],
): { child: ChildProcess; url: Promise<string>; stderr: () => string; exit: Promise<number | null> } {
  const child = spawn(process.execPath, ["--import", TSX, MAIN, "serve", "--port", "0", ...args], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? "", HOME: dir },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  const url = new Promise<string>((resolve, reject) => {
    child.stderr?.setEncoding("utf8").on("data", (d: string) => {
      stderr += d;
      const m = /serving on (http:\/\/\S+)/.exec(stderr);
      if (m) resolve(m[1] as string);
    });
    child.on("close", () => reject(new Error(`serve exited: ${stderr}`)));
  });
  url.catch(() => undefined);
  const exit = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  return { child, url, stderr: () => stderr, exit };
}

/** Waits (on the event loop, not a timer) until `check` holds. */
async function until(check: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((r) => setTimeout(r, 20));
}

/** A plugin that holds every run at its prompt gate until a file appears, telling the test it started. */
const HOLD_PLUGIN = `
import { existsSync, writeFileSync } from "node:fs";
export default {
  id: "hold",
  setup(api) {
    api.on("before_agent_run", async () => {
      writeFileSync("started", "");
      while (!existsSync("release")) await new Promise((r) => setTimeout(r, 10));
      return undefined;
    });
  },
};
`;

describe("gatehouse serve and gatehouse keys (the CLI, as a user runs them)", () => {
  const projectWith = tempProjects();

  test("keys create prints a key once; keys list never shows it; the server then needs it; keys revoke ends it", async () => {
    const dir = await projectWith({ "gatehouse.json": { model: "scripted:echo" } });
    const none = await gatehouse(["keys", "list"], { cwd: dir });
    assert.equal(none.code, 0, none.stderr);
    assert.equal(none.stdout, "no API keys (create one with: gatehouse keys create --principal NAME)\n");
    const created = await gatehouseInProcess(["keys", "create", "--principal", "alice", "--name", "laptop"], {
      cwd: dir,
    });
    assert.equal(created.code, 0, created.stderr);
    const key = created.stdout.trim();
    assert.match(key, /^ghk_[a-f0-9]{16}_/);
    const shown = await gatehouseInProcess(["keys", "list"], { cwd: dir });
    assert.match(shown.stdout, /^ID +PRINCIPAL +NAME +ROLE +CREATED +STATUS\n\S+ +alice +laptop +- +\S+ +active\n$/);
    const listed = await gatehouseInProcess(["keys", "list", "--json"], { cwd: dir });
    const keys = JSON.parse(listed.stdout) as { id: string; principal: string; name: string }[];
    assert.equal(keys[0]?.principal, "alice");
    assert.equal(keys[0]?.name, "laptop");
    assert.ok(!listed.stdout.includes(key.split("_")[2] as string));

    const server = serve(dir);
    try {
      const url = await server.url;
      const client = new OpenAI({ apiKey: key, baseURL: `${url}/v1`, maxRetries: 0 });
      const reply = await client.chat.completions.create({
        model: "gatehouse",
        messages: [{ role: "user", content: "ping" }],
      });
      assert.equal(reply.choices[0]?.message.content, "ping");
      const anonymous = await fetch(`${url}/v1/models`);
      assert.equal(anonymous.status, 401);
      const revoked = await gatehouseInProcess(["keys", "revoke", keys[0]?.id as string], { cwd: dir });
      assert.equal(revoked.code, 0, revoked.stderr);
      const after = await client.models.list().catch((e: unknown) => e);
      assert.ok(after instanceof OpenAI.AuthenticationError);
    } finally {
      server.child.kill("SIGTERM");
      assert.equal(await server.exit, 0);
    }
    const again = await gatehouseInProcess(["keys", "revoke", keys[0]?.id as string], { cwd: dir });
    assert.equal(again.code, 1);
  });

  test("serve prints the console's address beside its own at startup, and not when the console is turned off", async () => {
    const dir = await projectWith({ "gatehouse.json": { model: "scripted:echo" } });
    const served = serve(dir);
    try {
      const url = await served.url;
      await until(() => served.stderr().includes("/console/"));
      assert.match(served.stderr(), new RegExp(`^gatehouse: console: ${url}/console/$`, "m"));
      assert.equal((await fetch(`${url}/console/`)).status, 200, "the address printed is the console");
    } finally {
      served.child.kill("SIGTERM");
      assert.equal(await served.exit, 0);
    }
    const off = await projectWith({ "gatehouse.json": { model: "scripted:echo", server: { console: false } } });
    const quiet = serve(off);
    try {
      assert.equal((await fetch(`${await quiet.url}/console/`)).status, 404);
    } finally {
      quiet.child.kill("SIGTERM");
      assert.equal(await quiet.exit, 0);
    }
    assert.doesNotMatch(quiet.stderr(), /console:/);
  });

  test("serve refuses to listen beyond loopback while no key exists (exit 2)", async () => {
    const dir = await projectWith({ "gatehouse.json": { model: "scripted:echo" } });
    const refused = await gatehouse(["serve", "--host", "0.0.0.0", "--port", "0"], { cwd: dir });
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /refusing to listen on 0\.0\.0\.0 without an API key/);
  });

  test("SIGTERM: readiness turns unavailable, new runs get 503, the running run finishes and is answered, then the process exits 0", async () => {
    const dir = await projectWith({
      "gatehouse.json": {
        model: "scripted:echo",
        plugins: [{ path: "./hold.mjs", hooks: { allowConversationAccess: true } }],
      },
      "hold.mjs": HOLD_PLUGIN,
    });
    const server = serve(dir);
    const url = await server.url;
    const session = (await (
      await fetch(`${url}/v1/sessions`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" })
    ).json()) as { id: string };
    const running = fetch(`${url}/v1/sessions/${session.id}/runs`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ prompt: "finish me" }),
    });
    await until(() => existsSync(join(dir, "started")));
    server.child.kill("SIGTERM");
    await until(async () => (await fetch(`${url}/readyz`)).status === 503);
    const refused = await fetch(`${url}/v1/sessions/${session.id}/runs`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ prompt: "too late" }),
    });
    assert.equal(refused.status, 503);
    await writeFile(join(dir, "release"), "");
    const answered = (await (await running).json()) as { outcome: string; reply: string };
    assert.deepEqual([answered.outcome, answered.reply], ["completed", "finish me"]);
    assert.equal(await server.exit, 0);
    assert.match(server.stderr(), /shutting down/);
  });
});
