// `gatehouse hook <agent>`, `gatehouse hook install <agent>` and the warm-path daemon
// (`gatehouse hook serve`). The hook command is run by another agent on every event, so this
// module stays light: the socket client and the payload reader only. The project's plugins are
// loaded (hook-guard.ts) only on the cold path and in the daemon.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { Argument, type Command } from "commander";
import type { HookAnswer } from "../host-hooks/answer.js";
import { AGENTS, type Agent, isAgent } from "../host-hooks/hosts.js";
import { askDaemon, claimStart, privateFolder, socketPathFor } from "../host-hooks/warm.js";
import { EXIT } from "./exit.js";

/** How long the daemon waits for a call before it ends. */
export const DEFAULT_IDLE_SECONDS = 600;
/** How long a call waits for the daemon before answering in-process. */
const DAEMON_TIMEOUT_MS = 120_000;

const HOOK_HELP = `
Reads the agent's hook payload on stdin, runs the project's Gatehouse plugins and permission
rules on the catalog hook it maps to (PreToolUse → before_tool_call, PostToolUse →
after_tool_call, UserPromptSubmit → before_input, Stop → before_agent_finalize; the agent's own
names for them), and answers in the agent's protocol. A plugin that throws blocks; a project
whose plugins cannot be loaded blocks every call that can be blocked.

The first call starts a background process for the project (socket .gatehouse/hook.sock,
private to you) that keeps the plugins loaded and ends after ${DEFAULT_IDLE_SECONDS} s without a call
(GATEHOUSE_HOOK_IDLE_SECONDS). It reloads when gatehouse.json, a settings file, a plugin file or
the trust store changes. Without it (or with --no-daemon) a call loads the project itself.

Exit status: what the agent's protocol says (0 with a JSON answer on stdout; 2 for a payload
that cannot be read, which every agent reads as a block).`;

export function registerHookCommand(program: Command): void {
  const hook = program
    .command("hook")
    .summary("answer another agent's hooks (Claude Code, Codex, Gemini CLI, Cursor) with Gatehouse's plugins")
    .description("Be the command hook of another agent: Gatehouse's plugins and permission rules decide.")
    .addArgument(agentArgument())
    .option("--no-daemon", "answer in this process; neither use nor start the background process")
    .addHelpText("after", HOOK_HELP)
    .action(async (agent: Agent, flags: { daemon: boolean }) => {
      const result = await hookCall(agent, await readStdin(), { daemon: flags.daemon, env: process.env });
      process.stdout.write(result.stdout);
      process.stderr.write(result.stderr);
      process.exitCode = result.exitCode;
    });

  hook
    .command("install")
    .summary("write the hook entries into the agent's project config, after showing the diff")
    .description(
      "Adds a hook entry running `gatehouse hook <agent>` for every event it answers to the agent's project config file (.claude/settings.json, .codex/hooks.json, .gemini/settings.json, .cursor/hooks.json), shows the diff, and lists which Gatehouse hooks take effect on that agent and which cannot. Writes only with --yes or a yes on the terminal.",
    )
    .addArgument(agentArgument())
    .option("--yes", "write without asking")
    .option("--command <command>", "the hook command to write (default: gatehouse hook <agent>)")
    .addHelpText(
      "after",
      `
Exit status:
  0  written, or nothing to change
  1  you answered no
  2  bad input: the config file is not what the agent reads; no terminal to ask and no --yes
     (the diff is printed, nothing is written)`,
    )
    .action(async (agent: Agent, flags: { yes?: boolean; command?: string }) => {
      const { installCommand } = await import("./hook-install.js");
      process.exitCode = await installCommand(agent, flags, {
        cwd: process.cwd(),
        env: process.env,
        stdin: process.stdin,
        stdout: process.stdout,
        stderr: process.stderr,
      });
    });

  hook
    .command("serve", { hidden: true })
    .description("the project's hook daemon (started by the first hook call)")
    .option("--project <dir>", "the project folder", process.cwd())
    .action(async (flags: { project: string }) => {
      const code = await serveDaemon(flags.project, process.env);
      process.exitCode = code;
    });
}

const agentArgument = () => new Argument("<agent>", "the agent whose hooks these are").choices(AGENTS);

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

type Env = Readonly<Record<string, string | undefined>>;

/** The project the agent runs in: its own variable for it, else (Cursor) the first workspace root, else the current folder. */
export function projectDirOf(payload: unknown, env: Env, cwd = process.cwd()): string {
  const fromEnv = env.CLAUDE_PROJECT_DIR || env.GEMINI_PROJECT_DIR;
  if (fromEnv) return fromEnv;
  const roots = (payload as { workspace_roots?: unknown } | null)?.workspace_roots;
  if (Array.isArray(roots) && typeof roots[0] === "string") return roots[0];
  return cwd;
}

/**
 * One hook call: through the project's daemon when one answers (started for the next call when
 * none does), else in this process. A payload that is not JSON is refused (exit 2).
 */
export async function hookCall(
  agent: Agent,
  input: string,
  options: { readonly daemon: boolean; readonly env: Env; readonly cwd?: string },
): Promise<HookAnswer> {
  if (!isAgent(agent)) return { exitCode: EXIT.usage, stdout: "", stderr: `gatehouse: unknown agent "${agent}"\n` };
  let payload: unknown;
  try {
    payload = JSON.parse(input);
  } catch {
    return { exitCode: 2, stdout: "", stderr: "gatehouse: the hook payload on stdin is not JSON\n" };
  }
  const projectDir = projectDirOf(payload, options.env, options.cwd);
  if (options.daemon) {
    const socketPath = socketPathFor(projectDir);
    const warm = await askDaemon(socketPath, { agent, payload }, DAEMON_TIMEOUT_MS);
    if (warm) return warm;
    startDaemonProcess(projectDir, socketPath, options.env);
  }
  return coldCall(agent, payload, projectDir, options.env);
}

/** The cold path: the project loaded in this process for this one call. */
export async function coldCall(agent: Agent, payload: unknown, projectDir: string, env: Env): Promise<HookAnswer> {
  const { openGuard } = await import("./hook-guard.js");
  const notes: string[] = [];
  const guard = await openGuard(projectDir, env, (line) => notes.push(line));
  try {
    const result = await guard.answer(agent, payload);
    return { ...result, stderr: notes.join("") + result.stderr };
  } finally {
    await guard.close();
  }
}

/** Starts the project's daemon in the background (once, however many calls find none). */
function startDaemonProcess(projectDir: string, socketPath: string, env: Env): void {
  try {
    privateFolder(join(socketPath, ".."));
    if (!claimStart(socketPath)) return;
    const main = process.argv[1];
    if (main === undefined) return;
    const child = spawn(process.execPath, [...process.execArgv, main, "hook", "serve", "--project", projectDir], {
      cwd: projectDir,
      detached: true,
      stdio: "ignore",
      env: env as NodeJS.ProcessEnv,
    });
    child.on("error", () => {});
    child.unref();
  } catch {
    // No daemon: every call takes the cold path, which is correct, only slower.
  }
}

/** `gatehouse hook serve`: the daemon, until idle. */
async function serveDaemon(projectDir: string, env: Env): Promise<number> {
  const [{ startDaemon }, { openGuard }] = await Promise.all([
    import("../host-hooks/warm.js"),
    import("./hook-guard.js"),
  ]);
  const idleSeconds = Number(env.GATEHOUSE_HOOK_IDLE_SECONDS ?? DEFAULT_IDLE_SECONDS);
  const socketPath = socketPathFor(projectDir);
  const log = (line: string) => process.stderr.write(line);
  const daemon = await startDaemon({
    socketPath,
    idleMs: (Number.isFinite(idleSeconds) && idleSeconds > 0 ? idleSeconds : DEFAULT_IDLE_SECONDS) * 1000,
    open: () => openGuard(projectDir, env, () => {}),
    log,
  });
  if (daemon === undefined) return EXIT.ok; // another daemon serves the project
  const stop = () => void daemon.stop();
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
  await daemon.stopped;
  return EXIT.ok;
}
