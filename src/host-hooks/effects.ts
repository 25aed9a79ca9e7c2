import type { Agent } from "./hosts.js";

/**
 * Which verdicts of which catalog hooks take effect on each agent, and how: what `gatehouse hook
 * install` prints and what docs/hosts/*.md tabulate (scripts/hosts-doc.ts). Each row names the
 * test that proves it; "round trip" tests prove that the answer is what Gatehouse's own reader of
 * that agent's hooks (src/command-hooks/foreign.ts) reads as the verdict, "real" ones that the
 * real agent did it.
 */
export type Takes = "yes" | "partly" | "no";

export interface Effect {
  readonly takes: Takes;
  readonly how: string;
  /** The test file (and test name) that proves the row. */
  readonly proof?: string;
}

export interface EffectRow {
  readonly hook: string;
  readonly verdict: string;
  readonly on: Readonly<Record<Agent, Effect>>;
}

const REAL = "test/host-hooks/real-claude.test.ts";
const ROUND = "test/host-hooks/answer.test.ts";
/** A row: the hook, the verdict, then per agent `[takes, how, proof?]`. */
type Cell = readonly [Takes, string, string?];
const row = (hook: string, verdict: string, cells: Readonly<Record<Agent, Cell>>): EffectRow => ({
  hook,
  verdict,
  on: Object.fromEntries(
    Object.entries(cells).map(([agent, [takes, how, proof]]) => [agent, { takes, how, ...(proof ? { proof } : {}) }]),
  ) as Record<Agent, Effect>,
});
const everywhere = (cell: Cell) => ({ claude: cell, codex: cell, gemini: cell, cursor: cell });

export const EFFECTS: readonly EffectRow[] = [
  row("before_tool_call", "block (and deny rules)", {
    claude: ["yes", 'PreToolUse `permissionDecision: "deny"`; the model reads the message', `${REAL}`],
    codex: ["yes", 'PreToolUse `permissionDecision: "deny"` with the message', ROUND],
    gemini: ["yes", 'BeforeTool `decision: "deny"` with the message', ROUND],
    cursor: ["yes", 'preToolUse `permission: "deny"`, the message as `user_message` and `agent_message`', ROUND],
  }),
  row("before_tool_call", "params (rewrite the input)", {
    claude: ["yes", "PreToolUse `updatedInput`", ROUND],
    codex: [
      "partly",
      "`updatedInput`, which Codex takes only with `allow`: the rewritten call also skips Codex's approval; an `apply_patch` input is not rewritten",
      ROUND,
    ],
    gemini: [
      "partly",
      "BeforeTool `tool_input`, which Gemini CLI merges over the model's arguments: keys can change, not disappear",
      ROUND,
    ],
    cursor: ["yes", "preToolUse `updated_input`", ROUND],
  }),
  row("before_tool_call", "requireApproval, permissionDecision ask (and ask rules)", {
    claude: ["yes", 'PreToolUse `permissionDecision: "ask"`', ROUND],
    codex: ["no", "Codex refuses `ask` from a hook: the call is denied instead (fail closed)", ROUND],
    gemini: ["yes", 'BeforeTool `decision: "ask"`', ROUND],
    cursor: ["yes", 'preToolUse `permission: "ask"`', ROUND],
  }),
  row("before_tool_call", "permissionDecision allow", {
    claude: ["yes", 'PreToolUse `permissionDecision: "allow"` (the agent\'s deny and ask rules still apply)', ROUND],
    codex: ["yes", '`permissionDecision: "allow"` with the input unchanged as `updatedInput`', ROUND],
    gemini: ["yes", 'BeforeTool `decision: "allow"`', ROUND],
    cursor: ["yes", 'preToolUse `permission: "allow"`', ROUND],
  }),
  row("after_tool_call", "result (rewrite the output)", {
    claude: [
      "yes",
      "PostToolUse `updatedToolOutput` in the tool's own shape (Bash, Read, MCP and text outputs); for a tool whose shape Gatehouse cannot write, the turn stops (`continue: false`) before the model reads the output. Claude Code's own transcript may keep the original output",
      `${REAL}`,
    ],
    codex: [
      "partly",
      "Codex cannot replace an output: the turn stops (`continue: false`) before the model reads it",
      ROUND,
    ],
    gemini: [
      "partly",
      'AfterTool `decision: "deny"`: the model reads the rewritten output in the result\'s place, as a denial',
      ROUND,
    ],
    cursor: ["no", "Cursor's postToolUse cannot replace an output (stderr says so)", ROUND],
  }),
  row("after_tool_call", "block (withhold the output)", {
    claude: [
      "yes",
      "`updatedToolOutput` carries Gatehouse's notice in the output's place (a failure, which Claude Code cannot replace, stops the turn instead)",
      ROUND,
    ],
    codex: ["partly", "the turn stops (`continue: false`) before the model reads the output", ROUND],
    gemini: ["yes", 'AfterTool `decision: "deny"`: the notice replaces the result', ROUND],
    cursor: ["no", "Cursor's postToolUse cannot withhold an output (stderr says so)", ROUND],
  }),
  row("after_tool_call", "additionalContext", {
    claude: ["yes", "PostToolUse `additionalContext`", ROUND],
    codex: ["yes", "PostToolUse `additionalContext`", ROUND],
    gemini: ["yes", "AfterTool `additionalContext`", ROUND],
    cursor: ["yes", "postToolUse `additional_context`", ROUND],
  }),
  row("before_input", "block", {
    claude: ["yes", 'UserPromptSubmit `decision: "block"`: the prompt is dropped, the user reads the message', ROUND],
    codex: ["yes", 'UserPromptSubmit `decision: "block"`', ROUND],
    gemini: ["yes", 'BeforeAgent `decision: "deny"`', ROUND],
    cursor: ["yes", "beforeSubmitPrompt `continue: false` with `user_message`", ROUND],
  }),
  row("before_agent_finalize", "retry (one more pass)", {
    claude: ["yes", 'Stop `decision: "block"` with the instruction; one pass per answer', ROUND],
    codex: ["yes", 'Stop `decision: "block"` with the instruction', ROUND],
    gemini: ["yes", 'AfterAgent `decision: "deny"` with the instruction as the next prompt', ROUND],
    cursor: [
      "partly",
      "stop `followup_message`; Cursor's stop payload carries no answer text, so `lastAssistantMessage` is empty",
      ROUND,
    ],
  }),
  row(
    "before_response_emit, message_sending",
    "rewrite or withhold the answer",
    everywhere([
      "no",
      "the agent prints and keeps its final answer itself; no hook of it can rewrite or withhold the answer",
    ]),
  ),
  row(
    "tool_result_persist, before_message_write",
    "what is stored",
    everywhere([
      "no",
      "the agent writes its own transcript: a withheld or rewritten output may stay there as the tool gave it",
    ]),
  ),
];

/** The rows as `hook install` prints them for one agent: what takes effect, and what does not. */
export function effectLines(agent: Agent): { readonly takes: Takes; readonly line: string }[] {
  return EFFECTS.map((row) => {
    const e = row.on[agent];
    return { takes: e.takes, line: `${row.hook} ${row.verdict}: ${e.how}` };
  });
}
