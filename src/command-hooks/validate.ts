import { z } from "zod";
import { DEFAULT_ENV_POLICY, describeRemoval, type EnvPolicy } from "../core/env-policy.js";
import { type Diagnostic, joinPath, programProblem } from "./diagnostics.js";
import { DIALECT_SPECS, type Dialect, suspiciousTimeout } from "./dialects.js";
import { type CommandHookEvent, EVENT_SPECS } from "./events.js";
import { headerVariables } from "./headers.js";
import { readIfRule } from "./if-rule.js";
import {
  agentHandlerShape,
  codePuppyExtraShape,
  commandHandlerShape,
  DIALECT_EXTRA_SHAPES,
  type HandlerDefinition,
  type HttpHandlerDef,
  httpHandlerShape,
  mcpToolHandlerShape,
  type OnFailure,
  promptHandlerShape,
} from "./settings.js";

export type Diag = (level: Diagnostic["level"], path: string, message: string) => void;

export interface HandlerContext {
  /** JSON path of the handler. */
  path: string;
  dialect: Dialect;
  event: CommandHookEvent;
  projectDir: string;
  /** The folder the command runs in, when not the project (Cursor's user hooks run in ~/.cursor). */
  runDir?: string | undefined;
  pathVar: string | undefined;
  checkPrograms: boolean | undefined;
  /** Decides which variables an `http` handler's headers can really expand. */
  envPolicy: EnvPolicy | undefined;
  /** `commandHooks.onFailure`, for handlers without their own. */
  defaultOnFailure?: OnFailure | undefined;
  diag: Diag;
}

const HANDLER_SHAPES: Readonly<Record<string, z.ZodRawShape>> = {
  command: commandHandlerShape,
  http: httpHandlerShape,
  prompt: promptHandlerShape,
  agent: agentHandlerShape,
  mcp_tool: mcpToolHandlerShape,
};

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * One handler checked field by field. Returns the definition when it can run (unknown
 * fields are reported but do not stop a guard from running), undefined when it cannot.
 */
export function validateHandler(raw: unknown, c: HandlerContext): HandlerDefinition | undefined {
  const { path, dialect, diag } = c;
  if (!isObject(raw)) {
    diag("error", path, "a handler must be an object with a type");
    return undefined;
  }
  // Cursor's entries name no type: a command.
  const type = dialect === "cursor" && raw.type === undefined ? "command" : raw.type;
  const base = typeof type === "string" ? HANDLER_SHAPES[type] : undefined;
  if (base === undefined) {
    diag(
      "error",
      joinPath(path, "type"),
      `type must be "command", "http", "prompt", "agent" or "mcp_tool" (got ${JSON.stringify(type)})`,
    );
    return undefined;
  }
  const shape = {
    ...base,
    ...(dialect === "code-puppy" ? codePuppyExtraShape : {}),
    ...(dialect === "gemini" || dialect === "codex" || dialect === "cursor" ? DIALECT_EXTRA_SHAPES[dialect] : {}),
    ...(dialect === "cursor" ? { type: commandHandlerShape.type.optional() } : {}),
  };
  for (const key of Object.keys(raw)) {
    if (!Object.hasOwn(shape, key)) {
      // Claude Code ignores fields it does not know (and adds some every release): a warning,
      // and the handler runs with the fields it has.
      diag(
        "warning",
        joinPath(path, key),
        `unknown field "${key}" for a ${type} handler is ignored${fieldHint(key, dialect)}`,
      );
    }
  }
  const parsed = z.object(shape).safeParse(type === raw.type ? raw : { ...raw, type });
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const p = issue.path.reduce<string>((acc, k) => joinPath(acc, typeof k === "symbol" ? String(k) : k), path);
      diag("error", p, `${issue.message}; this handler never runs`);
    }
    return undefined;
  }
  const data = parsed.data as HandlerDefinition & {
    enabled?: boolean;
    id?: string;
    name?: string;
    description?: string;
    commandWindows?: string;
    timeoutSec?: number;
    failClosed?: boolean;
    matcher?: string;
    loop_limit?: number;
  };
  if (data.enabled === false) return undefined;
  const {
    enabled: _e,
    id: _i,
    name: _n,
    description: _d,
    commandWindows: _w,
    timeoutSec,
    failClosed,
    matcher: _m,
    loop_limit: _l,
    ...definition
  } = data;
  // Codex's `timeoutSec` is an alias of `timeout`; Cursor's `failClosed` is Gatehouse's onFailure "block".
  if (timeoutSec !== undefined && definition.timeout === undefined) definition.timeout = timeoutSec;
  if (failClosed === true && definition.onFailure === undefined) definition.onFailure = "block";
  return checkSemantics(definition as HandlerDefinition, c);
}

function checkSemantics(def: HandlerDefinition, c: HandlerContext): HandlerDefinition | undefined {
  const { path, dialect, event, diag } = c;
  const spec = EVENT_SPECS[event];
  if (def.timeout !== undefined) {
    const problem = suspiciousTimeout(dialect, def.timeout);
    if (problem) diag("warning", joinPath(path, "timeout"), problem);
  }
  if (def.if !== undefined) {
    if (!spec.toolEvent) {
      diag("warning", joinPath(path, "if"), `"if" applies only to tool events; on ${event} this handler never runs`);
      return undefined;
    }
    const rule = readIfRule(def.if);
    if (typeof rule === "string") {
      diag("error", joinPath(path, "if"), rule);
      return undefined;
    }
  }
  if (def.onFailure === "block" && !spec.failureCanBlock) {
    diag("warning", joinPath(path, "onFailure"), `onFailure "block" has no effect on ${event}`);
  }
  if (def.type === "http") checkHeaderVariables(def, c);
  if (def.type === "command") {
    if (def.shell === "powershell") {
      diag("error", joinPath(path, "shell"), "PowerShell hooks are not supported; this handler never runs");
      return undefined;
    }
    if (c.checkPrograms !== false) {
      const problem = programProblem(
        def.command,
        def.args !== undefined,
        c.projectDir,
        c.pathVar ?? process.env.PATH,
        c.runDir,
      );
      // The program may be installed later (a linter, a notifier of another OS): as in Claude Code,
      // a handler that cannot start is a runtime failure, which its onFailure decides.
      if (problem) diag("warning", joinPath(path, "command"), `${problem}: ${failureEffect(def, c)}`);
    }
  }
  return def;
}

/**
 * A header naming a variable it will never get is sent with an empty value: a hook that
 * authenticates with it fails, and one meant to carry a provider key must not get it unasked.
 */
function checkHeaderVariables(def: HttpHandlerDef, c: HandlerContext): void {
  const allowed = new Set(def.allowedEnvVars ?? []);
  const policy = c.envPolicy ?? DEFAULT_ENV_POLICY;
  for (const [header, value] of Object.entries(def.headers ?? {})) {
    for (const name of new Set(headerVariables(value))) {
      const at = joinPath(joinPath(c.path, "headers"), header);
      const removed = policy.removal(name, "httpHeaders");
      if (!allowed.has(name)) {
        c.diag("warning", at, `$${name} is not in allowedEnvVars: the header is sent with it empty`);
      } else if (removed !== undefined) {
        c.diag(
          "warning",
          at,
          `$${name} is removed by the environment policy (${describeRemoval(removed)}): the header is sent with it empty unless commandHooks.passEnv lists it`,
        );
      }
    }
  }
}

/** What a handler that cannot start does at run time, in the words `hooks check` prints. */
function failureEffect(def: HandlerDefinition, c: HandlerContext): string {
  const spec = EVENT_SPECS[c.event];
  if ((def.onFailure ?? c.defaultOnFailure) === "block" && spec.failureCanBlock)
    return `each ${c.event} it runs for is blocked (onFailure "block")`;
  return "it fails each time it runs and the action goes ahead";
}

function fieldHint(key: string, dialect: Dialect): string {
  if (/^timeout/i.test(key)) {
    return ` (use "timeout", in ${DIALECT_SPECS[dialect].timeoutUnit === "s" ? "seconds" : "milliseconds"})`;
  }
  if (key === "enabled" || key === "id") return ' (a Code Puppy field; set this source\'s dialect to "code-puppy")';
  return "";
}
