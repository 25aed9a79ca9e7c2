import { execFile } from "node:child_process";
import { mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * Claude Code's `CLAUDE_ENV_FILE`: a file SessionStart hooks append `export NAME=value` lines to,
 * whose variables later Bash calls of the session get. Gatehouse gives each SessionStart a fresh
 * private file, and once its hooks are done evaluates it with the shell (the hooks' own code,
 * with the environment they had) and keeps what it set. The Bash tool applies its own
 * environment policy to those variables too (docs/command-hooks.md): a hook cannot hand a
 * provider key to the model's commands unless `tools.bash.passEnv` allows it.
 */
export interface EnvFile {
  readonly path: string;
  /** The variables the file sets or changes, relative to `base`; then the file is removed. */
  collect(base: Readonly<Record<string, string>>): Promise<Record<string, string>>;
}

/** What the shell sets by itself, which no hook meant to export. */
const SHELL_OWN = new Set(["PWD", "OLDPWD", "SHLVL", "_"]);

/** How long evaluating the file may take: it holds exports, not work. */
const EVALUATE_TIMEOUT_MS = 5000;

export async function createEnvFile(): Promise<EnvFile> {
  const dir = await mkdtemp(join(tmpdir(), "gatehouse-env-"));
  const path = join(dir, "env.sh");
  await writeFile(path, "", { mode: 0o600 });
  return {
    path,
    async collect(base) {
      try {
        if ((await stat(path)).size === 0) return {};
        return diff(base, await evaluate(path, base));
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
  };
}

function evaluate(path: string, env: Readonly<Record<string, string>>): Promise<Record<string, string>> {
  return new Promise((resolve) => {
    execFile(
      "/bin/sh",
      ["-c", '. "$1" >/dev/null 2>&1; env -0', "gatehouse-env", path],
      { env, timeout: EVALUATE_TIMEOUT_MS, maxBuffer: 4 * 1024 * 1024, encoding: "utf8" },
      (error, stdout) => {
        // A file that does not evaluate sets nothing: the hook's exports are all or nothing.
        if (error) return resolve({ ...env });
        const out: Record<string, string> = {};
        for (const entry of stdout.split("\0")) {
          const eq = entry.indexOf("=");
          if (eq > 0) out[entry.slice(0, eq)] = entry.slice(eq + 1);
        }
        resolve(out);
      },
    );
  });
}

function diff(base: Readonly<Record<string, string>>, after: Record<string, string>): Record<string, string> {
  const set: Record<string, string> = {};
  for (const [name, value] of Object.entries(after))
    if (!SHELL_OWN.has(name) && base[name] !== value) set[name] = value;
  return set;
}
