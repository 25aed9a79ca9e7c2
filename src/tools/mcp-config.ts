import { z } from "zod";

const stringMap = z.record(z.string(), z.string());

/**
 * One entry of `mcpServers`, in the shape Claude Code's `.mcp.json` and most MCP clients use:
 * `{ command, args?, env? }` for a stdio server or `{ url, headers? }` for a remote one.
 * `type` is optional and, when present, must agree with the form.
 */
export const McpServerConfigSchema = z
  .object({
    type: z.enum(["stdio", "http", "sse"]).optional(),
    command: z.string().min(1).optional(),
    args: z.array(z.string()).optional(),
    env: stringMap.optional(),
    /** Working directory of a stdio server; relative to the project directory. */
    cwd: z.string().optional(),
    url: z
      .string()
      .refine((u) => u.includes("${") || isHttpUrl(u), { message: "must be an http(s) URL" })
      .optional(),
    headers: stringMap.optional(),
    /** How long this server may take to start and list its tools (ms); default `MCP_TIMEOUT`, else 30 s. */
    startupTimeoutMs: z.number().int().positive().optional(),
    /** How long one call of this server's tools may take (ms); default 10 min. */
    toolTimeoutMs: z.number().int().positive().optional(),
    /** Claude Code's `.mcp.json` spelling of `toolTimeoutMs` (milliseconds per tool call). */
    timeout: z.number().int().positive().optional(),
    /** Run this stdio server in the Bash tool's sandbox, under the same policy (docs/security.md#sandbox). */
    sandbox: z.boolean().optional(),
  })
  .strict()
  .superRefine((cfg, ctx) => {
    if (cfg.timeout !== undefined && cfg.toolTimeoutMs !== undefined && cfg.timeout !== cfg.toolTimeoutMs) {
      ctx.addIssue({
        code: "custom",
        path: ["timeout"],
        message: '"timeout" is Claude Code\'s name for "toolTimeoutMs"; give one, or the same value',
      });
    }
    const stdioOnly = (["args", "env", "cwd", "sandbox"] as const).filter((k) => cfg[k] !== undefined);
    if ((cfg.command === undefined) === (cfg.url === undefined)) {
      ctx.addIssue({ code: "custom", message: 'an MCP server needs exactly one of "command" (stdio) or "url" (HTTP)' });
    } else if (cfg.command !== undefined) {
      if (cfg.type !== undefined && cfg.type !== "stdio") {
        ctx.addIssue({ code: "custom", path: ["type"], message: `type "${cfg.type}" needs "url", not "command"` });
      }
      if (cfg.headers !== undefined) {
        ctx.addIssue({ code: "custom", path: ["headers"], message: '"headers" applies to url servers only' });
      }
    } else {
      if (cfg.type === "stdio") {
        ctx.addIssue({ code: "custom", path: ["type"], message: 'type "stdio" needs "command", not "url"' });
      }
      for (const key of stdioOnly) {
        ctx.addIssue({ code: "custom", path: [key], message: `"${key}" applies to command servers only` });
      }
    }
  });
export type McpServerConfig = z.infer<typeof McpServerConfigSchema>;

/** True for an absolute http: or https: URL. */
export function isHttpUrl(value: string): boolean {
  try {
    const { protocol } = new URL(value);
    return protocol === "http:" || protocol === "https:";
  } catch {
    return false;
  }
}

/** The `mcpServers` block of `gatehouse.json`: server name → server. */
export const McpServersConfigSchema = z.record(z.string().min(1), McpServerConfigSchema);
export type McpServersConfig = z.infer<typeof McpServersConfigSchema>;

/**
 * Expands `${VAR}` and `${VAR:-default}` as Claude Code does in `.mcp.json`, so shared configs
 * keep secrets in the environment. Returns the names of variables that are unset without default.
 */
export function expandEnvVars(
  value: string,
  env: Readonly<Record<string, string | undefined>>,
): { value: string; missing: string[] } {
  const missing: string[] = [];
  const expanded = value.replace(
    /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g,
    (whole, name: string, fallback?: string) => {
      const v = env[name];
      if (v !== undefined) return v;
      if (fallback !== undefined) return fallback;
      missing.push(name);
      return whole;
    },
  );
  return { value: expanded, missing };
}

/** Applies expandEnvVars to every string of a server entry. */
export function expandServerConfig(
  cfg: McpServerConfig,
  env: Readonly<Record<string, string | undefined>>,
): { config: McpServerConfig; missing: string[] } {
  const missing = new Set<string>();
  const str = (s: string) => {
    const r = expandEnvVars(s, env);
    for (const m of r.missing) missing.add(m);
    return r.value;
  };
  const map = (m: Record<string, string> | undefined) =>
    m === undefined ? undefined : Object.fromEntries(Object.entries(m).map(([k, v]) => [k, str(v)]));
  const config: McpServerConfig = {
    ...cfg,
    ...(cfg.command !== undefined ? { command: str(cfg.command) } : {}),
    ...(cfg.args !== undefined ? { args: cfg.args.map(str) } : {}),
    ...(cfg.env !== undefined ? { env: map(cfg.env) } : {}),
    ...(cfg.cwd !== undefined ? { cwd: str(cfg.cwd) } : {}),
    ...(cfg.url !== undefined ? { url: str(cfg.url) } : {}),
    ...(cfg.headers !== undefined ? { headers: map(cfg.headers) } : {}),
  };
  return { config, missing: [...missing] };
}
