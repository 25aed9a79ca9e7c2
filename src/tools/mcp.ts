import { existsSync } from "node:fs";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  type CallToolResult,
  ErrorCode,
  McpError,
  type Tool as McpToolDefinition,
} from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { DEFAULT_ENV_POLICY, type Env, type EnvPolicy } from "../core/env-policy.js";
import { maskSecrets } from "../core/secrets.js";
import { VERSION } from "../version.js";
import {
  expandServerConfig,
  isHttpUrl,
  type McpServerConfig,
  McpServerConfigSchema,
  type McpServersConfig,
} from "./mcp-config.js";
import { GroupStdioTransport } from "./mcp-stdio.js";
import { type Tool, ToolError } from "./types.js";

export * from "./mcp-config.js";

/** The content blocks an MCP tool returned: what `tool_response` holds for MCP tools in Claude Code. */
export type McpToolOutput = CallToolResult["content"];

export interface McpDiagnostic {
  readonly server: string;
  readonly message: string;
}

/** The few logger methods used; a pino logger fits. */
export interface McpLogger {
  warn(obj: Record<string, unknown>, msg: string): void;
  debug(obj: Record<string, unknown>, msg: string): void;
}

export interface ConnectMcpOptions {
  /** The project directory: stdio servers start in it (or in their `cwd`, resolved against it). */
  readonly cwd: string;
  readonly logger?: McpLogger;
  /** How long a server may take to start and answer `initialize` and `tools/list` (default 30 s). */
  readonly startupTimeoutMs?: number;
  /** Per tool call (default 10 min); the run's signal can still cancel sooner. */
  readonly toolTimeoutMs?: number;
  /** Where `${VAR}` in the config is looked up, and what stdio servers inherit from (default process.env). */
  readonly env?: Env;
  /**
   * What of `env` a stdio server inherits (default: the MCP SDK's minimal set — PATH, HOME, … —
   * with provider keys and Gatehouse's secrets removed). The server's own `env` comes on top.
   */
  readonly envPolicy?: EnvPolicy;
  /** Between closing a stdio server's stdin, SIGTERM and SIGKILL to its process group (default 1000 ms). */
  readonly killGraceMs?: number;
}

export interface McpConnection {
  readonly tools: Tool[];
  /** One entry per server that could not be used (or tool that had to be skipped). */
  readonly diagnostics: McpDiagnostic[];
  /** Stops every server; safe to call more than once. */
  close(): Promise<void>;
}

/** Providers accept tool names of `^[a-zA-Z0-9_-]{1,64}$`; longer ones would fail every model call. */
const MAX_TOOL_NAME = 64;
const STDERR_TAIL = 2000;

/** Claude Code's normalization of server and tool names inside `mcp__<server>__<tool>`. */
export function normalizeMcpName(name: string): string {
  return name.replace(/[^a-zA-Z0-9_-]/g, "_");
}

export function mcpToolName(server: string, tool: string): string {
  return `mcp__${normalizeMcpName(server)}__${normalizeMcpName(tool)}`;
}

/**
 * Starts and connects every configured server in parallel. A server that cannot be started,
 * crashes, or does not finish the handshake in time becomes a diagnostic; the others still
 * connect. Never rejects.
 */
export async function connectMcpServers(config: McpServersConfig, options: ConnectMcpOptions): Promise<McpConnection> {
  const diagnostics: McpDiagnostic[] = [];
  const servers: ConnectedServer[] = [];
  const tools: Tool[] = [];
  const seen = new Map<string, string>();
  const names = Object.keys(config);
  const settled = await Promise.allSettled(
    names.map((name) => connectServer(name, config[name] as McpServerConfig, options)),
  );
  settled.forEach((result, i) => {
    const server = names[i] as string;
    if (result.status === "rejected") {
      // A URL in the config may carry a password, and a server's stderr anything: masked here, once.
      diagnostics.push({ server, message: maskSecrets(String((result.reason as Error)?.message ?? result.reason)) });
      options.logger?.warn({ server }, `MCP server "${server}" is unavailable: ${diagnostics.at(-1)?.message}`);
      return;
    }
    servers.push(result.value);
    diagnostics.push(...result.value.diagnostics);
    for (const tool of result.value.tools) {
      const other = seen.get(tool.name);
      if (other !== undefined) {
        diagnostics.push({ server, message: `tool ${tool.name} is also provided by server "${other}"; skipped` });
        continue;
      }
      seen.set(tool.name, server);
      tools.push(tool);
    }
  });
  let closing: Promise<void> | undefined;
  return {
    tools,
    diagnostics,
    close() {
      if (closing === undefined) {
        // Marked first, so a deliberate shutdown is not logged as a server dropping out.
        for (const s of servers) s.state.connected = false;
        closing = Promise.allSettled(servers.map((s) => s.client.close())).then(() => undefined);
      }
      return closing;
    },
  };
}

interface ConnectedServer {
  readonly client: Client;
  readonly state: { connected: boolean };
  readonly tools: Tool[];
  readonly diagnostics: McpDiagnostic[];
}

async function connectServer(
  name: string,
  entry: McpServerConfig,
  options: ConnectMcpOptions,
): Promise<ConnectedServer> {
  // Callers may hand over config that skipped validation; a bad entry must not start anything.
  const parsed = McpServerConfigSchema.safeParse(entry);
  if (!parsed.success) throw new Error(`invalid config: ${parsed.error.issues.map((i) => i.message).join("; ")}`);
  const { config, missing } = expandServerConfig(parsed.data, options.env ?? process.env);
  if (missing.length > 0)
    throw new Error(`missing environment variable${missing.length > 1 ? "s" : ""}: ${missing.join(", ")}`);
  const timeout = options.startupTimeoutMs ?? 30_000;
  const client =
    config.command !== undefined
      ? await connectStdio(name, config, options, timeout)
      : await connectRemote(config, timeout);
  try {
    const definitions = await listAllTools(client, timeout);
    const state = { connected: true };
    client.onclose = () => {
      if (state.connected) options.logger?.warn({ server: name }, `MCP server "${name}" disconnected`);
      state.connected = false;
    };
    const diagnostics: McpDiagnostic[] = [];
    const tools: Tool[] = [];
    for (const def of definitions) {
      const toolName = mcpToolName(name, def.name);
      if (toolName.length > MAX_TOOL_NAME) {
        diagnostics.push({
          server: name,
          message: `tool name ${toolName} is longer than ${MAX_TOOL_NAME} characters; skipped`,
        });
        continue;
      }
      tools.push(mcpTool(name, toolName, def, client, state, options.toolTimeoutMs ?? 600_000));
    }
    return { client, state, tools, diagnostics };
  } catch (err) {
    await client.close().catch(() => {});
    throw new Error(describeError(err, timeout, "tools/list"), { cause: err });
  }
}

async function connectStdio(
  name: string,
  config: McpServerConfig,
  options: ConnectMcpOptions,
  timeout: number,
): Promise<Client> {
  const command = config.command as string;
  const cwd = path.resolve(options.cwd, config.cwd ?? ".");
  const policy = options.envPolicy ?? DEFAULT_ENV_POLICY;
  const transport = new GroupStdioTransport({
    command,
    ...(config.args !== undefined ? { args: config.args } : {}),
    // Third-party servers get a minimal environment under the policy, plus what their entry's
    // `env` gives them: the one way to hand a server a key.
    env: { ...policy.environment(options.env ?? process.env, "mcp"), ...config.env },
    cwd,
    ...(options.killGraceMs === undefined ? {} : { killGraceMs: options.killGraceMs }),
  });
  let stderrTail = "";
  transport.stderr.on("data", (chunk: Buffer) => {
    const text = chunk.toString("utf8");
    stderrTail = (stderrTail + text).slice(-STDERR_TAIL);
    options.logger?.debug({ server: name }, maskSecrets(text.trimEnd()));
  });
  let protocolError: Error | undefined;
  try {
    return await connectClient(transport, timeout, (e) => {
      // EPIPE and friends only echo the exit; a parse error says the server spoke something else.
      if ((e as NodeJS.ErrnoException).code === undefined) protocolError ??= e;
    });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") {
      throw new Error(existsSync(cwd) ? `command not found: ${command}` : `working directory does not exist: ${cwd}`, {
        cause: err,
      });
    }
    // Give the process's last words a moment to arrive; they usually say why it died.
    await new Promise((resolve) => setImmediate(resolve));
    const tail = stderrTail.trim();
    const garbled = protocolError === undefined ? "" : `; its stdout was not MCP: ${protocolError.message}`;
    throw new Error(`${describeError(err, timeout)}${garbled}${tail ? `; stderr: ${tail}` : ""}`, { cause: err });
  }
}

async function connectRemote(config: McpServerConfig, timeout: number): Promise<Client> {
  const raw = config.url as string;
  if (!isHttpUrl(raw)) throw new Error(`invalid url: ${raw}`);
  const url = new URL(raw);
  const opts = config.headers !== undefined ? { requestInit: { headers: config.headers } } : {};
  const sse = () => connectClient(new SSEClientTransport(url, opts), timeout);
  if (config.type === "sse") return sse().catch(rethrow(`${raw}: `, timeout));
  try {
    return await connectClient(new StreamableHTTPClientTransport(url, opts), timeout);
  } catch (err) {
    if (config.type === "http") throw new Error(`${raw}: ${describeError(err, timeout)}`, { cause: err });
    // The SDK's documented fallback for servers that only speak the older HTTP+SSE transport.
    return sse().catch(rethrow(`${raw}: Streamable HTTP: ${describeError(err, timeout)}; SSE fallback: `, timeout));
  }
}

function rethrow(prefix: string, timeout: number): (err: unknown) => never {
  return (err) => {
    throw new Error(prefix + describeError(err, timeout), { cause: err });
  };
}

async function connectClient(transport: Transport, timeout: number, onError?: (err: Error) => void): Promise<Client> {
  const client = new Client({ name: "gatehouse", version: VERSION });
  if (onError !== undefined) client.onerror = onError;
  try {
    await client.connect(transport, { timeout });
    return client;
  } catch (err) {
    await client.close().catch(() => {});
    await transport.close().catch(() => {});
    throw err;
  }
}

async function listAllTools(client: Client, timeout: number): Promise<McpToolDefinition[]> {
  if (client.getServerCapabilities()?.tools === undefined) return [];
  const all: McpToolDefinition[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor }, { timeout });
    all.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return all;
}

function describeError(err: unknown, timeout: number, stage = "the MCP handshake"): string {
  if (err instanceof McpError) {
    if (err.code === ErrorCode.RequestTimeout) return `no answer to ${stage} within ${timeout} ms`;
    if (err.code === ErrorCode.ConnectionClosed) return `the server exited before completing ${stage}`;
  }
  if (!(err instanceof Error)) return String(err);
  // fetch hides the reason ("fetch failed"); the cause says ECONNREFUSED, bad certificate, …
  const cause = err.cause instanceof Error ? err.cause.message : undefined;
  return cause === undefined || err.message.includes(cause) ? err.message : `${err.message} (${cause})`;
}

const McpInputSchema = z.record(z.string(), z.unknown());
type McpInput = z.infer<typeof McpInputSchema>;

function mcpTool(
  server: string,
  name: string,
  def: McpToolDefinition,
  client: Client,
  state: { connected: boolean },
  timeout: number,
): Tool<McpInput, McpToolOutput> {
  return {
    name,
    description: def.description ?? def.title ?? def.annotations?.title ?? `Tool ${def.name} of MCP server ${server}`,
    inputSchema: McpInputSchema,
    jsonSchema: def.inputSchema,
    // Only tools the server declares read-only are safe to run beside other calls.
    parallel: def.annotations?.readOnlyHint === true,
    async execute(input, ctx) {
      if (!state.connected) throw new ToolError(`MCP server "${server}" is not connected`);
      let result: Awaited<ReturnType<Client["callTool"]>>;
      try {
        result = await client.callTool({ name: def.name, arguments: input }, undefined, {
          signal: ctx.signal,
          timeout,
        });
      } catch (err) {
        throw new ToolError(
          `MCP server "${server}", tool ${def.name}: ${err instanceof Error ? err.message : String(err)}`,
          {
            cause: err,
          },
        );
      }
      // Servers on the 2024-10-07 protocol answer with `toolResult` instead of `content`.
      const content: McpToolOutput = Array.isArray(result.content)
        ? (result.content as McpToolOutput)
        : [{ type: "text", text: JSON.stringify(result.toolResult ?? null) }];
      if (result.isError === true) {
        const text = contentToText(content);
        throw new ToolError(text === "" ? `MCP tool ${def.name} reported an error` : text, { details: content });
      }
      return content;
    },
    toModelOutput: contentToText,
  };
}

/** Text for the model; non-text blocks become a short placeholder (multimodal results are not forwarded yet). */
export function contentToText(content: McpToolOutput): string {
  return content
    .map((block) => {
      switch (block.type) {
        case "text":
          return block.text;
        case "image":
        case "audio":
          return `[${block.type}: ${block.mimeType}]`;
        case "resource":
          return "text" in block.resource ? block.resource.text : `[resource: ${block.resource.uri}]`;
        case "resource_link":
          return `[resource: ${block.uri}]`;
        default:
          return JSON.stringify(block);
      }
    })
    .join("\n");
}
