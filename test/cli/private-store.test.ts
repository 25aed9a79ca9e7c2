import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { chmodSync, existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { cliArgv, gatehouse, tempProjects } from "./helpers.js";

const modeOf = (path: string) => statSync(path).mode & 0o777;

/** The data folder 0700; the database and whichever of its -wal and -shm exist 0600. */
function assertPrivate(dir: string, what: string): void {
  const data = join(dir, ".gatehouse");
  const db = join(data, "gatehouse.db");
  assert.equal(modeOf(data).toString(8), "700", `${what}: .gatehouse/`);
  assert.equal(modeOf(db).toString(8), "600", `${what}: gatehouse.db`);
  for (const side of ["-wal", "-shm"])
    if (existsSync(`${db}${side}`)) assert.equal(modeOf(`${db}${side}`).toString(8), "600", `${what}: ${side}`);
}

/**
 * A long-running command (serve, console) in a project, with the umask a user's shell has (022):
 * once `ready` shows on stdout or stderr, `whileRunning` looks; then it is stopped and waited for.
 */
async function whileServing(dir: string, args: string[], ready: RegExp, whileRunning: () => void): Promise<void> {
  const [node, ...rest] = cliArgv(args);
  const child = spawn("/bin/sh", ["-c", 'umask 022 && exec "$@"', "sh", node as string, ...rest], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? "", HOME: dir },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
  let output = "";
  await new Promise<void>((resolve, reject) => {
    const look = (d: string) => {
      output += d;
      if (ready.test(output)) resolve();
    };
    child.stdout?.setEncoding("utf8").on("data", look);
    child.stderr?.setEncoding("utf8").on("data", look);
    child.on("close", () => reject(new Error(`${args[0]} exited before it was ready: ${output}`)));
  });
  try {
    whileRunning();
  } finally {
    child.kill("SIGKILL");
    await exited;
  }
}

describe("every command that creates the store creates it private", () => {
  const projects = tempProjects();
  const config = { "gatehouse.json": { model: "scripted:echo" } };

  test("keys create, as the first command in a project: .gatehouse/ 0700, gatehouse.db 0600", async () => {
    const dir = await projects(config);
    const created = await gatehouse(["keys", "create", "--principal", "alice"], { cwd: dir });
    assert.equal(created.code, 0, created.stderr);
    assertPrivate(dir, "keys create");
  });

  test("serve, as the first command in a project: private while it serves", async () => {
    const dir = await projects(config);
    await whileServing(dir, ["serve", "--port", "0"], /serving on http/, () => assertPrivate(dir, "serve"));
  });

  test("console, as the first command in a project: private while it serves", async () => {
    const dir = await projects(config);
    await whileServing(dir, ["console", "--port", "0"], /\/console\/\n/, () => assertPrivate(dir, "console"));
  });

  test("a store an older Gatehouse left open to others (0755 folder, 0644 files) is made private by the next command", async () => {
    const dir = await projects(config);
    assert.equal((await gatehouse(["keys", "create", "--principal", "alice"], { cwd: dir })).code, 0);
    const data = join(dir, ".gatehouse");
    chmodSync(data, 0o755);
    for (const file of ["gatehouse.db", "gatehouse.db-wal", "gatehouse.db-shm"])
      if (existsSync(join(data, file))) chmodSync(join(data, file), 0o644);
    const listed = await gatehouse(["keys", "list"], { cwd: dir });
    assert.equal(listed.code, 0, listed.stderr);
    assertPrivate(dir, "keys list after loosening");
  });
});
