import { HookEngine, newTraceparent, type RunContext, runWithContext } from "../../src/hooks/index.js";

/** A logger that keeps every line, so tests can assert on what would have been logged. */
export function captureLogger() {
  const lines: string[] = [];
  return {
    lines,
    logger: {
      warn: (m: string) => lines.push(`warn ${m}`),
      error: (m: string) => lines.push(`error ${m}`),
      info: (m: string) => lines.push(`info ${m}`),
      debug: (m: string) => lines.push(`debug ${m}`),
    },
  };
}

export function engineWithLog(options: ConstructorParameters<typeof HookEngine>[0] = {}) {
  const { lines, logger } = captureLogger();
  return { engine: new HookEngine({ logger, ...options }), lines };
}

export function runContext(overrides: Partial<RunContext> = {}): RunContext {
  return {
    sessionId: "s1",
    sessionKey: "main",
    runId: "r1",
    agentId: "main",
    depth: 0,
    trigger: "user",
    channel: "api",
    traceparent: newTraceparent(),
    ...overrides,
  };
}

export function inRun<T>(fn: () => T, overrides: Partial<RunContext> = {}): T {
  return runWithContext(runContext(overrides), fn);
}

/** A promise with its resolve exposed: lets a test order handlers without sleeping. */
export function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

export const toolEvent = { toolName: "Bash", params: { command: "ls" }, toolCallId: "call_1" };
export const emitEvent = (content: string, earlier: string[] = []) => ({
  content,
  allContent: [...earlier, content],
  source: "model" as const,
});
