import { mkdtemp, readFile, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { TestContext } from "node:test";
import { type ToolContext, ToolError } from "../../src/tools/types.js";

/** A fresh temp directory, removed when the test ends. Real path, so it compares equal to tool output. */
export async function tempDir(t: TestContext): Promise<string> {
  const dir = await realpath(await mkdtemp(path.join(tmpdir(), "gatehouse-tools-")));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

export function toolCtx(cwd: string, signal: AbortSignal = new AbortController().signal): ToolContext {
  return { cwd, signal };
}

/**
 * True when the process is gone or a zombie: PID 1 in this sandbox does not reap orphans, so a
 * killed grandchild can linger as Z and `kill(pid, 0)` would still call it alive. A process that
 * is exiting has closed its pipes before the kernel marks it a zombie, so the tool can return a
 * moment before its killed grandchild's state changes: watch /proc until it does, for at most
 * `withinMs` — a process that survives the kill still fails the check.
 */
export async function processIsDead(pid: number, withinMs = 2000): Promise<boolean> {
  const deadline = performance.now() + withinMs;
  for (;;) {
    if (await goneOrZombie(pid)) return true;
    if (performance.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

async function goneOrZombie(pid: number): Promise<boolean> {
  let stat: string;
  try {
    stat = await readFile(`/proc/${pid}/stat`, "utf8");
  } catch {
    return true;
  }
  const state = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0];
  return state === "Z" || state === "X";
}

/** Awaits a promise that must reject with a ToolError whose message matches. */
export async function toolError(promise: Promise<unknown>, message: RegExp): Promise<ToolError> {
  try {
    await promise;
  } catch (err) {
    if (!(err instanceof ToolError)) throw err;
    if (!message.test(err.message))
      throw new Error(`ToolError message ${JSON.stringify(err.message)} does not match ${message}`);
    return err;
  }
  throw new Error(`expected a ToolError matching ${message}, but the call succeeded`);
}
