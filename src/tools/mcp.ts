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
import { linkedSignal } from "../core/abort.js";
import { DEFAULT_ENV_POLICY, type Env, type EnvPolicy } from "../core/env-policy.js";
import { maskSecrets } from "../core/secrets.js";
import type { BashSandbox } from "../sandbox/bash.js";
import { VERSION } from "../version.js";
import {
  expandServerConfig,
  isHttpUrl,
  type McpServerConfig,
  McpServerConfigSchema,
  type McpServersConfig,
} from "./mcp-config.js";
import { mcpToolName } from "./mcp-name.js";
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
  /** The sandbox a stdio server with `"sandbox": true` runs in; without an active one such a server does not start. */
  readonly sandbox?: BashSandbox;
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

/** Where one configured server stands. */
export type McpServerStatus = "starting" | "connected" | "failed" | "disconnected" | "closed";

/** A configured server as `gatehouse mcp list` shows it. */
export interface McpServerState {
  readonly name: string;
  readonly transport: "stdio" | "http" | "sse";
  readonly status: McpServerStatus;
  /** The names the model sees (`mcp__<server>__<tool>`), once connected. */
  readonly tools: readonly string[];
  /** Why it failed (masked), or what had to be skipped. */
  readonly errors: readonly string[];
  /** How long it took to connect or fail (ms). */
  readonly startupMs?: number;
}

/**
 * The configured servers, started at once and concurrently, in the background: nothing waits for
 * them until it needs their tools (`settled`). Each server has its own startup timeout; one that
 * fails or hangs is marked failed once and never waited on again in this process.
 */
export interface McpServerPool {
  /** Every server has connected or failed (or was closed). Never rejects. */
  settled(): Promise<void>;
  /** The servers' tools, once `settled` (a tool name two servers share is kept once). */
  readonly tools: readonly Tool[];
  readonly diagnostics: readonly McpDiagnostic[];
  /** Where each server stands right now. */
  servers(): McpServerState[];
  /** Stops every server; safe to call more than once. */
  close(): Promise<void>;
}

/** Starts every configured server concurrently and returns at once (see `McpServerPool`). */
export function startMcpServers(config: McpServersConfig, options: ConnectMcpOptions): McpServerPool {
  const diagnostics: McpDiagnostic[] = [];
  const tools: Tool[] = [];
  const seen = new Map<string, string>();
  const entries = Object.entries(config).map(([name, entry]) => ({
    name,
    transport: transportOf(entry),
    status: "starting" as McpServerStatus,
    errors: [] as string[],
    toolNames: [] as string[],
    startupMs: undefined as number | undefined,
    server: undefined as ConnectedServer | undefined,
  }));
  let closing: Promise<void> | undefined;
  // Closing stops the servers still starting too: their handshakes are abandoned, their processes stopped.
  const stop = new AbortController();
  const began = performance.now();
  const all = Promise.all(
    entries.map(async (e) => {
      try {
        const server = await connectServer(e.name, config[e.name] as McpServerConfig, options, stop.signal, () => {
          if (e.status === "connected") e.status = "disconnected";
        });
        e.startupMs = Math.round(performance.now() - began);
        if (closing !== undefined) {
          await server.client.close().catch(() => {});
          return;
        }
        e.server = server;
        e.status = "connected";
        for (const d of server.diagnostics) {
          diagnostics.push(d);
          e.errors.push(d.message);
        }
        for (const tool of server.tools) {
          const other = seen.get(tool.name);
          if (other !== undefined) {
            const message = `tool ${tool.name} is also provided by server "${other}"; skipped`;
            diagnostics.push({ server: e.name, message });
            e.errors.push(message);
            continue;
          }
          seen.set(tool.name, e.name);
          tools.push(tool);
          e.toolNames.push(tool.name);
        }
      } catch (error) {
        e.startupMs = Math.round(performance.now() - began);
        e.status = closing === undefined ? "failed" : "closed";
        // A URL in the config may carry a password, and a server's stderr anything: masked here, once.
        const message = maskSecrets(String((error as Error)?.message ?? error));
        e.errors.push(message);
        diagnostics.push({ server: e.name, message });
        options.logger?.warn({ server: e.name }, `MCP server "${e.name}" is unavailable: ${message}`);
      }
    }),
  ).then(() => undefined);
  return {
    settled: () => all,
    tools,
    diagnostics,
    servers: () =>
      entries.map((e) => ({
        name: e.name,
        transport: e.transport,
        status: e.status,
        tools: [...e.toolNames],
        errors: [...e.errors],
        ...(e.startupMs === undefined ? {} : { startupMs: e.startupMs }),
      })),
    close() {
      if (closing === undefined) {
        // Marked first, so a deliberate shutdown is not logged as a server dropping out.
        for (const e of entries) {
          if (e.server) e.server.state.connected = false;
          if (e.status !== "failed") e.status = "closed";
        }
        stop.abort();
        closing = Promise.allSettled([...entries.map((e) => e.server?.client.close()), all]).then(() => undefined);
      }
      return closing;
    },
  };
}

function transportOf(entry: McpServerConfig): McpServerState["transport"] {
  if (entry.command !== undefined) return "stdio";
  return entry.type === "sse" ? "sse" : "http";
}

/**
 * Starts and connects every configured server in parallel and waits for all of them. A server
 * that cannot be started, crashes, or does not finish the handshake in time becomes a
 * diagnostic; the others still connect. Never rejects.
 */
export async function connectMcpServers(config: McpServersConfig, options: ConnectMcpOptions): Promise<McpConnection> {
  const pool = startMcpServers(config, options);
  await pool.settled();
  return { tools: [...pool.tools], diagnostics: [...pool.diagnostics], close: () => pool.close() };
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
  signal: AbortSignal,
  onDisconnect: () => void,
): Promise<ConnectedServer> {
  // Callers may hand over config that skipped validation; a bad entry must not start anything.
  const parsed = McpServerConfigSchema.safeParse(entry);
  if (!parsed.success) throw new Error(`invalid config: ${parsed.error.issues.map((i) => i.message).join("; ")}`);
  const { config, missing } = expandServerConfig(parsed.data, options.env ?? process.env);
  if (missing.length > 0)
    throw new Error(`missing environment variable${missing.length > 1 ? "s" : ""}: ${missing.join(", ")}`);
  // The server's own entry first, then the caller's (MCP_TIMEOUT), then the defaults.
  const timeout = config.startupTimeoutMs ?? options.startupTimeoutMs ?? 30_000;
  const toolTimeout = config.toolTimeoutMs ?? config.timeout ?? options.toolTimeoutMs ?? 600_000;
  const client =
    config.command !== undefined
      ? await connectStdio(name, config, options, { timeout, signal })
      : await connectRemote(config, { timeout, signal });
  try {
    const definitions = await listAllTools(client, { timeout, signal });
    const state = { connected: true };
    client.onclose = () => {
      if (state.connected) options.logger?.warn({ server: name }, `MCP server "${name}" disconnected`);
      if (state.connected) onDisconnect();
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
      tools.push(mcpTool(name, toolName, def, client, state, toolTimeout));
    }
    return { client, state, tools, diagnostics };
  } catch (err) {
    await client.close().catch(() => {});
    throw new Error(describeError(err, timeout, "tools/list"), { cause: err });
  }
}

/**
 * A server with `"sandbox": true` runs in the sandbox, under the Bash tool's policy; a host it
 * reaches must be on a list (there is no one to ask for a server). Where the sandbox is not
 * active, the server is not started: a sandbox asked for and missing is a refusal.
 */
async function sandboxedServer(command: string, args: readonly string[], cwd: string, options: ConnectMcpOptions) {
  const sandbox = options.sandbox;
  if (!sandbox?.active)
    throw new Error(`"sandbox": true, but ${sandbox?.unavailable ?? "the sandbox is off"}; the server was not started`);
  const quoted = [command, ...args].map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(" ");
  return sandbox.wrap(`exec ${quoted}`, "/bin/sh", cwd, {});
}

async function connectStdio(
  name: string,
  config: McpServerConfig,
  options: ConnectMcpOptions,
  limits: Limits,
): Promise<Client> {
  const timeout = limits.timeout;
  const command = config.command as string;
  const cwd = path.resolve(options.cwd, config.cwd ?? ".");
  const policy = options.envPolicy ?? DEFAULT_ENV_POLICY;
  const sandboxed =
    config.sandbox === true ? await sandboxedServer(command, config.args ?? [], cwd, options) : undefined;
  const transport = new GroupStdioTransport({
    command: sandboxed?.argv[0] ?? command,
    ...(sandboxed ? { args: sandboxed.argv.slice(1) } : config.args !== undefined ? { args: config.args } : {}),
    ...(sandboxed ? { onClose: () => sandboxed.release() } : {}),
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
    return await connectClient(transport, limits, (e) => {
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

/** A handshake's time limit, and the pool's signal that abandons it. */
interface Limits {
  readonly timeout: number;
  readonly signal: AbortSignal;
}

async function connectRemote(config: McpServerConfig, limits: Limits): Promise<Client> {
  const timeout = limits.timeout;
  const raw = config.url as string;
  if (!isHttpUrl(raw)) throw new Error(`invalid url: ${raw}`);
  const url = new URL(raw);
  const opts = config.headers !== undefined ? { requestInit: { headers: config.headers } } : {};
  const sse = () => connectClient(new SSEClientTransport(url, opts), limits);
  if (config.type === "sse") return sse().catch(rethrow(`${raw}: `, timeout));
  try {
    return await connectClient(new StreamableHTTPClientTransport(url, opts), limits);
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

async function connectClient(transport: Transport, limits: Limits, onError?: (err: Error) => void): Promise<Client> {
  const client = new Client({ name: "gatehouse", version: VERSION });
  if (onError !== undefined) client.onerror = onError;
  try {
    await client.connect(transport, limits);
    return client;
  } catch (err) {
    await client.close().catch(() => {});
    await transport.close().catch(() => {});
    throw err;
  }
}

async function listAllTools(client: Client, limits: Limits): Promise<McpToolDefinition[]> {
  if (client.getServerCapabilities()?.tools === undefined) return [];
  const all: McpToolDefinition[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor }, limits);
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
      // The SDK leaves its abort listener on the signal it is given: a signal of this call's own,
      // so the listener (and the client it holds) goes with the call, not with the run.
      const call = linkedSignal([ctx.signal]);
      try {
        result = await client.callTool({ name: def.name, arguments: input }, undefined, {
          signal: call.signal,
          timeout,
        });
      } catch (err) {
        throw new ToolError(
          `MCP server "${server}", tool ${def.name}: ${err instanceof Error ? err.message : String(err)}`,
          {
            cause: err,
          },
        );
      } finally {
        call.release();
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
