import assert from "node:assert/strict";
import { join } from "node:path";
import { filesContaining } from "../examples/readme-commands.js";
import { type CliResult, gatehouse, tempProjects } from "./helpers.js";

/**
 * The eleven paths of issue 11, tried through the CLI as a user (or an attacker) would. Each
 * project has its own temp folder (`TMPDIR`) inside it, so that everything a run leaves on disk
 * — the data folder and any temporary file — is searched.
 */
export function doorProjects(): (files: Record<string, unknown>) => Promise<DoorProject> {
  const fresh = tempProjects();
  return async (files) => {
    const cwd = await fresh({ ...files, "tmp/.keep": "" });
    return {
      cwd,
      run: (args, input) =>
        gatehouse(args, { cwd, env: { TMPDIR: join(cwd, "tmp") }, ...(input === undefined ? {} : { input }) }),
    };
  };
}

export interface DoorProject {
  readonly cwd: string;
  run(args: readonly string[], input?: string): Promise<CliResult>;
}

/** The one JSON line a `--json` run printed. */
export function resultOf(r: CliResult): Record<string, unknown> {
  const lines = r.stdout.split("\n").filter(Boolean);
  assert.equal(lines.length, 1, `one JSON line expected, got: ${r.stdout}\n${r.stderr}`);
  return JSON.parse(lines[0] as string) as Record<string, unknown>;
}

/** `text` is in no output of `results`, and in no file of the data folder or the temp folder. */
export async function assertNowhere(project: DoorProject, text: string, results: readonly CliResult[]): Promise<void> {
  for (const r of results) {
    assert.ok(!r.stdout.includes(text), `stdout holds ${text}: ${r.stdout}`);
    assert.ok(!r.stderr.includes(text), `stderr holds ${text}: ${r.stderr}`);
  }
  for (const dir of [".gatehouse", "tmp"])
    assert.deepEqual(await filesContaining(join(project.cwd, dir), text), [], `${dir} holds ${text}`);
}
