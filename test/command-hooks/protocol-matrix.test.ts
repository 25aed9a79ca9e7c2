import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { DIALECTS, type Dialect, isForeign } from "../../src/command-hooks/dialects.js";
import { COMMAND_HOOK_EVENTS, type CommandHookEvent, EVENT_SPECS } from "../../src/command-hooks/events.js";
import { runCommandHandler } from "../../src/command-hooks/executor.js";
import type { NormalizedVerdict } from "../../src/command-hooks/verdict.js";
import { execHook, execOptions, inputFor, tempDir } from "./helpers.js";

/**
 * Every event × dialect × exit-code / JSON case, run through a real script (emit.sh prints
 * what it is told and exits with the given code). The expectations restate each dialect's
 * contract in plain terms.
 */

interface Case {
  name: string;
  exit: number;
  stdout?: string;
  stderr?: string;
  expect(d: Dialect, e: CommandHookEvent): NormalizedVerdict;
}

const NO = "guard says no";
const blockAs = (e: CommandHookEvent) => {
  const k = EVENT_SPECS[e].decision;
  return k === "none" ? undefined : k === "block" ? "block" : "deny";
};
const canBlock = (e: CommandHookEvent) => blockAs(e) !== undefined;
const blocked = (e: CommandHookEvent, reason: string): NormalizedVerdict => ({ decision: blockAs(e), reason });
const has = (e: CommandHookEvent, f: "continue" | "systemMessage") => EVENT_SPECS[e].fields.has(f);
const cpContextEvents = new Set<CommandHookEvent>(["PreToolUse", "UserPromptSubmit", "SessionStart"]);

/**
 * Non-blocking stderr. Claude Code: shown to the user, except on Notification and StopFailure (ignored); its
 * PostToolUseFailure shows exit 2's stderr to Claude, where Gatehouse's can block (exit 2
 * withholds the failure, the stderr its reason). Code Puppy "feeds it back to the agent": model
 * context wherever the event has a place for it — but not on Stop, where context would mean
 * another pass.
 */
const CLAUDE_FEEDBACK_IGNORED = new Set<CommandHookEvent>(["Notification", "StopFailure"]);
const CP_FEEDBACK_TO_MODEL = new Set<CommandHookEvent>([
  "SessionStart",
  "UserPromptSubmit",
  "PreToolUse",
  "PostToolUse",
  "PostToolUseFailure",
  "SubagentStart",
  "PostToolBatch",
]);
const fedBack = (d: Dialect, e: CommandHookEvent, text: string): NormalizedVerdict => {
  if (d === "code-puppy") return CP_FEEDBACK_TO_MODEL.has(e) ? { additionalContext: text } : { feedback: text };
  return CLAUDE_FEEDBACK_IGNORED.has(e) ? {} : { feedback: text };
};

const CASES: Case[] = [
  { name: "exit 0, no output: no decision", exit: 0, expect: () => ({}) },
  {
    name: "exit 0, plain stdout: context only where the dialect injects it",
    exit: 0,
    stdout: "plain words",
    expect: (d, e) =>
      (d === "code-puppy" ? cpContextEvents.has(e) : EVENT_SPECS[e].plainStdoutIsContext)
        ? { additionalContext: "plain words" }
        : {},
  },
  {
    name: "exit 1 with stderr: a non-blocking error for Claude Code, a block for Code Puppy",
    exit: 1,
    stderr: NO,
    expect: (d, e) => {
      if (d !== "code-puppy") return { error: "exit" };
      return canBlock(e) ? blocked(e, NO) : fedBack(d, e, NO);
    },
  },
  {
    name: "exit 2 with stderr: blocks with stderr for Claude Code, feedback for Code Puppy",
    exit: 2,
    stderr: NO,
    expect: (d, e) => (d !== "code-puppy" && canBlock(e) ? blocked(e, NO) : fedBack(d, e, NO)),
  },
  {
    name: 'exit 0, JSON decision "block": blocks with the JSON reason (deny on PreToolUse)',
    exit: 0,
    stdout: '{"decision":"block","reason":"json says no"}',
    expect: (d, e) => {
      const kind = EVENT_SPECS[e].decision;
      if (d === "code-puppy") return canBlock(e) ? blocked(e, "json says no") : {};
      return kind === "block" || kind === "permission" ? blocked(e, "json says no") : {};
    },
  },
  {
    name: "exit 1 with a JSON block: the JSON decides (claude), is ignored (claude-2025), exit 1 blocks (code-puppy)",
    exit: 1,
    stdout: '{"decision":"block","reason":"json says no"}',
    expect: (d, e) => {
      const kind = EVENT_SPECS[e].decision;
      if (d === "claude-2025") return { error: "exit" };
      if (d === "code-puppy") return canBlock(e) ? blocked(e, "json says no") : {};
      return kind === "block" || kind === "permission" ? blocked(e, "json says no") : {};
    },
  },
  {
    name: "exit 2 with JSON that does not block: still blocks, with stderr as the reason",
    exit: 2,
    stdout: '{"systemMessage":"note"}',
    stderr: NO,
    expect: (d, e) => {
      if (d === "code-puppy") return fedBack(d, e, NO);
      const sys = d === "claude" && has(e, "systemMessage") ? { systemMessage: "note" } : {};
      return canBlock(e) ? { ...sys, ...blocked(e, NO) } : { ...sys, ...fedBack(d, e, NO) };
    },
  },
  {
    name: "exit 2 with a JSON block: the JSON reason wins over stderr (claude-2025 does not read the JSON)",
    exit: 2,
    stdout: '{"decision":"block","reason":"json says no"}',
    stderr: NO,
    expect: (d, e) => {
      if (d === "code-puppy") return fedBack(d, e, NO);
      const kind = EVENT_SPECS[e].decision;
      if (!canBlock(e)) return fedBack(d, e, NO);
      const jsonBlocks = d === "claude" && (kind === "block" || kind === "permission");
      return blocked(e, jsonBlocks ? "json says no" : NO);
    },
  },
  {
    name: "exit 0, continue:false: stops the agent (claude), blocks (code-puppy) except on Stop, where it stops",
    exit: 0,
    stdout: '{"continue":false,"stopReason":"halt"}',
    expect: (d, e) => {
      // On Stop a block means "one more pass": continue:false must stop instead.
      if (d === "code-puppy" && (e === "Stop" || e === "SubagentStop")) return { continue: false, stopReason: "halt" };
      if (d === "code-puppy") return canBlock(e) ? blocked(e, "halt") : {};
      return has(e, "continue") ? { continue: false, stopReason: "halt" } : {};
    },
  },
  {
    name: "stdout that starts with { but is not JSON: unparseable, no decision",
    exit: 0,
    stdout: "{oops",
    expect: () => ({ error: "unparseable" }),
  },
  { name: "exit 3 without output: a non-blocking error", exit: 3, expect: () => ({ error: "exit" }) },
];

const project = tempDir();

// Claude Code's and Code Puppy's dialects; Gemini CLI's, Codex's and Cursor's have their own tests (foreign.test.ts).
for (const dialect of DIALECTS.filter((d) => !isForeign(d))) {
  describe(`protocol matrix, dialect ${dialect}`, () => {
    for (const event of COMMAND_HOOK_EVENTS) {
      test(`${event}: every exit code and JSON case gives the dialect's verdict`, async () => {
        const results = await Promise.all(
          CASES.map((c) =>
            runCommandHandler(
              execHook("emit.sh", [String(c.exit), c.stdout ?? "", c.stderr ?? ""], { event, dialect }),
              inputFor(event),
              execOptions(project),
            ),
          ),
        );
        CASES.forEach((c, i) => {
          const { errorDetail: _d, ...verdict } = (results[i] as { verdict: NormalizedVerdict }).verdict;
          assert.deepEqual(verdict, c.expect(dialect, event), `${dialect} ${event}: ${c.name}`);
        });
      });
    }
  });
}
