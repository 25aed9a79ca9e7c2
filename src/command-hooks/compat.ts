/**
 * How far Gatehouse runs Claude Code's hooks unchanged, as data: every Claude Code event, input
 * field, output field and handler type, with what Gatehouse does with it. docs/command-hooks.md
 * holds the rendered table (`npm run docs`); test/command-hooks/compat.test.ts checks the table
 * against the code (the events fired, the payload fields sent, the JSON fields read, the
 * handler types accepted), so neither can drift.
 */

export type Support = "supported" | "differs" | "not supported";

export interface CompatRow {
  readonly name: string;
  readonly support: Support;
  /** Why it differs, or why it is not supported; what it does where that needs saying. */
  readonly note: string;
}

const row = (name: string, support: Support, note = ""): CompatRow => ({ name, support, note });
const ok = (name: string, note = "") => row(name, "supported", note);
const differs = (name: string, note: string) => row(name, "differs", note);
const no = (name: string, note: string) => row(name, "not supported", note);

const NO_SUCH_THING = (what: string) => `Gatehouse has no ${what}`;

export const CLAUDE_CODE_EVENTS: readonly CompatRow[] = [
  differs(
    "SessionStart",
    "`resume` is the first run of a Gatehouse process on a session; context is queued for the next turn that passes its gates",
  ),
  ok(
    "SessionEnd",
    "when `run` ends (`other`), when chat ends (`prompt_input_exit`), on `/reset` (`clear`); also on `sessions rm` (`other`)",
  ),
  differs("UserPromptSubmit", "also fires for slash commands and claimed turns, before either acts"),
  ok("PreToolUse"),
  differs(
    "PermissionRequest",
    "runs when a call would ask (docs/permissions.md) and for a remembered allow, but not for a PreToolUse `ask` with nobody to ask (as in `claude -p`); exit 2 denies; `continue: false` denies without ending the run",
  ),
  differs("PostToolUse", '`decision: "block"` withholds the output instead of adding the reason next to it'),
  differs("PostToolUseFailure", "can block: the failure's output is withheld"),
  ok("Stop"),
  differs("SubagentStop", "chosen by run depth rather than agent name"),
  ok("SubagentStart"),
  ok("PreCompact"),
  ok("PostCompact"),
  differs("Notification", "fires for approval requests only (`permission_prompt`)"),
  ok("StopFailure"),
  differs(
    "PermissionDenied",
    "fires for every denial of the permission check (a rule, the mode, nobody to ask, the person, a PermissionRequest deny), not only auto mode's (Gatehouse has none); not for a PreToolUse `ask` refused with nobody to ask, as in `claude -p`",
  ),
  differs(
    "PostToolBatch",
    "fires after every model step with tool calls, one call too; a block or `continue: false` ends the run (blocked, the reason as the reply)",
  ),
  no("Setup", NO_SUCH_THING("init or maintenance mode")),
  no("UserPromptExpansion", NO_SUCH_THING("skill expansion; `UserPromptSubmit` sees slash commands")),
  no("TaskCreated", NO_SUCH_THING("task list")),
  no("TaskCompleted", NO_SUCH_THING("task list")),
  no("TeammateIdle", NO_SUCH_THING("agent teams")),
  no("ConfigChange", "settings are read once, at start"),
  no("CwdChanged", "a run's working directory does not change"),
  no("FileChanged", NO_SUCH_THING("file watcher")),
  no("DirectoryAdded", NO_SUCH_THING("extra working directories")),
  no("InstructionsLoaded", NO_SUCH_THING("CLAUDE.md loading")),
  no("WorktreeCreate", NO_SUCH_THING("worktree management")),
  no("WorktreeRemove", NO_SUCH_THING("worktree management")),
  no("Elicitation", "MCP elicitation is not supported"),
  no("ElicitationResult", "MCP elicitation is not supported"),
  no("MessageDisplay", NO_SUCH_THING("transcript view")),
];

export const CLAUDE_CODE_INPUT_FIELDS: readonly CompatRow[] = [
  ok("session_id", "a sub-agent's events carry its own session's"),
  differs("transcript_path", "a JSONL transcript written for hooks, in step with every scrub"),
  ok("cwd"),
  ok("hook_event_name"),
  ok("permission_mode", "the mode in force (docs/permissions.md)"),
  differs("prompt_id", "the run id: one prompt is one run"),
  differs(
    "effort",
    "on the tool events, PostToolBatch, Stop and SubagentStop: gatehouse.json's `model.reasoningEffort` as the provider gets it, else the provider's default (Anthropic: `high`), also as `CLAUDE_EFFORT`; absent for a provider without an effort setting",
  ),
  ok("agent_id"),
  ok("agent_type"),
  differs("model", "SessionStart: the run's model as `provider:model`"),
  ok("source", "SessionStart"),
  ok(
    "session_title",
    "SessionStart, UserPromptSubmit: the session's title, when it has one (as a `sessionTitle` set it)",
  ),
  differs(
    "reason",
    "SessionEnd: `clear` (`/reset`), `prompt_input_exit` (chat ends) or `other`; PermissionDenied: what the model reads, the denial and why (a rule and its source, the mode…)",
  ),
  ok("prompt", "UserPromptSubmit"),
  ok("tool_name"),
  ok("tool_input"),
  ok("tool_use_id"),
  no("mcp_server", "the server is the middle part of an `mcp__<server>__<tool>` name"),
  differs(
    "tool_response",
    "in Claude Code's shapes; Bash adds `exitCode`, and its `noOutputExpected` says whether the call printed nothing (Claude Code predicts it from the command)",
  ),
  ok("duration_ms", "whole milliseconds"),
  ok("error", "PostToolUseFailure; StopFailure's kind"),
  differs("is_interrupt", "always `false`: a cancelled call ends the run, without a PostToolUseFailure"),
  ok("error_details", "StopFailure"),
  ok(
    "tool_calls",
    "PostToolBatch: each call's `tool_response` is the text the model reads (a withheld output's notice)",
  ),
  ok("permission_suggestions", 'PermissionRequest: the rules an "always" answer would add'),
  ok("stop_hook_active"),
  ok("last_assistant_message"),
  differs("background_tasks", "Stop, SubagentStop: always empty (Gatehouse has no background tasks)"),
  differs("session_crons", "Stop, SubagentStop: always empty (Gatehouse has no session crons)"),
  no("agent_transcript_path", "sub-agents have sessions of their own: their events carry their own `transcript_path`"),
  ok("trigger", "PreCompact, PostCompact"),
  ok("custom_instructions", "PreCompact: `/compact`'s instructions"),
  ok("compact_summary", "PostCompact"),
  ok("message", "Notification"),
  no("title", "Gatehouse's notifications have no title"),
  ok("notification_type"),
];

export const CLAUDE_CODE_OUTPUT_FIELDS: readonly CompatRow[] = [
  ok("continue", "`false` stops the agent; on tool events the run ends `blocked` with `stopReason` as its reply"),
  ok("stopReason", "shown to the user, never to the model"),
  ok("suppressOutput", "accepted and ignored, as in Claude Code"),
  differs("systemMessage", "a warning line in the log (stderr)"),
  no("terminalSequence", "Gatehouse never writes a hook's escape sequences to the terminal"),
  ok("decision", '`"block"` where the event can block; `"approve"` (legacy PreToolUse allow)'),
  ok("reason"),
  ok("hookSpecificOutput.hookEventName"),
  differs(
    "hookSpecificOutput.permissionDecision",
    "`defer` is no decision, with a warning line: Gatehouse has no deferred-tool exit for `--resume` to pick up",
  ),
  ok("hookSpecificOutput.permissionDecisionReason"),
  ok("hookSpecificOutput.updatedInput", "PreToolUse; PermissionRequest's with allow (both meet the deny rules again)"),
  differs(
    "hookSpecificOutput.additionalContext",
    "a blocked PreToolUse call's context is dropped (the call has no result to go next to)",
  ),
  ok("hookSpecificOutput.updatedToolOutput"),
  ok("hookSpecificOutput.updatedMCPToolOutput", "legacy, as `updatedToolOutput`"),
  differs(
    "hookSpecificOutput.decision",
    "PermissionRequest: `behavior`, `message` (what the model reads), `interrupt` (ends the run), `updatedInput`; `updatedPermissions` is ignored",
  ),
  ok("hookSpecificOutput.retry", "PermissionDenied: the model reads that it may try again; the call stays denied"),
  ok(
    "hookSpecificOutput.sessionTitle",
    "SessionStart (`startup`, `resume`), UserPromptSubmit: the session's title, as `sessions` lists it",
  ),
  ok(
    "hookSpecificOutput.suppressOriginalPrompt",
    "UserPromptSubmit: a block's message never repeats the prompt in Gatehouse, so it always holds",
  ),
  differs(
    "hookSpecificOutput.initialUserMessage",
    "SessionStart: type-checked (a string) and ignored: a Gatehouse run always has its prompt",
  ),
  differs(
    "hookSpecificOutput.watchPaths",
    `SessionStart: type-checked (strings) and ignored: ${NO_SUCH_THING("file watcher")}`,
  ),
  differs(
    "hookSpecificOutput.reloadSkills",
    `SessionStart: type-checked (a boolean) and ignored: ${NO_SUCH_THING("skills")}`,
  ),
  no("hookSpecificOutput.classifierContext", NO_SUCH_THING("auto-mode classifier")),
];

export const CLAUDE_CODE_HANDLER_TYPES: readonly CompatRow[] = [
  differs(
    "command",
    'the environment policy removes provider keys; `async` and `asyncRewake` run in the background and are killed when the run ends; `shell: "powershell"` is refused',
  ),
  differs("http", "header variables pass the environment policy too"),
  differs(
    "prompt",
    "the configured model answers; `model` may be an alias (`haiku`, `sonnet`, `opus`: Claude Code's ids under an `anthropic:` model, the run's own model under any other provider; `inherit`), a model id of the run's provider, or a Gatehouse spec (`provider:model`); its call is not hooked and its tokens count in the run's usage; secrets in the input are masked; `onFailure` applies",
  ),
  differs(
    "agent",
    "as in Claude Code (Read, Grep and Glob, 50 turns, 60 s, continues on block), with `model` as for `prompt`; its model and tool calls are not hooked and its tokens count in the run's usage; every read meets the permission rules with no one to ask (a deny or ask rule refuses it; a search skips such files); its prompt and every tool result are masked; `onFailure` applies",
  ),
  differs(
    "mcp_tool",
    "calls a tool of a server in gatehouse.json's `mcpServers` directly (no tool hook sees it); `input` strings take values of the hook input by path (`tool_input.file_path`), as in Claude Code; an `isError` answer is a failure",
  ),
];

const SECTIONS: readonly [string, readonly CompatRow[]][] = [
  ["Event", CLAUDE_CODE_EVENTS],
  ["Input field", CLAUDE_CODE_INPUT_FIELDS],
  ["Output field", CLAUDE_CODE_OUTPUT_FIELDS],
  ["Handler type", CLAUDE_CODE_HANDLER_TYPES],
];

export const COMPAT_START =
  "<!-- claude-code-compat:start (generated by npm run docs from src/command-hooks/compat.ts) -->";
export const COMPAT_END = "<!-- claude-code-compat:end -->";

/** The tables, one per kind of thing, as they stand in docs/command-hooks.md. */
export function renderCompatTables(): string {
  const tables = SECTIONS.map(([kind, rows]) =>
    [
      `| ${kind} | In Gatehouse | Notes |`,
      "|---|---|---|",
      ...rows.map((r) => `| \`${r.name}\` | ${r.support} | ${r.note} |`),
    ].join("\n"),
  );
  return [COMPAT_START, ...tables, COMPAT_END].join("\n\n");
}

/** `doc` with its compatibility tables replaced by the current ones. */
export function withCompatTables(doc: string): string {
  const start = doc.indexOf(COMPAT_START);
  const end = doc.indexOf(COMPAT_END);
  if (start < 0 || end < start) throw new Error("docs/command-hooks.md has no claude-code-compat markers");
  return doc.slice(0, start) + renderCompatTables() + doc.slice(end + COMPAT_END.length);
}
