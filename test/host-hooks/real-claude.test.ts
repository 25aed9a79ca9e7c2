// The real Claude Code (2.1.328, `claude -p`) driven by the scripted Anthropic API of
// differential/, with Gatehouse installed as its hook by `gatehouse hook install claude`: a
// before_tool_call plugin stops `rm -rf`, an after_tool_call plugin redacts an email from a Bash
// output before the model reads it. The same project without the hook is the control.
import assert from "node:assert/strict";
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { pidFileOf, socketPathFor } from "../../src/host-hooks/warm.js";
import { cliArgv, gatehouse, tempProjects } from "../cli/helpers.js";

const REPO = fileURLToPath(new URL("../../", import.meta.url));
const CACHE = join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "claude-code-2.1.328");
const CLAUDE = process.env.CLAUDE_BIN ?? join(CACHE, "node_modules/@anthropic-ai/claude-code-linux-x64/claude");
const FAKE = join(REPO, "differential/fake-anthropic.mjs");

/** The binary, installed into the cache on first use (differential/install-claude.sh); why not, when it cannot be. */
async function claudeBinary(): Promise<string | { skip: string }> {
  if (existsSync(CLAUDE)) return CLAUDE;
  try {
    await promisify(execFile)("sh", [join(REPO, "differential/install-claude.sh")], { timeout: 300_000 });
  } catch (error) {
    return {
      skip: `Claude Code 2.1.328 is not cached and could not be installed (registry unreachable?): ${String(error).slice(0, 200)}`,
    };
  }
  return existsSync(CLAUDE) ? CLAUDE : { skip: `install-claude.sh did not leave ${CLAUDE}` };
}

const GUARD = `
const EMAIL = /[\\w.+-]+@[\\w-]+(\\.[\\w-]+)+/g;
const scrub = (v) => typeof v === "string" ? v.replace(EMAIL, "[email]")
  : v && typeof v === "object" ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, scrub(x)])) : v;
export default {
  id: "guard",
  setup(api) {
    api.on("before_tool_call", (e) =>
      e.toolName === "Bash" && /\\brm\\s+-rf\\b/.test(String(e.params.command))
        ? { outcome: "block", reason: "INTERNAL-RULE-7", message: "Deleting folders is not allowed here." }
        : undefined);
    api.on("after_tool_call", (e) => JSON.stringify(e.result ?? "").match(EMAIL) ? { result: scrub(e.result) } : undefined);
  },
};
`;

const TURNS = [
  { tool: { name: "Bash", input: { command: "rm -rf victim", description: "remove" } } },
  { tool: { name: "Bash", input: { command: "cat contact.txt", description: "read" } } },
  { text: "finished" },
];

interface Outcome {
  readonly victimExists: boolean;
  /** Every tool_result of the conversation the model was last sent, as text. */
  readonly toolResults: readonly string[];
  readonly code: number | null;
  readonly stdout: string;
}

function startFake(script: string, log: string): Promise<{ port: number; server: ChildProcess }> {
  return new Promise((resolve, reject) => {
    const server = spawn(process.execPath, [FAKE, script, "0", log], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    server.stdout.setEncoding("utf8").on("data", (d: string) => {
      out += d;
      const m = /fake anthropic on (\d+)/.exec(out);
      if (m) resolve({ port: Number(m[1]), server });
    });
    server.on("exit", (code) => reject(new Error(`fake-anthropic exited ${code}`)));
  });
}

function run(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

const toolResultTexts = (log: string): string[] =>
  readFileSync(log, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { main: boolean; messages?: { content: unknown }[] })
    .filter((r) => r.main)
    .slice(-1)
    .flatMap((r) => r.messages ?? [])
    .flatMap((m) => (Array.isArray(m.content) ? m.content : []))
    .filter((c): c is { type: string; content: unknown } => (c as { type?: string }).type === "tool_result")
    .map((c) => JSON.stringify(c.content));

describe("gatehouse hook claude in the real Claude Code", { timeout: 120_000 }, () => {
  let claude: string | { skip: string };
  const daemons: string[] = [];
  before(async () => {
    claude = await claudeBinary();
  });
  // The warm path's daemons of these projects: stopped, not left to their idle timeout (before
  // tempProjects' clean-up removes the pid files: after hooks run in order).
  after(async () => {
    for (const dir of daemons) {
      const file = pidFileOf(socketPathFor(dir));
      if (existsSync(file)) process.kill(Number(readFileSync(file, "utf8")), "SIGTERM");
    }
  });
  const makeProject = tempProjects();

  async function claudeRun(withHook: boolean): Promise<Outcome> {
    const dir = await makeProject({
      "gatehouse.json": { model: "scripted:echo", plugins: [{ path: "./guard.mjs" }] },
      "guard.mjs": GUARD,
      "victim/keep.txt": "precious",
      "contact.txt": "Write to alice@example.com about it.",
      ".claude/settings.json": { permissions: { allow: ["Bash"] } },
      "script.json": { turns: TURNS },
    });
    daemons.push(dir);
    const home = join(dir, ".home");
    await mkdir(home, { recursive: true });
    await writeFile(
      join(home, ".claude.json"),
      JSON.stringify({
        hasCompletedOnboarding: true,
        projects: { [dir]: { hasTrustDialogAccepted: true, allowedTools: [] } },
      }),
    );
    if (withHook) {
      const command = cliArgv(["hook", "claude"]).join(" ");
      const installed = await gatehouse(["hook", "install", "claude", "--yes", "--command", command], { cwd: dir });
      assert.equal(installed.code, 0, installed.stderr);
      assert.match(installed.stdout, /wrote \.claude\/settings\.json/);
    }
    const log = join(dir, "requests.jsonl");
    const { port, server } = await startFake(join(dir, "script.json"), log);
    try {
      const env = {
        PATH: process.env.PATH ?? "",
        HOME: home,
        LANG: "C.UTF-8",
        NO_COLOR: "1",
        ANTHROPIC_BASE_URL: `http://127.0.0.1:${port}`,
        ANTHROPIC_API_KEY: "sk-ant-dummy",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        DISABLE_TELEMETRY: "1",
        GATEHOUSE_TRUST_WORKSPACE: "1",
        GATEHOUSE_HOOK_IDLE_SECONDS: "30",
      };
      const result = await run(claude as string, ["-p", "tidy up", "--output-format", "json"], dir, env);
      return {
        victimExists: existsSync(join(dir, "victim/keep.txt")),
        toolResults: toolResultTexts(log),
        code: result.code,
        stdout: result.stdout + result.stderr,
      };
    } finally {
      server.kill();
    }
  }

  test("a Gatehouse plugin stops rm -rf and redacts an email from a Bash output in real claude -p; without the hook neither happens", async (t) => {
    if (typeof claude !== "string") return t.skip(claude.skip);
    const [guarded, control] = await Promise.all([claudeRun(true), claudeRun(false)]);

    assert.equal(control.victimExists, false, `control: rm -rf ran (${control.stdout.slice(0, 500)})`);
    assert.ok(
      control.toolResults.some((r) => r.includes("alice@example.com")),
      "control: the model read the email",
    );

    assert.equal(guarded.victimExists, true, `the folder is still there (${guarded.stdout.slice(0, 500)})`);
    assert.equal(guarded.toolResults.length, 2, JSON.stringify(guarded.toolResults));
    assert.match(guarded.toolResults[0] ?? "", /Deleting folders is not allowed here\./);
    assert.ok(
      guarded.toolResults.every((r) => !r.includes("INTERNAL-RULE-7")),
      "the internal reason never reached the model",
    );
    assert.match(guarded.toolResults[1] ?? "", /Write to \[email\] about it\./);
    assert.ok(
      guarded.toolResults.every((r) => !r.includes("alice@example.com")),
      "the model never read the email",
    );
  });
});
