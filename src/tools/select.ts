import { lazyRequire } from "../core/lazy-require.js";
import { parseMcpName } from "./mcp-name.js";
import type { Tool } from "./types.js";

/** Loaded when a pattern is first compiled: most runs configure none. */
const picomatch = lazyRequire<typeof import("picomatch")>("picomatch");

export interface ToolSelection {
  /** When given, only tools matching one of these names or patterns are kept. */
  readonly allow?: readonly string[];
  /** Tools matching one of these are removed, even when `allow` lets them in. */
  readonly deny?: readonly string[];
}

/**
 * A pattern is a tool name or a picomatch glob over names (`mcp__github__*`, `{Edit,Write}`),
 * case-sensitive like Claude Code's matchers. A bare `mcp__<server>` means every tool of that
 * server, as in Claude Code's permission rules.
 */
export function toolNameMatcher(patterns: readonly string[]): (name: string) => boolean {
  const expanded = patterns.flatMap((p) => {
    const mcp = p.includes("*") ? undefined : parseMcpName(p);
    return mcp !== undefined && mcp.tool === undefined ? [p, `${p}__*`] : [p];
  });
  if (expanded.length === 0) return () => false;
  return picomatch()([...expanded], { dot: true });
}

/** Applies config `tools.allow` / `tools.deny`; deny wins. Order of `tools` is kept. */
export function selectTools<T extends Pick<Tool, "name">>(tools: readonly T[], selection: ToolSelection): T[] {
  const allowed = selection.allow === undefined ? () => true : toolNameMatcher(selection.allow);
  const denied = toolNameMatcher(selection.deny ?? []);
  return tools.filter((t) => allowed(t.name) && !denied(t.name));
}

/**
 * Patterns that match no tool: worth a startup warning, since a misspelt deny entry silently
 * denies nothing.
 */
export function unmatchedToolPatterns(tools: readonly Pick<Tool, "name">[], selection: ToolSelection): string[] {
  const patterns = [...(selection.allow ?? []), ...(selection.deny ?? [])];
  return patterns.filter((p) => {
    const matches = toolNameMatcher([p]);
    return !tools.some((t) => matches(t.name));
  });
}
