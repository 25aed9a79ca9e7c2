import { type ChildProcess, spawn } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after } from "node:test";
import { fileURLToPath } from "node:url";

/** Set in every CLI the helpers start: the trust tests clear it. */
export const TRUST_ENV = "GATEHOUSE_TRUST_WORKSPACE";

export const MAIN = fileURLToPath(new URL("../../src/cli/main.ts", import.meta.url));
/** tsx's loader by absolute URL, so the CLI runs from a project folder outside the repository. */
const TSX = import.meta.resolve("tsx");

export interface CliResult {
  readonly code: number | null;
  /** The signal that ended the process, when one did (then `code` is null). */
  readonly signal?: NodeJS.Signals;
  readonly stdout: string;
  readonly stderr: string;
}

export interface CliOptions {
  readonly cwd: string;
  /**
   * Added to a minimal environment (PATH, HOME in the project, the project trusted): nothing leaks
   * in from the test runner. `GATEHOUSE_TRUST_WORKSPACE: ""` leaves the project untrusted.
   */
  readonly env?: Record<string, string>;
  /** Written to stdin, which is then closed; without it stdin is closed at once. */
  readonly input?: string;
  /** Leave stdin open after `input`, to type more from `onStderr` (the child's stdin). */
  readonly keepStdinOpen?: boolean;
  /** Called with all of stderr so far each time more arrives (to signal the child at the right moment). */
  readonly onStderr?: (soFar: string, child: ChildProcess) => void;
  /** The same for stdout. */
  readonly onStdout?: (soFar: string, child: ChildProcess) => void;
}

/** The argv that runs `gatehouse …` (node, the loader, the CLI), for tests that start it themselves (in tmux). */
export function cliArgv(args: readonly string[]): string[] {
  return [process.execPath, "--import", TSX, MAIN, ...args];
}

/** Runs `gatehouse …` as a child process, as a user would. */
export function gatehouse(args: readonly string[], options: CliOptions): Promise<CliResult> {
  return runCli([], args, options);
}

/** The CLI as a child process, with extra modules preloaded (e.g. one that fakes a terminal). */
export function runCli(preload: readonly string[], args: readonly string[], options: CliOptions): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const imports = [TSX, ...preload].flatMap((m) => ["--import", m]);
    const child = spawn(process.execPath, [...imports, MAIN, ...args], {
      cwd: options.cwd,
      // The test's project is trusted (docs/trust.md) unless a test says otherwise, as the trust tests do.
      env: { PATH: process.env.PATH ?? "", HOME: options.cwd, [TRUST_ENV]: "1", ...options.env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      stdout += d;
      options.onStdout?.(stdout, child);
    });
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      stderr += d;
      options.onStderr?.(stderr, child);
    });
    child.on("error", reject);
    child.on("close", (code, signal) => resolve({ code, stdout, stderr, ...(signal === null ? {} : { signal }) }));
    if (options.keepStdinOpen) child.stdin.write(options.input ?? "");
    else child.stdin.end(options.input ?? "");
  });
}

/** A temporary project folder with the given files (JSON values are serialized). */
export async function project(files: Record<string, unknown> = {}): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), "gatehouse-cli-"));
  for (const [name, content] of Object.entries(files)) await put(dir, name, content);
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

export async function put(dir: string, name: string, content: unknown): Promise<string> {
  const file = join(dir, name);
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, typeof content === "string" ? content : JSON.stringify(content, null, 2));
  return file;
}

/**
 * Temporary projects for one describe block, all removed after it. Call it inside the
 * describe: it registers the clean-up there.
 */
export function tempProjects(): (files?: Record<string, unknown>) => Promise<string> {
  const made: { remove(): Promise<void> }[] = [];
  after(() => Promise.all(made.map((p) => p.remove())));
  return async (files = {}) => {
    const p = await project(files);
    made.push(p);
    return p.dir;
  };
}
