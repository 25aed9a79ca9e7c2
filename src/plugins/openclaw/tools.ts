/**
 * OpenClaw's core tools and Gatehouse's built-in tools, both ways: the names a plugin sees
 * (`exec` for `Bash`), the shape of their params (`path` for `file_path`), and the shape of a
 * result (OpenClaw's `{ content, details }`). A tool with no counterpart keeps its own name, so
 * plugin tools and MCP tools (`mcp__server__tool`) read the same on both sides.
 */

type Params = Record<string, unknown>;

export interface ToolMapping {
  /** OpenClaw's tool id, as plugins name it in events and matchers. */
  readonly openclaw: string;
  /** The Gatehouse tool(s) it stands for; the first is the one a rename leads to. */
  readonly gatehouse: readonly string[];
  /** How params differ, for the reference table (`gatehouse ⇄ openclaw`). */
  readonly fields: string;
  /** Gatehouse params → OpenClaw's (what the plugin's event holds). */
  toOpenClaw(params: Params): Params;
  /** OpenClaw params (a plugin's rewrite) → Gatehouse's. */
  fromOpenClaw(params: Params): Params;
}

const isRecord = (v: unknown): v is Params => typeof v === "object" && v !== null && !Array.isArray(v);

/** Renames keys; other keys pass through unchanged. */
function renamer(pairs: readonly (readonly [string, string])[]): Pick<ToolMapping, "toOpenClaw" | "fromOpenClaw"> {
  const rename = (params: Params, from: 0 | 1): Params => {
    const out: Params = {};
    for (const [key, value] of Object.entries(params)) {
      const pair = pairs.find((p) => p[from] === key);
      out[pair ? pair[from === 0 ? 1 : 0] : key] = value;
    }
    return out;
  };
  return { toOpenClaw: (p) => rename(p, 0), fromOpenClaw: (p) => rename(p, 1) };
}

const bash = renamer([["description", "title"]]);

export const TOOL_MAPPINGS: readonly ToolMapping[] = [
  {
    openclaw: "exec",
    gatehouse: ["Bash"],
    fields:
      "`command`; `timeout` (ms) ⇄ `timeoutSeconds` (s); `description` ⇄ `title`; `workdir`, `env`, `background`, `pty`, `elevated`, `host` have no Bash counterpart (a rewrite setting them is applied without them)",
    toOpenClaw(params) {
      const { timeout, ...rest } = bash.toOpenClaw(params);
      return typeof timeout === "number" ? { ...rest, timeoutSeconds: timeout / 1000 } : rest;
    },
    fromOpenClaw(params) {
      const { timeoutSeconds, ...rest } = bash.fromOpenClaw(params);
      return typeof timeoutSeconds === "number" && timeoutSeconds > 0
        ? { ...rest, timeout: timeoutSeconds * 1000 }
        : rest;
    },
  },
  {
    openclaw: "read",
    gatehouse: ["Read"],
    fields: "`file_path` ⇄ `path`; `offset`, `limit`",
    ...renamer([["file_path", "path"]]),
  },
  {
    openclaw: "write",
    gatehouse: ["Write"],
    fields: "`file_path` ⇄ `path`; `content`",
    ...renamer([["file_path", "path"]]),
  },
  {
    openclaw: "edit",
    gatehouse: ["Edit"],
    fields: "`file_path` ⇄ `path`; `old_string`, `new_string` ⇄ `edits: [{ oldText, newText }]` (one edit)",
    toOpenClaw(params) {
      const { file_path, old_string, new_string, ...rest } = params;
      return { ...rest, path: file_path, edits: [{ oldText: old_string, newText: new_string }] };
    },
    fromOpenClaw(params) {
      const { path, edits, oldText, newText, ...rest } = params;
      // OpenClaw also takes one top-level oldText/newText pair (its prepareArguments folds it in).
      const list = Array.isArray(edits) ? edits : typeof oldText === "string" ? [{ oldText, newText }] : [];
      // Several edits in one call have no Edit equivalent: left as they are, the rewrite fails
      // Edit's input check, and the call is refused rather than half applied.
      if (list.length !== 1 || !isRecord(list[0])) return { ...rest, file_path: path, edits };
      return { ...rest, file_path: path, old_string: list[0].oldText, new_string: list[0].newText };
    },
  },
  {
    openclaw: "find",
    gatehouse: ["Glob"],
    fields: "`pattern`, `path`",
    ...renamer([]),
  },
  {
    openclaw: "grep",
    gatehouse: ["Grep"],
    fields: "`pattern`, `path`, `glob`; `-i` ⇄ `ignoreCase`; `-C` ⇄ `context`; `head_limit` ⇄ `limit`",
    ...renamer([
      ["-i", "ignoreCase"],
      ["-C", "context"],
      ["head_limit", "limit"],
    ]),
  },
  {
    openclaw: "sessions_spawn",
    gatehouse: ["Agent"],
    fields: "`prompt` ⇄ `task`; `description` ⇄ `label`; `subagent_type` ⇄ `agentId`",
    ...renamer([
      ["prompt", "task"],
      ["description", "label"],
      ["subagent_type", "agentId"],
    ]),
  },
  {
    openclaw: "apply_patch",
    gatehouse: ["Write", "Edit"],
    fields:
      "a matcher naming `apply_patch` matches Write and Edit (Gatehouse's file-changing tools); events name them `write` and `edit`",
    ...renamer([]),
  },
];

/** OpenClaw's tools with no Gatehouse counterpart: a matcher may name them; nothing fires them. */
export const OPENCLAW_ONLY_TOOLS: readonly string[] = ["process", "ls"];

const BY_GATEHOUSE = new Map<string, ToolMapping>();
for (const m of TOOL_MAPPINGS) for (const name of m.gatehouse) if (!BY_GATEHOUSE.has(name)) BY_GATEHOUSE.set(name, m);
const BY_OPENCLAW = new Map(TOOL_MAPPINGS.map((m) => [m.openclaw, m]));

/** Names OpenClaw reserves for its core tools: a plugin tool may not take them. */
export const OPENCLAW_CORE_TOOLS: ReadonlySet<string> = new Set([
  ...TOOL_MAPPINGS.map((m) => m.openclaw),
  ...OPENCLAW_ONLY_TOOLS,
]);

/** A Gatehouse tool name as an OpenClaw plugin sees it. */
export function openClawToolName(gatehouse: string): string {
  return BY_GATEHOUSE.get(gatehouse)?.openclaw ?? gatehouse;
}

/** Gatehouse params as an OpenClaw plugin sees them. */
export function toOpenClawParams(gatehouseTool: string, params: unknown): unknown {
  const m = BY_GATEHOUSE.get(gatehouseTool);
  return m && isRecord(params) ? m.toOpenClaw(params) : params;
}

/** A plugin's params rewrite, back in the Gatehouse tool's shape. */
export function fromOpenClawParams(gatehouseTool: string, params: unknown): unknown {
  const m = BY_GATEHOUSE.get(gatehouseTool);
  return m && isRecord(params) ? m.fromOpenClaw(params) : params;
}

export class ToolMatcherError extends Error {}

/** OpenClaw rejects these in matchers (they are aliases, not tool ids); so does the adapter. */
const NON_CANONICAL = new Set(["bash", "exec_command", "apply-patch", "Write", "Edit", "agent"]);

/**
 * An OpenClaw matcher (a non-empty list of tool ids, case-insensitive) as the Gatehouse tool
 * names it covers. Names without a counterpart stay as written, for plugin and MCP tools.
 */
export function gatehouseMatcher(matcher: unknown): string[] {
  if (!Array.isArray(matcher) || matcher.length === 0)
    throw new ToolMatcherError("an OpenClaw tool matcher is a non-empty array of tool ids");
  const names = new Set<string>();
  for (const entry of matcher) {
    if (typeof entry !== "string" || entry.trim() === "")
      throw new ToolMatcherError("tool matcher entries must be non-empty strings");
    const id = entry.trim().toLowerCase();
    if (id === "*") throw new ToolMatcherError("tool matcher wildcard entries are not supported (omit the matcher)");
    if (NON_CANONICAL.has(id) || NON_CANONICAL.has(entry.trim()))
      throw new ToolMatcherError(`"${entry}" is not a canonical OpenClaw tool id (exec, read, write, edit, …)`);
    const m = BY_OPENCLAW.get(id);
    if (m) for (const name of m.gatehouse) names.add(name);
    else names.add(entry.trim());
  }
  return [...names];
}

/** OpenClaw's tool result shape: the text the model reads, and the structured details. */
export interface OpenClawToolResult {
  readonly content: readonly { readonly type: "text"; readonly text: string }[];
  readonly details: unknown;
}

/** A Gatehouse tool output in OpenClaw's `{ content, details }` shape (details: the output itself). */
export function toOpenClawResult(output: unknown): OpenClawToolResult {
  if (isOpenClawResult(output)) return output;
  return { content: [{ type: "text", text: resultText(output) }], details: output };
}

export function isOpenClawResult(value: unknown): value is OpenClawToolResult {
  return isRecord(value) && Array.isArray(value.content) && "details" in value;
}

function resultText(output: unknown): string {
  if (typeof output === "string") return output;
  if (isRecord(output) && typeof output.stdout === "string") {
    const stderr = typeof output.stderr === "string" && output.stderr !== "" ? `\n${output.stderr}` : "";
    return `${output.stdout}${stderr}`;
  }
  return JSON.stringify(output) ?? "";
}

/** The text parts of an OpenClaw result, joined (what the model reads). */
export function openClawResultText(result: OpenClawToolResult): string {
  return result.content
    .filter((c) => isRecord(c) && c.type === "text" && typeof c.text === "string")
    .map((c) => c.text)
    .join("\n");
}
