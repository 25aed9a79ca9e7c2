import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createGatehouse } from "../src/assembly/gatehouse.js";
import { isDead } from "../src/core/process-groups.js";
import type { RunResult } from "../src/runtime/types.js";
import { openStore } from "../src/store/index.js";
import { captureLogger } from "./capture.js";
import { runChildCases } from "./r6-children.js";
import { hookModelCase } from "./r6-hook-models.js";
import { maskedSecretCase } from "./r6-masked-secrets.js";
import { echoTool, harnessModel } from "./world.js";

/**
 * R6 — containment of everything Gatehouse starts, through the real runtime: command hooks that
 * fork grandchildren and hang, print far more than the cap, never read their input, or look at
 * their environment; and (r6-children.ts) the model's Bash tool and MCP stdio servers, cancelled,
 * timed out, stopped at once, never answering, or reading their environment. No process may be
 * left behind, memory must stay bounded, and secrets must be absent unless passed through.
 */

export interface R6Options {
  /** Bytes the flooding hook prints on each of stdout and stderr (default 256 MiB; soak: GiBs). */
  readonly floodBytes?: number;
  /** How much the process may grow while a hook floods (default 200 MiB). */
  readonly memoryBoundBytes?: number;
}

export interface Case {
  readonly name: string;
  readonly ok: boolean;
  /** Shown, not judged: behaviour worth knowing that the issue does not ask for. */
  readonly note?: string;
  readonly detail: string;
  /** Processes the case started, and how many were alive afterwards (cases about processes). */
  readonly started?: number;
  readonly left?: number;
  /** Secret variables that reached a process that should not have had them (cases about the environment). */
  readonly leaked?: readonly string[];
}

export interface R6Figures {
  readonly cases: readonly Case[];
  readonly failed: number;
  readonly ms: number;
  /** Over the cases that count processes: started, and left alive after their run. */
  readonly processesStarted: number;
  readonly processesLeft: number;
  /** Over the cases that read an environment: secret variables seen where they should not be. */
  readonly variablesLeaked: number;
}

interface HookRun {
  readonly result: RunResult;
  readonly peakRssGrowth: number;
  readonly ms: number;
  readonly echoRuns: number;
}

/** One run whose Echo call goes through a PreToolUse hook given as a shell script. */
async function runWithHook(
  dir: string,
  body: string,
  handler: Record<string, unknown>,
  options: { input?: string; env?: Record<string, string>; passEnv?: string[] } = {},
): Promise<HookRun> {
  const script = join(dir, `hook-${Math.random().toString(36).slice(2)}.sh`);
  writeFileSync(script, `#!/bin/sh\n${body}\n`);
  chmodSync(script, 0o755);
  const hooks = { PreToolUse: [{ matcher: "Echo", hooks: [{ type: "command", command: script, ...handler }] }] };
  let echoRuns = 0;
  const gatehouse = createGatehouse({
    model: harnessModel({
      runs: [{ turns: [{ toolCalls: [{ name: "Echo", input: { text: options.input ?? "x" } }] }, { text: "done" }] }],
    }),
    store: await openStore({ kind: "memory" }),
    tools: [
      {
        ...echoTool,
        execute: async (i: { text: string }) => {
          echoRuns++;
          return { echoed: String(i.text.length) };
        },
      },
    ],
    logger: captureLogger().logger,
    config: { cwd: dir },
    env: { ...(options.env ?? (process.env as Record<string, string>)) },
    commandHooks: {
      load: { homeDir: dir, cliSettings: JSON.stringify({ hooks }) },
      ...(options.passEnv ? { passEnv: options.passEnv } : {}),
    },
  });
  await gatehouse.ready();
  global.gc?.();
  const base = process.memoryUsage().rss;
  let peak = base;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 10);
  const started = performance.now();
  try {
    const result = await gatehouse.run({ prompt: "go" });
    return { result, peakRssGrowth: peak - base, ms: performance.now() - started, echoRuns };
  } finally {
    clearInterval(sampler);
    await gatehouse.close();
  }
}

function pids(file: string): number[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8").split(/\s+/).filter(Boolean).map(Number);
}

function alive(list: number[]): number[] {
  return list.filter((pid) => !isDead(pid));
}

export async function runR6(options: R6Options = {}): Promise<R6Figures> {
  const started = performance.now();
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-r6-"));
  const cases: Case[] = [];
  const floodBytes = options.floodBytes ?? 256 * 1024 * 1024;
  const bound = options.memoryBoundBytes ?? 200 * 1024 * 1024;
  const mib = (n: number) => `${(n / 1024 / 1024).toFixed(0)} MiB`;
  try {
    // 1. Grandchildren that hang, one ignoring SIGTERM, and a hook that never answers.
    for (const onFailure of ["continue", "block"] as const) {
      const file = join(dir, `tree-${onFailure}`);
      const r = await runWithHook(
        dir,
        `echo $$ >> ${file}
sleep 1000 & echo $! >> ${file}
(trap '' TERM; while :; do sleep 1; done) & echo $! >> ${file}
sh -c 'sleep 1000 & echo $! >> ${file}; sleep 1000' & echo $! >> ${file}
sleep 1000`,
        { timeout: 0.4, onFailure },
      );
      const all = pids(file);
      const left = alive(all);
      for (const pid of left) process.kill(pid, "SIGKILL");
      const verdictOk = onFailure === "block" ? r.echoRuns === 0 : r.echoRuns === 1 && r.result.outcome === "completed";
      cases.push({
        name: `timeout (onFailure ${onFailure}): hook with grandchildren that hang, one ignoring SIGTERM`,
        ok: all.length >= 5 && left.length === 0 && verdictOk,
        started: all.length,
        left: left.length,
        detail: `${all.length} processes started, ${left.length} left after the run; Echo ran ${r.echoRuns}x; ${r.ms.toFixed(0)} ms`,
      });
    }

    // 2. A hook that exits at once but leaves a grandchild running (no timeout involved).
    {
      const file = join(dir, "bg");
      const r = await runWithHook(dir, `sleep 1000 > /dev/null 2>&1 & echo $! > ${file}\nexit 0`, { timeout: 5 });
      const left = alive(pids(file));
      for (const pid of left) process.kill(pid, "SIGKILL");
      cases.push({
        name: "hook exits at once, leaving a background grandchild with its own output",
        ok: r.result.outcome === "completed",
        note:
          left.length > 0
            ? "the grandchild outlives the hook: its process group is killed only on a timeout or an abort"
            : undefined,
        detail: `${left.length} process(es) left after the run`,
      } as Case);
    }

    // 3. Floods: far more output than the 1 MiB cap, on both streams; then one that never stops.
    {
      const r = await runWithHook(
        dir,
        `cat > /dev/null; head -c ${floodBytes} /dev/zero | tr '\\0' '{' & head -c ${floodBytes} /dev/zero | tr '\\0' 'x' >&2; wait`,
        { timeout: 120 },
      );
      cases.push({
        name: `hook prints ${mib(floodBytes)} on stdout and on stderr, then exits`,
        ok: r.peakRssGrowth < bound && r.result.outcome === "completed" && r.echoRuns === 1,
        detail: `peak RSS growth ${mib(r.peakRssGrowth)} (bound ${mib(bound)}); ${r.ms.toFixed(0)} ms; Echo ran ${r.echoRuns}x`,
      });
      const endless = await runWithHook(dir, 'cat > /dev/null; yes \'{"decision":"block"}\'', { timeout: 1 });
      cases.push({
        name: "hook prints without end until its timeout",
        ok: endless.peakRssGrowth < bound && endless.result.outcome === "completed",
        detail: `peak RSS growth ${mib(endless.peakRssGrowth)}; ${endless.ms.toFixed(0)} ms`,
      });
    }

    // 4. Hooks that never read their (large) input: one exits, one hangs until its timeout.
    {
      const big = "y".repeat(8 * 1024 * 1024);
      const exits = await runWithHook(dir, "exit 0", { timeout: 5 }, { input: big });
      const hangs = await runWithHook(dir, "sleep 1000", { timeout: 0.4 }, { input: big });
      cases.push({
        name: "hook that never reads an 8 MiB input and exits",
        ok: exits.result.outcome === "completed" && exits.echoRuns === 1,
        detail: `${exits.ms.toFixed(0)} ms`,
      });
      cases.push({
        name: "hook that never reads an 8 MiB input and hangs",
        ok: hangs.result.outcome === "completed" && hangs.echoRuns === 1 && hangs.ms < 5000,
        detail: `${hangs.ms.toFixed(0)} ms`,
      });
    }

    // 5. The environment: provider credentials removed unless passed through; the rest kept.
    {
      const file = join(dir, "env");
      const env = {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: dir,
        OPENAI_API_KEY: "cred-openai",
        ANTHROPIC_API_KEY: "cred-anthropic",
        AWS_SECRET_ACCESS_KEY: "cred-aws",
        GEMINI_API_KEY: "cred-gemini",
        GOOGLE_APPLICATION_CREDENTIALS: "cred-google",
        HF_TOKEN: "cred-hf",
        AZURE_OPENAI_API_KEY: "cred-azure",
        openai_api_key: "cred-lowercase",
        MISTRAL_API_KEY: "cred-mistral",
        APP_SETTING: "kept",
      };
      await runWithHook(dir, `env > ${file}`, { timeout: 5 }, { env, passEnv: ["ANTHROPIC_API_KEY"] });
      const seen = readFileSync(file, "utf8");
      const leaked = Object.entries(env)
        .filter(([k, v]) => v.startsWith("cred-") && k !== "ANTHROPIC_API_KEY" && seen.includes(v))
        .map(([k]) => k);
      const passed = seen.includes("cred-anthropic");
      const kept = seen.includes("APP_SETTING=kept") && seen.includes("CLAUDE_PROJECT_DIR=");
      cases.push({
        name: "hook reads its environment",
        ok: leaked.length === 0 && passed && kept,
        leaked,
        detail: `leaked: ${leaked.join(", ") || "none"}; passEnv ANTHROPIC_API_KEY ${passed ? "present" : "missing"}; other variables ${kept ? "kept" : "missing"}`,
      });
    }

    cases.push(...(await runChildCases(dir)));
    cases.push(await hookModelCase(dir));
    cases.push(await maskedSecretCase(dir));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const sum = (f: (c: Case) => number | undefined) => cases.reduce((n, c) => n + (f(c) ?? 0), 0);
  return {
    cases,
    failed: cases.filter((c) => !c.ok).length,
    ms: performance.now() - started,
    processesStarted: sum((c) => c.started),
    processesLeft: sum((c) => c.left),
    variablesLeaked: sum((c) => c.leaked?.length),
  };
}
