import type { LanguageModelV3, LanguageModelV3CallOptions } from "@ai-sdk/provider";
import { z } from "zod";
import { createGatehouse, type GatehouseOptions } from "../../src/assembly/gatehouse.js";
import { HOOK_NAMES, type HookContext, type HookName } from "../../src/hooks/index.js";
import { createScriptedModel, type ScriptInput } from "../../src/models/index.js";
import { definePlugin, type PluginDefinition } from "../../src/plugins/index.js";
import type { RunInput, RunResult } from "../../src/runtime/types.js";
import { openMemoryStore } from "../../src/store/index.js";
import type { SessionStore } from "../../src/store/types.js";
import type { Tool } from "../../src/tools/types.js";
import { captureLogger } from "../hooks/helpers.js";

export interface Firing {
  readonly hook: HookName;
  readonly event: Record<string, unknown>;
  readonly ctx: Pick<
    HookContext,
    "sessionId" | "sessionKey" | "runId" | "depth" | "trigger" | "jobId" | "agentId" | "parentRunId"
  >;
}

/** A plugin with a no-opinion handler on every hook of the catalog, recording each firing. */
export function recorder(): { plugin: PluginDefinition; firings: Firing[]; count(hook: HookName): number } {
  const firings: Firing[] = [];
  const plugin = definePlugin({
    id: "recorder",
    setup(api) {
      for (const hook of HOOK_NAMES) {
        const record = (event: unknown, ctx: HookContext) => {
          const { sessionId, sessionKey, runId, depth, trigger, jobId, agentId, parentRunId } = ctx;
          firings.push({
            hook,
            event: event as Record<string, unknown>,
            ctx: { sessionId, sessionKey, runId, depth, trigger, jobId, agentId, parentRunId },
          });
          return undefined;
        };
        api.on(hook, record as never, { priority: 1000 });
      }
    },
  });
  return { plugin, firings, count: (hook) => firings.filter((f) => f.hook === hook).length };
}

/** Wraps a model and keeps every prompt it was sent, to check what the model saw. */
export function spy(model: LanguageModelV3): { model: LanguageModelV3; calls: LanguageModelV3CallOptions[] } {
  const calls: LanguageModelV3CallOptions[] = [];
  return {
    calls,
    model: {
      ...model,
      specificationVersion: "v3",
      provider: model.provider,
      modelId: model.modelId,
      supportedUrls: model.supportedUrls,
      doGenerate: (options) => {
        calls.push(options);
        return model.doGenerate(options);
      },
      doStream: (options) => {
        calls.push(options);
        return model.doStream(options);
      },
    },
  };
}

/** Everything the model was sent in one call, as text (to check what reached it). */
export function promptText(call: LanguageModelV3CallOptions): string {
  return JSON.stringify(call.prompt);
}

export const echoTool: Tool<{ text: string }, { echoed: string }> = {
  name: "Echo",
  description: "Echoes its text",
  inputSchema: z.object({ text: z.string() }),
  async execute(input) {
    return { echoed: input.text };
  },
};

export interface TestGatehouse {
  store: SessionStore;
  logLines: string[];
  calls: LanguageModelV3CallOptions[];
}

export function testGatehouse(
  script: ScriptInput,
  options: Omit<GatehouseOptions, "model"> & { readonly store?: SessionStore } = {},
) {
  const { logger, lines } = captureLogger();
  const store = options.store ?? openMemoryStore();
  const spied = spy(createScriptedModel(script));
  const gatehouse = createGatehouse({ tools: [echoTool], logger, ...options, model: spied.model, store });
  return { gatehouse, store, logLines: lines, calls: spied.calls };
}

/** Starts a run and cancels it once `started` (a tool began): the run's result. */
export async function runCancelledOnceStarted(
  gatehouse: { run(input: RunInput): Promise<RunResult> },
  input: Omit<RunInput, "signal">,
  started: Promise<void>,
): Promise<RunResult> {
  const controller = new AbortController();
  const running = gatehouse.run({ ...input, signal: controller.signal });
  await started;
  controller.abort();
  return running;
}

/** A tool that reports it started, then waits until its run is cancelled. */
export function waitingTool(name = "Wait"): { tool: Tool<{ note: string }, string>; started: Promise<void> } {
  let started!: () => void;
  const promise = new Promise<void>((resolve) => {
    started = resolve;
  });
  const tool: Tool<{ note: string }, string> = {
    name,
    description: "waits for cancellation",
    inputSchema: z.object({ note: z.string() }),
    execute: (_input, ctx) =>
      new Promise<string>((_, reject) => {
        started();
        ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason), { once: true });
      }),
  };
  return { tool, started: promise };
}

/**
 * A tool whose calls (input `{ id }`) log when they start and end, and end only when the test
 * releases them: `started(id)` settles once that call runs.
 */
export function heldTool(name: string, log: string[], options: { parallel?: boolean } = {}) {
  const gates = new Map<
    string,
    { started: () => void; release: () => void; onStart: Promise<void>; released: Promise<void> }
  >();
  const gate = (id: string) => {
    let entry = gates.get(id);
    if (!entry) {
      let started!: () => void;
      let release!: () => void;
      const onStart = new Promise<void>((r) => {
        started = r;
      });
      const released = new Promise<void>((r) => {
        release = r;
      });
      entry = { started, release, onStart, released };
      gates.set(id, entry);
    }
    return entry;
  };
  const tool: Tool<{ id: string }, string> = {
    name,
    description: "waits until the test releases it",
    inputSchema: z.object({ id: z.string() }),
    ...(options.parallel ? { parallel: true } : {}),
    async execute({ id }) {
      log.push(`start ${id}`);
      gate(id).started();
      await gate(id).released;
      log.push(`end ${id}`);
      return `done ${id}`;
    },
  };
  return { tool, started: (id: string) => gate(id).onStart, release: (id: string) => gate(id).release() };
}

/** A one-hook plugin. */
export function plugin(id: string, setup: PluginDefinition["setup"]): PluginDefinition {
  return { id, setup };
}

/** A stand-in Bash: records each command it was run with, runs nothing. */
export function fakeBash(): { tool: Tool; ran: string[] } {
  const ran: string[] = [];
  const tool: Tool<{ command: string }, string> = {
    name: "Bash",
    description: "runs a command",
    inputSchema: z.object({ command: z.string() }),
    async execute({ command }) {
      ran.push(command);
      return `ran ${command}`;
    },
  };
  return { tool: tool as Tool, ran };
}
