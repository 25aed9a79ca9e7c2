import type { ConnectMcpOptions, McpConnection } from "./mcp.js";
import type { McpServersConfig } from "./mcp-config.js";

export * from "./builtin/index.js";
export type { ConnectMcpOptions, McpConnection, McpDiagnostic, McpLogger, McpToolOutput } from "./mcp.js";
export * from "./mcp-config.js";
export * from "./select.js";
export * from "./types.js";

/**
 * Starts the configured MCP servers and lists their tools (see ./mcp.ts). The MCP SDK and its
 * dependencies load when this is first called, not when the package is imported.
 */
export async function connectMcpServers(config: McpServersConfig, options: ConnectMcpOptions): Promise<McpConnection> {
  return (await import("./mcp.js")).connectMcpServers(config, options);
}
