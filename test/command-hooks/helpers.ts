import { mkdtempSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Dialect } from "../../src/command-hooks/dialects.js";
import type { CommandHookEvent } from "../../src/command-hooks/events.js";
import type { ExecutorOptions } from "../../src/command-hooks/executor.js";
import type { HandlerDefinition, OnFailure, SourceName } from "../../src/command-hooks/settings.js";
import { type ConfiguredHandler, configureHandler } from "../../src/command-hooks/sources.js";

export const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), "fixtures");
export const fixture = (name: string) => join(FIXTURES, name);

export function tempDir(prefix = "gh-cmdhooks-"): string {
  return realpathSync(mkdtempSync(join(tmpdir(), prefix)));
}

export interface HookOptions {
  event?: CommandHookEvent;
  dialect?: Dialect;
  onFailure?: OnFailure;
  timeout?: number;
  matcher?: string;
  if?: string;
  source?: SourceName;
}

export function hook(def: HandlerDefinition, o: HookOptions = {}): ConfiguredHandler {
  const definition = {
    ...def,
    ...(o.timeout !== undefined ? { timeout: o.timeout } : {}),
    ...(o.if ? { if: o.if } : {}),
  };
  return configureHandler(definition, {
    event: o.event ?? "PreToolUse",
    ...(o.dialect ? { dialect: o.dialect } : {}),
    ...(o.onFailure ? { onFailure: o.onFailure } : {}),
    ...(o.matcher !== undefined ? { matcher: o.matcher } : {}),
    ...(o.source ? { source: o.source } : {}),
  });
}

/** Exec form of a fixture script with arguments. */
export const execHook = (script: string, args: string[], o: HookOptions = {}) =>
  hook({ type: "command", command: fixture(script), args }, o);

/** Shell form (`sh -c`). */
export const shellHook = (command: string, o: HookOptions = {}) => hook({ type: "command", command }, o);

export function execOptions(projectDir: string, extra: Partial<ExecutorOptions> = {}): ExecutorOptions {
  return { projectDir, sessionId: "sess-test-1", env: { PATH: process.env.PATH }, ...extra };
}

/** A minimal hook input for any event. */
export function inputFor(event: CommandHookEvent, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    session_id: "sess-test-1",
    hook_event_name: event,
    tool_name: "Bash",
    tool_input: { command: "ls" },
    ...extra,
  };
}

// biome-ignore lint/suspicious/noTemplateCurlyInString: the literal placeholder hooks write
export const PROJECT_DIR_PLACEHOLDER = "${CLAUDE_PROJECT_DIR}";
