import { execFileSync } from "node:child_process";
import { createReadStream, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createGatehouse } from "../src/assembly/gatehouse.js";
import { createEnvPolicy, type EnvPolicy } from "../src/core/env-policy.js";
import { isDead, killTrackedGroups } from "../src/core/process-groups.js";
import type { RunResult } from "../src/runtime/types.js";
import { openStore } from "../src/store/index.js";
import { createBashTool } from "../src/tools/builtin/bash.js";
import { connectMcpServers } from "../src/tools/mcp.js";
import type { McpServersConfig } from "../src/tools/mcp-config.js";
import { captureLogger } from "./capture.js";
import { harnessModel } from "./world.js";

/**
 * R6 for what the model drives: the Bash tool and MCP stdio servers. Process trees with a
 * member that ignores SIGTERM, cancelled, timed out or shut down at once; servers that never
 * answer or ignore the end of their input; and what each of them sees of the environment.
 */

export interface ChildCase {
  readonly name: string;
  readonly ok: boolean;
  readonly detail: string;
  /** Processes the case started, and how many of them were still alive afterwards. */
  readonly started?: number;
  readonly left?: number;
  /** Canary variables seen by the process that should not have been. */
  readonly leaked?: readonly string[];
}

const MCP_STUB = fileURLToPath(new URL("./mcp-stub.mjs", import.meta.url));

/** A shell snippet: a background sleep and a loop that ignores SIGTERM, each pid appended to `file`. */
const tree = (file: string) =>
  [
    `echo $$ >> ${file}`,
    `sleep 1000 & echo $! >> ${file}`,
    `(trap '' TERM; while :; do sleep 1; done) & echo $! >> ${file}`,
  ].join("; ");

function pids(file: string): number[] {
  return existsSync(file) ? readFileSync(file, "utf8").split(/\s+/).filter(Boolean).map(Number) : [];
}

/** Polls /proc until every pid is dead (or a zombie), at most `withinMs`; the ones left. */
async function leftAlive(list: readonly number[], withinMs: number): Promise<number[]> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const alive = list.filter((pid) => !isDead(pid));
    if (alive.length === 0 || Date.now() >= deadline) {
      for (const pid of alive) process.kill(pid, "SIGKILL");
      return alive;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The first line a writer puts into a new FIFO at `path`. */
function fifo(path: string): Promise<string> {
  execFileSync("mkfifo", [path]);
  return new Promise((resolve, reject) => {
    let text = "";
    const stream = createReadStream(path, { encoding: "utf8" });
    stream.on("data", (chunk) => {
      text += chunk;
      if (text.includes("\n")) {
        stream.destroy();
        resolve(text);
      }
    });
    stream.on("error", reject);
  });
}

/** One run whose model calls Bash once with `command` (and `timeout`), with the given environment. */
async function bashRun(
  dir: string,
  command: string,
  options: { timeout?: number; signal?: AbortSignal; env?: Record<string, string>; envPolicy?: EnvPolicy } = {},
): Promise<RunResult> {
  const input = { command, ...(options.timeout === undefined ? {} : { timeout: options.timeout }) };
  const gatehouse = createGatehouse({
    model: harnessModel({ runs: [{ turns: [{ toolCalls: [{ name: "Bash", input }] }, { text: "done" }] }] }),
    store: await openStore({ kind: "memory" }),
    tools: [
      createBashTool({
        ...(options.env ? { env: options.env } : {}),
        ...(options.envPolicy ? { envPolicy: options.envPolicy } : {}),
      }),
    ],
    // The Bash call is what R6 watches: a rule lets it run (default mode would ask).
    permissions: { allow: ["Bash"] },
    logger: captureLogger().logger,
    config: { cwd: dir },
  });
  try {
    return await gatehouse.run({ prompt: "go", ...(options.signal ? { signal: options.signal } : {}) });
  } finally {
    await gatehouse.close();
  }
}

/** The canary environment: provider keys, Gatehouse secrets, a denied variable, ordinary ones. */
function canaryEnv(dir: string): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: dir,
    OPENAI_API_KEY: "cred-openai",
    ANTHROPIC_API_KEY: "cred-anthropic",
    AWS_SECRET_ACCESS_KEY: "cred-aws",
    GEMINI_API_KEY: "cred-gemini",
    HF_TOKEN: "cred-hf",
    GATEHOUSE_DATABASE_URL: "cred-gatehouse-db",
    GATEHOUSE_MODEL: "cred-gatehouse-model",
    STRIPE_SECRET_KEY: "cred-denied",
    APP_SETTING: "kept",
  };
}

/** Which `cred-` values in `env` show up in `seen`, except the ones named in `passed`. */
function leakedFrom(env: Record<string, string>, seen: string, passed: readonly string[]): string[] {
  return Object.entries(env)
    .filter(([k, v]) => v.startsWith("cred-") && !passed.includes(k) && seen.includes(v))
    .map(([k]) => k);
}

export async function runChildCases(dir: string): Promise<ChildCase[]> {
  const cases: ChildCase[] = [];
  const processCase = (name: string, ok: boolean, started: number, left: number, extra = ""): ChildCase => ({
    name,
    ok: ok && started >= 3 && left === 0,
    started,
    left,
    detail: `${started} processes started, ${left} left${extra}`,
  });

  // 1. The run is cancelled while a Bash call's tree runs (Ctrl-C, SIGTERM, SIGHUP all do this).
  {
    const file = join(dir, "bash-cancel");
    const started = fifo(join(dir, "bash-cancel.fifo"));
    const controller = new AbortController();
    void started.then(() => controller.abort());
    const r = await bashRun(dir, `${tree(file)}; echo up > ${dir}/bash-cancel.fifo; wait`, {
      signal: controller.signal,
    });
    const all = pids(file);
    const left = await leftAlive(all, 2000);
    cases.push(
      processCase(
        "Bash tool: run cancelled mid-call",
        r.outcome === "cancelled",
        all.length,
        left.length,
        `; run ${r.outcome}`,
      ),
    );
  }

  // 2. The Bash call's own timeout.
  {
    const file = join(dir, "bash-timeout");
    const r = await bashRun(dir, `${tree(file)}; wait`, { timeout: 300 });
    const all = pids(file);
    const left = await leftAlive(all, 2000);
    cases.push(processCase("Bash tool: call timed out", r.outcome === "completed", all.length, left.length));
  }

  // 3. Shutting down at once (a second Ctrl-C, and the process's exit): every tracked group SIGKILLed.
  {
    const file = join(dir, "bash-now");
    const started = fifo(join(dir, "bash-now.fifo"));
    const controller = new AbortController();
    const run = bashRun(dir, `${tree(file)}; echo up > ${dir}/bash-now.fifo; wait`, { signal: controller.signal });
    await started;
    const groups = killTrackedGroups("SIGKILL");
    const all = pids(file);
    // Dead within a moment of the SIGKILL: the Bash tool's own SIGTERM-then-SIGKILL never ran.
    const left = await leftAlive(all, 300);
    controller.abort();
    await run;
    cases.push(
      processCase(
        "Bash tool: stopped at once (second Ctrl-C)",
        groups >= 1,
        all.length,
        left.length,
        `; ${groups} group(s) killed`,
      ),
    );
  }

  // 4. What a Bash command sees of the environment, with tools.bash.passEnv and environment.deny.
  {
    const env = canaryEnv(dir);
    const file = join(dir, "bash-env");
    const envPolicy = createEnvPolicy({ deny: ["STRIPE_*"], passEnv: { bash: ["ANTHROPIC_API_KEY"] } });
    await bashRun(dir, `env > ${file}`, { env, envPolicy });
    const seen = readFileSync(file, "utf8");
    const leaked = leakedFrom(env, seen, ["ANTHROPIC_API_KEY"]);
    const passed = seen.includes("cred-anthropic");
    const kept = seen.includes("APP_SETTING=kept");
    cases.push({
      name: "Bash tool: reads its environment",
      ok: leaked.length === 0 && passed && kept,
      leaked,
      detail: `leaked: ${leaked.join(", ") || "none"}; tools.bash.passEnv ANTHROPIC_API_KEY ${passed ? "present" : "missing"}; other variables ${kept ? "kept" : "missing"}`,
    });
  }

  // 5. What an MCP stdio server sees: its entry's env adds a key back; nothing else of the secrets.
  {
    const env = canaryEnv(dir);
    const file = join(dir, "mcp-env");
    const servers: McpServersConfig = {
      s: {
        command: "/bin/sh",
        args: ["-c", `env > ${file}; exec ${process.execPath} ${MCP_STUB}`],
        // biome-ignore lint/suspicious/noTemplateCurlyInString: .mcp.json's own ${VAR} syntax
        env: { GEMINI_API_KEY: "${GEMINI_API_KEY}" },
      },
    };
    const gatehouse = createGatehouse({
      model: harnessModel({ runs: [{ turns: [{ text: "done" }] }] }),
      store: await openStore({ kind: "memory" }),
      mcpServers: servers,
      logger: captureLogger().logger,
      config: { cwd: dir },
      env,
      envPolicy: createEnvPolicy({ deny: ["STRIPE_*"] }),
    });
    await gatehouse.ready();
    await gatehouse.close();
    const seen = existsSync(file) ? readFileSync(file, "utf8") : "";
    const leaked = leakedFrom(env, seen, ["GEMINI_API_KEY"]);
    const passed = seen.includes("cred-gemini");
    cases.push({
      name: "MCP server: reads its environment",
      ok: seen !== "" && leaked.length === 0 && passed,
      leaked,
      detail: `leaked: ${leaked.join(", ") || "none"}; its env's GEMINI_API_KEY ${passed ? "present" : "missing"}; ordinary variables ${seen.includes("APP_SETTING") ? "inherited" : "not inherited (PATH, HOME, … only)"}`,
    });
  }

  // 6. A server that never answers the handshake, with a child, both ignoring SIGTERM.
  {
    const file = join(dir, "mcp-silent");
    const conn = await connectMcpServers(
      { silent: { command: "/bin/sh", args: ["-c", `trap '' TERM; ${tree(file)}; exec sleep 1000`] } },
      { cwd: dir, startupTimeoutMs: 300, killGraceMs: 200 },
    );
    const all = pids(file);
    const left = await leftAlive(all, 2000);
    await conn.close();
    cases.push(
      processCase(
        "MCP server: never answers the handshake",
        conn.diagnostics.length === 1,
        all.length,
        left.length,
        "; gone when connecting gave up",
      ),
    );
  }

  // 7. A connected server that ignores SIGTERM and the end of its input, with children: gone at close.
  {
    const file = join(dir, "mcp-stubborn");
    const gatehouse = createGatehouse({
      model: harnessModel({ runs: [{ turns: [{ text: "done" }] }] }),
      store: await openStore({ kind: "memory" }),
      mcpServers: {
        s: { command: "/bin/sh", args: ["-c", `trap '' TERM; ${tree(file)}; exec ${process.execPath} ${MCP_STUB}`] },
      },
      logger: captureLogger().logger,
      config: { cwd: dir },
    });
    await gatehouse.run({ prompt: "go" });
    await gatehouse.close();
    const all = pids(file);
    const left = await leftAlive(all, 500);
    cases.push(
      processCase(
        "MCP server: ignores SIGTERM and its input's end",
        true,
        all.length,
        left.length,
        "; gone once closed",
      ),
    );
  }

  return cases;
}
