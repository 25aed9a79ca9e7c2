import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import type { Dialect } from "../../src/command-hooks/dialects.js";
import { COMMAND_HOOK_EVENTS, type CommandHookEvent } from "../../src/command-hooks/events.js";
import type { ScriptInput } from "../../src/models/index.js";
import type { RunResult } from "../../src/runtime/types.js";
import type { Tool } from "../../src/tools/types.js";
import { plugin, promptText, testGatehouse } from "./helpers.js";

/**
 * The command-hook matrix at run level (docs/command-hooks.md): every event × every outcome form a hook
 * can give × both exit-code dialects × two real interpreters. Each case configures one
 * handler (fixtures/matrix-hook.sh or its node twin) on one event through `--settings`,
 * drives a scripted run that reaches the event, and checks what the run did — not what the
 * protocol parsed (test/command-hooks/protocol-matrix.test.ts does that).
 *
 * Read MATRIX below as the spec: per event, per form, `[claude, code-puppy]`.
 */

// ── What the hook says ──────────────────────────────────────────────────────────────────

/** The forms matrix-hook.sh knows (`MATRIX_FORM`), and the markers it writes. */
const FORMS = {
  silent: "exit 0, silent",
  stdout: "exit 0, plain stdout",
  exit1: "exit 1, stderr",
  exit2: "exit 2, stderr",
  block: "JSON block/deny",
  continue: "JSON continue:false",
  context: "JSON additionalContext",
  allow: "JSON allow",
  ask: "JSON ask",
} as const;
type Form = keyof typeof FORMS;

const STDOUT = "MATRIX-STDOUT";
const STDERR = "MATRIX-STDERR";
const REASON = "MATRIX-REASON";
const STOP = "MATRIX-STOP";
const CONTEXT = "MATRIX-CONTEXT";
const ANY_MARKER = /MATRIX-/;

// ── What the run does about it ──────────────────────────────────────────────────────────

type Effect =
  /** The run goes as if no hook were configured, and nothing the hook wrote reaches the model. */
  | { readonly kind: "none" }
  /**
   * Non-blocking stderr meant for the user (Claude Code's exit 2 where nothing can be blocked,
   * Code Puppy's exit 2 where the event has no place for model context): a warning line in the
   * log, the run unchanged, the model never sees it.
   */
  | { readonly kind: "told"; readonly text: string }
  /**
   * The text reaches the model where the event puts context (also non-blocking stderr that the
   * dialect feeds back to the agent).
   */
  | { readonly kind: "context"; readonly text: string }
  /** The event's block, with this reason where the event shows one. */
  | { readonly kind: "block"; readonly reason: string }
  /** PreToolUse: the call goes to approval. */
  | { readonly kind: "ask" }
  /** PermissionRequest: the approval is granted without asking anyone else. */
  | { readonly kind: "allow" }
  /** Observe-only events: the hook ran; the run is the same whatever it said. */
  | { readonly kind: "observed" }
  /**
   * Claude Code's `continue: false` on a tool event: no further model call, the run ends blocked
   * and its reply is this text (the hook's stopReason), which is never stored.
   */
  | { readonly kind: "stopped"; readonly text: string };

const none: Effect = { kind: "none" };
const told = (text: string): Effect => ({ kind: "told", text });
const observed: Effect = { kind: "observed" };
const ask: Effect = { kind: "ask" };
const allow: Effect = { kind: "allow" };
const context = (text: string): Effect => ({ kind: "context", text });
const block = (reason: string): Effect => ({ kind: "block", reason });
const stopped = (text: string): Effect => ({ kind: "stopped", text });

/** The run a tool hook stopped: one model call, its reply the stop text, which the store never holds. */
function stoppedWith(o: Observed, text: string): void {
  assert.equal(o.result.outcome, "blocked");
  assert.equal(o.result.blockedBy?.category, "stop");
  assert.equal(o.prompts.length, 1, "no model call after the stop");
  assert.equal(o.result.reply, text);
  assert.doesNotMatch(o.stored, new RegExp(text), "the stop text is the user's, never stored for the model");
}

// ── How a run reaches each event ────────────────────────────────────────────────────────

const PROMPT = "hello matrix";
const OUTPUT = "PROBE-OUTPUT";
const FAILURE = "PROBE-FAILURE";
const SUMMARY = "SUMMARY-TEXT";
const CHILD_TASK = "child task";

/** What one case saw of the run under test (the last of its prompts). */
interface Observed {
  readonly result: RunResult;
  /** Every model call made during the run under test, as text (sub-agent and summary calls too). */
  readonly prompts: string[];
  /** The sub-agent's own model calls. */
  readonly childPrompts: string[];
  readonly probeRuns: number;
  /** Times the approver behind the command hooks (it answers "allow-once") was asked. */
  readonly approvals: number;
  readonly payloads: Payload[];
  /** What Gatehouse logged, as `<level> <line>` (the CLI prints warn and error on stderr). */
  readonly logs: string[];
  /** The run's stored messages, as JSON. */
  readonly stored: string;
  readonly compactions: number;
}
type Payload = Record<string, unknown> & { hook_event_name: string };

interface Reach {
  readonly how: string;
  readonly script: ScriptInput;
  /** Run in order on one session; the last is the run under test. */
  readonly prompts: readonly string[];
  readonly subagents?: boolean;
  readonly compaction?: { contextTokens: number; keepRecent: number };
  /** A typed plugin asks for approval of every tool call. */
  readonly approval?: boolean;
  /** A deny rule refuses every Probe call. */
  readonly denied?: boolean;
}

const toolTurn = (text: string): ScriptInput => ({
  runs: [{ turns: [{ toolCalls: [{ name: "Probe", input: { text } }] }, { text: "final: {{lastToolResult}}" }] }],
});

const REACH = {
  prompt: { how: "a plain prompt", script: { runs: [{ turns: [{ text: "ok" }] }] }, prompts: [PROMPT] },
  reset: { how: "/reset", script: { runs: [{ turns: [{ text: "unused" }] }] }, prompts: ["/reset"] },
  tool: { how: "a Probe call", script: toolTurn("probe-input"), prompts: [PROMPT] },
  failingTool: { how: "a Probe call that throws", script: toolTurn("fail"), prompts: [PROMPT] },
  approval: {
    how: "a Probe call a typed plugin sends to approval",
    script: toolTurn("probe-input"),
    prompts: [PROMPT],
    approval: true,
  },
  denied: { how: "a Probe call a deny rule refuses", script: toolTurn("probe-input"), prompts: [PROMPT], denied: true },
  twoAnswers: {
    how: "a run with a second answer ready",
    script: { runs: [{ turns: [{ text: "first answer" }, { text: "second answer" }] }] },
    prompts: [PROMPT],
  },
  delegate: {
    how: "the Agent tool",
    subagents: true,
    prompts: [PROMPT],
    script: {
      runs: [
        { match: `^${CHILD_TASK}$`, turns: [{ text: "child first" }, { text: "child second" }] },
        {
          turns: [
            {
              toolCalls: [
                { name: "Agent", input: { description: "d", prompt: CHILD_TASK, subagent_type: "explorer" } },
              ],
            },
            { text: "parent got: {{lastToolResult}}" },
          ],
        },
      ],
    },
  },
  failedModel: {
    how: "a model call that fails",
    script: { runs: [{ match: "^never asked$", turns: [{ text: "unused" }] }] },
    prompts: [PROMPT],
  },
  compaction: {
    how: "a second run over a 1-token context",
    compaction: { contextTokens: 1, keepRecent: 1 },
    prompts: ["warm up", "go"],
    script: { runs: [{ match: "^Summarize", turns: [{ text: SUMMARY }] }, { turns: [{ text: "ok" }] }] },
  },
} satisfies Record<string, Reach>;

// ── The matrix ──────────────────────────────────────────────────────────────────────────

interface Row {
  readonly reach: Reach;
  /** What a block means for this event, in the test titles. */
  readonly blockMeans?: string;
  /** Checks the run-level effect. `none`, `told` and `observed` also come here. */
  check(effect: Effect, o: Observed): void;
  readonly forms: Partial<Record<Form, readonly [claude: Effect, codePuppy: Effect]>>;
}

/** Events nothing can steer; exit 2's stderr is the user's, where Claude Code shows it (`claudeExit2`). */
const observeOnly = (claudeExit2: Effect): Row["forms"] => ({
  silent: [observed, observed],
  stdout: [observed, observed],
  exit1: [observed, told(STDERR)],
  exit2: [claudeExit2, told(STDERR)],
  block: [observed, observed],
  continue: [observed, observed],
  context: [observed, observed],
});

const MATRIX: Record<CommandHookEvent, Row> = {
  SessionStart: {
    reach: REACH.prompt,
    check(e, o) {
      completedWith(o, "ok");
      if (e.kind === "context") assert.ok(o.prompts[0]?.includes(e.text), "the context is in the first model call");
    },
    forms: {
      silent: [none, none],
      stdout: [context(STDOUT), context(STDOUT)],
      exit1: [none, context(STDERR)],
      exit2: [told(STDERR), context(STDERR)],
      block: [none, none],
      continue: [none, none],
      context: [context(CONTEXT), context(CONTEXT)],
    },
  },

  SessionEnd: {
    reach: REACH.reset,
    check(_e, o) {
      assert.equal(o.result.outcome, "completed");
      assert.match(o.result.reply ?? "", /^Started a new session/);
      assert.equal(o.prompts.length, 0);
      assert.equal(payloadOf(o, "SessionEnd").reason, "clear");
    },
    forms: observeOnly(told(STDERR)),
  },

  UserPromptSubmit: {
    reach: REACH.prompt,
    blockMeans: "turn cancelled, no model call, reply = reason",
    check(e, o) {
      if (e.kind === "block") {
        assert.equal(o.result.outcome, "blocked");
        assert.equal(o.prompts.length, 0, "no model call");
        assert.equal(o.result.reply, e.reason);
        assert.doesNotMatch(o.stored, new RegExp(PROMPT), "the prompt is never stored");
        return;
      }
      completedWith(o, "ok");
      if (e.kind === "context") assert.ok(o.prompts[0]?.includes(e.text), "the context reaches the model");
    },
    forms: {
      silent: [none, none],
      stdout: [context(STDOUT), context(STDOUT)],
      exit1: [none, block(STDERR)],
      exit2: [block(STDERR), context(STDERR)],
      block: [block(REASON), block(REASON)],
      continue: [block(STOP), block(STOP)],
      context: [context(CONTEXT), context(CONTEXT)],
    },
  },

  PreToolUse: {
    reach: REACH.tool,
    blockMeans: "the tool never runs, the model sees the reason",
    check(e, o) {
      if (e.kind === "stopped") {
        stoppedWith(o, e.text);
        assert.equal(o.probeRuns, 0, "the tool never ran");
        return;
      }
      assert.equal(o.result.outcome, "completed");
      if (e.kind === "block") {
        assert.equal(o.probeRuns, 0, "the tool never ran");
        assert.equal(o.approvals, 0);
        assert.ok(o.prompts[1]?.includes(e.reason), "the model sees the reason");
        return;
      }
      assert.equal(o.probeRuns, 1, "the tool ran");
      assert.equal(o.approvals, e.kind === "ask" ? 1 : 0, "approval asked only for ask");
      assert.ok(o.prompts[1]?.includes(OUTPUT));
      if (e.kind === "context") assert.ok(o.prompts[1]?.includes(e.text), "the context is next to the result");
    },
    forms: {
      silent: [none, none],
      stdout: [none, context(STDOUT)],
      exit1: [none, block(STDERR)],
      exit2: [block(STDERR), context(STDERR)],
      block: [block(REASON), block(REASON)],
      continue: [stopped(STOP), block(STOP)],
      context: [context(CONTEXT), context(CONTEXT)],
      allow: [none, none],
      ask: [ask, none],
    },
  },

  PermissionRequest: {
    reach: REACH.approval,
    blockMeans: "denied: the tool never runs, no one else is asked",
    check(e, o) {
      assert.equal(o.result.outcome, "completed");
      if (e.kind === "block") {
        assert.equal(o.probeRuns, 0, "the tool never ran");
        assert.equal(o.approvals, 0, "the next approver was not asked");
        // The model reads the hook's reason (or Gatehouse's fixed text), as Claude Code's deny `message`.
        assert.ok(
          o.prompts[1] !== undefined && !o.prompts[1].includes(OUTPUT),
          "the model was told the call was denied",
        );
        return;
      }
      assert.equal(o.probeRuns, 1, "the tool ran");
      assert.equal(o.approvals, e.kind === "allow" ? 0 : 1, "without a verdict the next approver decides");
    },
    forms: {
      silent: [none, none],
      stdout: [none, none],
      exit1: [none, block("")],
      exit2: [block(""), told(STDERR)],
      block: [block(""), none],
      continue: [block(""), block("")],
      context: [none, none],
      allow: [allow, none],
    },
  },

  PostToolUse: {
    reach: REACH.tool,
    blockMeans: "output withheld from the model, the reply and the store",
    check(e, o) {
      assert.equal(o.probeRuns, 1, "the tool ran");
      if (e.kind === "stopped") {
        stoppedWith(o, e.text);
        assert.match(o.stored, new RegExp(OUTPUT), "the output stays, as in Claude Code");
        return;
      }
      assert.equal(o.result.outcome, "completed");
      if (e.kind === "block") {
        assert.ok(o.prompts[1]?.includes(e.reason), "the notice carries the reason");
        assert.ok(!o.prompts[1]?.includes(OUTPUT), "the model never sees the output");
        assert.doesNotMatch(o.result.reply ?? "", new RegExp(OUTPUT));
        assert.doesNotMatch(o.stored, new RegExp(OUTPUT), "the output is never stored");
        return;
      }
      assert.ok(o.prompts[1]?.includes(OUTPUT));
      assert.match(o.result.reply ?? "", new RegExp(OUTPUT));
      if (e.kind === "context") assert.ok(o.prompts[1]?.includes(e.text), "the context is next to the result");
    },
    forms: {
      silent: [none, none],
      stdout: [none, none],
      exit1: [none, block(STDERR)],
      exit2: [block(STDERR), context(STDERR)],
      block: [block(REASON), block(REASON)],
      continue: [stopped(STOP), block(STOP)],
      context: [context(CONTEXT), none],
    },
  },

  // Blocking withholds the failure as PostToolUse withholds an output: a Gatehouse extension.
  PostToolUseFailure: {
    reach: REACH.failingTool,
    blockMeans: "the failure withheld from the model, the reply and the store",
    check(e, o) {
      assert.equal(o.probeRuns, 1);
      assert.equal(payloadOf(o, "PostToolUseFailure").error, FAILURE);
      if (e.kind === "stopped") {
        stoppedWith(o, e.text);
        assert.match(o.stored, new RegExp(FAILURE), "the failure stays");
        return;
      }
      assert.equal(o.result.outcome, "completed");
      if (e.kind === "block") {
        assert.ok(o.prompts[1]?.includes(e.reason), "the notice carries the reason");
        assert.ok(!o.prompts[1]?.includes(FAILURE), "the model never sees the failure");
        assert.doesNotMatch(o.stored, new RegExp(FAILURE), "the failure is never stored");
        return;
      }
      assert.ok(o.prompts[1]?.includes(FAILURE), "the model sees the error");
      if (e.kind === "context") assert.ok(o.prompts[1]?.includes(e.text), "the context is next to the error");
    },
    forms: {
      silent: [none, none],
      stdout: [none, none],
      exit1: [none, block(STDERR)],
      exit2: [block(STDERR), context(STDERR)],
      block: [block(REASON), block(REASON)],
      continue: [stopped(STOP), block(STOP)],
      context: [context(CONTEXT), none],
    },
  },

  Stop: {
    reach: REACH.twoAnswers,
    blockMeans: "one more pass with the reason",
    check(e, o) {
      assert.equal(o.result.outcome, "completed");
      // A block sends the agent back with its reason; additionalContext, as in Claude Code, with the context.
      if (e.kind === "block" || e.kind === "context") {
        assert.equal(o.prompts.length, 2, "one more pass");
        assert.ok(o.prompts[1]?.includes(e.kind === "block" ? e.reason : e.text), "the pass is told why");
        assert.equal(o.result.reply, "second answer");
        return;
      }
      assert.equal(o.prompts.length, 1, "the answer stands");
      assert.equal(o.result.reply, "first answer");
    },
    forms: {
      silent: [none, none],
      stdout: [none, none],
      exit1: [none, block(STDERR)],
      exit2: [block(STDERR), told(STDERR)],
      block: [block(REASON), block(REASON)],
      continue: [none, none],
      context: [context(CONTEXT), none],
    },
  },

  SubagentStop: {
    reach: REACH.delegate,
    blockMeans: "one more pass in the child",
    check(e, o) {
      assert.equal(o.result.outcome, "completed");
      if (e.kind === "block" || e.kind === "context") {
        assert.equal(o.childPrompts.length, 2, "one more pass in the child");
        assert.ok(o.childPrompts[1]?.includes(e.kind === "block" ? e.reason : e.text), "the pass is told why");
        assert.match(o.result.reply ?? "", /child second/);
        return;
      }
      assert.equal(o.childPrompts.length, 1, "the child's answer stands");
      assert.match(o.result.reply ?? "", /child first/);
    },
    forms: {
      silent: [none, none],
      stdout: [none, none],
      exit1: [none, block(STDERR)],
      exit2: [block(STDERR), told(STDERR)],
      block: [block(REASON), block(REASON)],
      continue: [none, none],
      context: [context(CONTEXT), none],
    },
  },

  SubagentStart: {
    reach: REACH.delegate,
    check(e, o) {
      assert.equal(o.result.outcome, "completed");
      assert.equal(o.childPrompts.length, 1);
      assert.match(o.result.reply ?? "", /child first/);
      if (e.kind === "context") assert.ok(o.childPrompts[0]?.includes(e.text), "the context is in the child's call");
    },
    forms: {
      silent: [none, none],
      stdout: [none, none],
      exit1: [none, context(STDERR)],
      exit2: [told(STDERR), context(STDERR)],
      block: [none, none],
      continue: [none, none],
      context: [context(CONTEXT), none],
    },
  },

  PreCompact: {
    reach: REACH.compaction,
    blockMeans: "no compaction recorded",
    check(e, o) {
      completedWith(o, "ok");
      if (e.kind === "block") assert.equal(o.compactions, 0, "no compaction");
      else assert.ok(o.compactions >= 1, "compacted");
    },
    forms: {
      silent: [none, none],
      stdout: [none, none],
      exit1: [none, block(STDERR)],
      exit2: [block(STDERR), told(STDERR)],
      block: [block(REASON), block(REASON)],
      continue: [block(STOP), block(STOP)],
      context: [none, none],
    },
  },

  PostCompact: {
    reach: REACH.compaction,
    check(_e, o) {
      completedWith(o, "ok");
      assert.ok(o.compactions >= 1);
      assert.equal(payloadOf(o, "PostCompact").compact_summary, SUMMARY);
    },
    forms: observeOnly(told(STDERR)),
  },

  // Every denial is seen; nothing a hook says changes it (only `retry`, not a form here, adds a line).
  PermissionDenied: {
    reach: REACH.denied,
    check(_e, o) {
      assert.equal(o.result.outcome, "completed");
      assert.equal(o.probeRuns, 0, "the call stayed denied");
      const payload = payloadOf(o, "PermissionDenied");
      assert.equal(payload.tool_name, "Probe");
      assert.equal(payload.reason, "Permission to use Probe has been denied.");
      assert.ok(o.prompts[1]?.includes(String(payload.reason)), "the model read the same denial");
    },
    forms: observeOnly(told(STDERR)),
  },

  Notification: {
    reach: REACH.approval,
    check(_e, o) {
      assert.equal(o.result.outcome, "completed");
      assert.equal(o.probeRuns, 1);
      assert.equal(o.approvals, 1);
      assert.match(o.result.reply ?? "", new RegExp(OUTPUT));
      // Claude Code's name for an approval prompt, so its Notification matchers fire here.
      assert.equal(payloadOf(o, "Notification").notification_type, "permission_prompt");
    },
    // Claude Code ignores a Notification hook's exit 2.
    forms: observeOnly(observed),
  },

  // A block or continue:false ends the run after the step (the reason is the user's); context reaches the next call.
  PostToolBatch: {
    reach: REACH.tool,
    blockMeans: "the run ends after the step",
    check(e, o) {
      assert.equal(o.probeRuns, 1, "the tool ran");
      const batch = payloadOf(o, "PostToolBatch").tool_calls as { tool_name: string; tool_response: unknown }[];
      assert.deepEqual(
        batch.map((c) => c.tool_name),
        ["Probe"],
      );
      // As Claude Code sends it: the text the model reads, not the tool's object.
      assert.equal(typeof batch[0]?.tool_response, "string");
      assert.match(String(batch[0]?.tool_response), new RegExp(OUTPUT));
      if (e.kind === "stopped") {
        stoppedWith(o, e.text);
        return;
      }
      completedWith(o, `final: ${OUTPUT}`);
      if (e.kind === "context") assert.ok(o.prompts[1]?.includes(e.text), "the context reaches the next call");
    },
    forms: {
      silent: [none, none],
      stdout: [none, none],
      exit1: [none, stopped(STDERR)],
      exit2: [stopped(STDERR), context(STDERR)],
      block: [stopped(REASON), stopped(REASON)],
      continue: [stopped(STOP), stopped(STOP)],
      context: [context(CONTEXT), none],
    },
  },

  StopFailure: {
    reach: REACH.failedModel,
    check(_e, o) {
      assert.equal(o.result.outcome, "failed");
      const p = payloadOf(o, "StopFailure");
      assert.equal(p.error, "unknown");
      assert.match(String(p.error_details), /ScriptedModelError/);
    },
    // Claude Code ignores what a StopFailure hook answers, its exit 2 too.
    forms: observeOnly(observed),
  },
};

function completedWith(o: Observed, reply: string): void {
  assert.equal(o.result.outcome, "completed");
  assert.equal(o.result.reply, reply);
}

function payloadOf(o: Observed, event: CommandHookEvent): Payload {
  const p = o.payloads.find((x) => x.hook_event_name === event);
  assert.ok(p, `${event} payload logged`);
  return p;
}

// ── Running one case ────────────────────────────────────────────────────────────────────

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));
const INTERPRETERS = [
  { name: "bash", command: `bash '${fixture("matrix-hook.sh")}'` },
  { name: "node", command: `node '${fixture("matrix-hook.mjs")}'` },
] as const;
const DIALECTS: readonly Dialect[] = ["claude", "code-puppy"];

const ROOT = mkdtempSync(join(tmpdir(), "gatehouse-hook-matrix-"));
after(() => rmSync(ROOT, { recursive: true, force: true }));

const approvalsPlugin = plugin("approvals", (api) =>
  api.on("before_tool_call", () => ({ requireApproval: { title: "Run Probe?" } })),
);

function probeTool(): { tool: Tool; runs: () => number } {
  let runs = 0;
  const tool: Tool<{ text: string }, string> = {
    name: "Probe",
    description: "Returns a marker; throws when its text is 'fail'",
    inputSchema: z.object({ text: z.string() }),
    async execute({ text }) {
      runs++;
      if (text === "fail") throw new Error(FAILURE);
      return OUTPUT;
    },
  };
  return { tool: tool as Tool, runs: () => runs };
}

let caseNo = 0;

async function runCase(command: string, dialect: Dialect, event: CommandHookEvent, form: Form): Promise<Observed> {
  const { reach } = MATRIX[event];
  const dir = join(ROOT, String(caseNo++));
  mkdirSync(dir);
  const log = join(dir, "payloads.jsonl");
  writeFileSync(log, "");
  const probe = probeTool();
  let approvals = 0;
  const hooks = { [event]: [{ hooks: [{ type: "command", command }] }] };
  const { gatehouse, calls, store, logLines } = testGatehouse(reach.script, {
    tools: [probe.tool],
    plugins: reach.approval ? [approvalsPlugin] : [],
    ...("denied" in reach && reach.denied ? { permissions: { deny: ["Probe"] } } : {}),
    subagents: reach.subagents ?? false,
    approver: async () => {
      approvals++;
      return "allow-once";
    },
    env: { ...process.env, MATRIX_LOG: log, MATRIX_FORM: form },
    config: { cwd: dir, ...(reach.compaction ? { compaction: reach.compaction } : {}) },
    commandHooks: { load: { homeDir: dir, cliSettings: JSON.stringify({ hooks }), dialects: { cli: dialect } } },
  });
  try {
    let result: RunResult | undefined;
    let first = 0;
    for (const prompt of reach.prompts) {
      first = calls.length;
      result = await gatehouse.run({ prompt, ...(result ? { sessionId: result.sessionId } : {}) });
    }
    const done = result as RunResult;
    const ofRun = calls.slice(first);
    const runPrompt = (c: (typeof calls)[number]) =>
      (c.providerOptions?.gatehouse as { runPrompt?: string } | undefined)?.runPrompt;
    return {
      result: done,
      prompts: ofRun.map(promptText),
      childPrompts: ofRun.filter((c) => runPrompt(c) === CHILD_TASK).map(promptText),
      probeRuns: probe.runs(),
      approvals,
      payloads: readFileSync(log, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Payload),
      logs: logLines,
      stored: JSON.stringify(await store.runMessages(done.runId)),
      compactions: (await store.listCompactions(done.sessionId)).length,
    };
  } finally {
    await gatehouse.close();
  }
}

function describeEffect(e: Effect, row: Row): string {
  switch (e.kind) {
    case "block":
      return `block${e.reason ? ` (${e.reason})` : ""}: ${row.blockMeans ?? "blocked"}`;
    case "context":
      return `${e.text} reaches the model`;
    case "none":
      return "no effect";
    case "told":
      return `${e.text} shown to the user, run unchanged`;
    case "observed":
      return "hook ran, run unchanged";
    case "ask":
      return "approval requested";
    case "allow":
      return "approved without asking";
    case "stopped":
      return `the agent stops: run blocked, reply ${e.text}, no further model call`;
  }
}

for (const event of COMMAND_HOOK_EVENTS) {
  const row = MATRIX[event];
  describe(`${event} (reached by ${row.reach.how})`, { concurrency: 8 }, () => {
    for (const [form, cells] of Object.entries(row.forms) as [Form, readonly [Effect, Effect]][]) {
      DIALECTS.forEach((dialect, i) => {
        const effect = cells[i] as Effect;
        for (const interp of INTERPRETERS) {
          const title = `${FORMS[form]} · ${dialect} · ${interp.name} → ${describeEffect(effect, row)}`;
          test(title, async () => {
            const o = await runCase(interp.command, dialect, event, form);
            assert.ok(
              o.payloads.some((p) => p.hook_event_name === event),
              `the ${event} hook ran (payload logged)`,
            );
            if (
              effect.kind === "none" ||
              effect.kind === "observed" ||
              effect.kind === "told" ||
              effect.kind === "stopped"
            )
              for (const p of o.prompts) assert.doesNotMatch(p, ANY_MARKER, "nothing the hook said reaches the model");
            // Reasons, context and stderr never reach the log; only words the hook meant for the user do.
            if (effect.kind === "told")
              assert.ok(
                o.logs.some((l) => l === `warn [command-hooks] ${event} hook (cli): ${effect.text}`),
                `the user is told: ${o.logs.join(" | ")}`,
              );
            else for (const l of o.logs) assert.doesNotMatch(l, ANY_MARKER, "nothing the hook wrote is logged");
            row.check(effect, o);
          });
        }
      });
    }
  });
}
