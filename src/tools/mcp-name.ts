/**
 * The one spelling of an MCP tool's name, `mcp__<server>__<tool>`, for everything that builds or
 * reads it: the MCP client registering tools, hooks that call an MCP tool, permission and `if`
 * rules, tool selection and foreign hook dialects. Server and tool names are normalised as Claude
 * Code does (every character outside `[A-Za-z0-9_-]` becomes `_`), so a server configured as
 * `my.server` is registered, looked up and named in rules as `mcp__my_server__…` alike.
 */

const PREFIX = "mcp__";
const SEPARATOR = "__";

/** Claude Code's normalisation of a server or tool name inside `mcp__<server>__<tool>`. */
export function normalizeMcpName(name: string): string {
  return name.replace(/[^a-zA-Z0-9_-]/g, "_");
}

/** The name the model and every rule see for a server's tool. */
export function mcpToolName(server: string, tool: string): string {
  return `${PREFIX}${normalizeMcpName(server)}${SEPARATOR}${normalizeMcpName(tool)}`;
}

/** Whether a tool name is an MCP tool's (or, in a rule, a server's: `mcp__github`). */
export function isMcpName(name: string): boolean {
  return name.startsWith(PREFIX);
}

/** An MCP name read back: the server, and the tool when the name has one (`mcp__github` has none). */
export interface McpNameParts {
  readonly server: string;
  readonly tool: string | undefined;
}

/**
 * Splits `mcp__<server>__<tool>` at the first `__` after the prefix (a normalised server name can
 * hold single underscores, never a leading pair). Undefined for a name that is not an MCP name.
 */
export function parseMcpName(name: string): McpNameParts | undefined {
  if (!isMcpName(name)) return undefined;
  const rest = name.slice(PREFIX.length);
  const at = rest.indexOf(SEPARATOR);
  if (at === -1) return rest === "" ? undefined : { server: rest, tool: undefined };
  const server = rest.slice(0, at);
  return server === "" ? undefined : { server, tool: rest.slice(at + SEPARATOR.length) };
}

/**
 * A name as a person wrote it in a rule, in the form the registry uses: server and tool parts
 * normalised, a glob's `*` kept (`mcp__my.server__get_*` is `mcp__my_server__get_*`).
 */
export function canonicalMcpName(name: string): string {
  const parts = parseMcpName(name);
  if (parts === undefined) return name;
  const keepGlob = (part: string) => part.split("*").map(normalizeMcpName).join("*");
  const server = `${PREFIX}${keepGlob(parts.server)}`;
  return parts.tool === undefined ? server : `${server}${SEPARATOR}${keepGlob(parts.tool)}`;
}
