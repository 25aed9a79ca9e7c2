import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import type { GatehouseOptions, RunStream } from "../../src/assembly/gatehouse.js";
import { HOOK_NAMES, type HookName } from "../../src/hooks/index.js";
import type { ScriptInput } from "../../src/models/index.js";
import type { PluginDefinition } from "../../src/plugins/index.js";
import type { RunInput, RunResult } from "../../src/runtime/types.js";
import type { Run } from "../../src/store/types.js";
import { type Firing, plugin, recorder, testGatehouse } from "./helpers.js";

/**
 * The conformance matrix (docs/security.md, "A verdict takes effect"): for every hook of the catalog and every path a run can
 * take, how often the hook fires and with which context. A hook added to the catalog and not
 * wired fires nowhere, and the last test fails.
 */

type Counts = Partial<Record<HookName, number>>;

/** One model call that asks for a tool, one that answers: the common shape of a turn. */
const TOOL_TURN: ScriptInput = {
  runs: [
    { match: "^Summarize|^You write", turns: [{ text: "summary" }, { text: "summary" }] },
    { turns: [{ toolCalls: [{ name: "Echo", input: { text: "hi" } }] }, { text: "done" }, { text: "revised" }] },
  ],
};

const ADMITTED: Counts = {
  session_start: 1,
  message_received: 1,
  before_input: 1,
  inbound_claim: 1,
  before_agent_reply: 1,
  agent_end: 1,
};
const PREPARED: Counts = {
  ...ADMITTED,
  before_model_resolve: 1,
  agent_turn_prepare: 1,
  before_prompt_build: 1,
  before_agent_start: 1,
  before_agent_run: 1,
};
const MODEL_CALL: Counts = { llm_input: 1, model_call_started: 1, model_call_ended: 1, llm_output: 1 };
const times = (counts: Counts, n: number): Counts =>
  Object.fromEntries(Object.entries(counts).map(([k, v]) => [k, (v as number) * n]));
const sum = (...all: Counts[]): Counts => {
  const total: Counts = {};
  for (const counts of all)
    for (const [hook, n] of Object.entries(counts))
      total[hook as HookName] = (total[hook as HookName] ?? 0) + (n as number);
  return total;
};
const TOOL_CALL: Counts = { before_tool_call: 1, after_tool_call: 1, tool_result_persist: 1, before_message_write: 1 };
const DELIVERY: Counts = { before_response_emit: 1, message_sending: 1, message_sent: 1 };
/** A full turn: prompt stored, model asks for Echo, result stored, model answers, answer delivered. */
const FULL_TURN = sum(PREPARED, times(MODEL_CALL, 2), TOOL_CALL, DELIVERY, {
  before_message_write: 3,
  after_tool_batch: 1,
  before_agent_finalize: 1,
});

interface Scenario {
  readonly name: string;
  readonly expected: Counts;
  readonly script?: ScriptInput;
  readonly plugins?: readonly PluginDefinition[];
  readonly options?: Omit<GatehouseOptions, "model" | "store">;
  readonly input?: Partial<RunInput>;
  readonly streamed?: boolean;
  readonly outcome: RunResult["outcome"];
  /** Runs before the measured run (e.g. to give the session history to compact). */
  readonly warmUp?: string;
  readonly cancelAt?: HookName;
  /** What this path must show beyond the counts and contexts. */
  readonly check?: (firings: readonly Firing[], runs: RunsSeen) => void;
}

/** The measured run, and the child runs under it, as stored. */
interface RunsSeen {
  readonly top: Run;
  readonly children: readonly Run[];
}

const block = (hook: HookName, result: unknown) =>
  plugin(`block-${hook}`, (api) => api.on(hook, (() => result) as never));

const scenarios: Scenario[] = [
  { name: "top-level run", expected: FULL_TURN, outcome: "completed" },
  { name: "top-level run, streamed", expected: FULL_TURN, streamed: true, outcome: "completed" },
  {
    name: "cron trigger with a job id",
    expected: FULL_TURN,
    input: { trigger: "cron", jobId: "nightly-report" },
    outcome: "completed",
  },
  {
    name: "blocked at before_agent_run",
    // The notice is a reply like any other: the output gates see it.
    expected: sum(PREPARED, DELIVERY),
    plugins: [block("before_agent_run", { outcome: "block", reason: "r", message: "no" })],
    outcome: "blocked",
  },
  {
    name: "blocked at before_agent_run, streamed",
    expected: sum(PREPARED, DELIVERY),
    plugins: [block("before_agent_run", { outcome: "block", reason: "r" })],
    streamed: true,
    outcome: "blocked",
  },
  {
    name: "tool call blocked at before_tool_call",
    expected: sum(FULL_TURN, { after_tool_call: -1 }),
    plugins: [block("before_tool_call", { block: true })],
    outcome: "completed",
  },
  {
    name: "tool output withheld at after_tool_call",
    expected: FULL_TURN,
    plugins: [block("after_tool_call", { block: true })],
    outcome: "completed",
  },
  {
    name: "answer blocked at before_response_emit",
    // Its notice is delivered through message_sending (not the response gate again).
    expected: FULL_TURN,
    plugins: [block("before_response_emit", { block: true })],
    outcome: "blocked",
  },
  {
    name: "delivery cancelled at message_sending",
    expected: sum(FULL_TURN, { message_sent: -1 }),
    plugins: [block("message_sending", { cancel: true })],
    outcome: "completed",
  },
  {
    name: "claimed at before_agent_reply with a reply",
    expected: sum(ADMITTED, DELIVERY, { before_message_write: 2 }),
    plugins: [block("before_agent_reply", { handled: true, reply: { text: "form step 1" } })],
    outcome: "claimed",
  },
  {
    name: "claimed at before_agent_reply, silent",
    expected: sum(ADMITTED, { before_message_write: 1 }),
    plugins: [block("before_agent_reply", { handled: true })],
    outcome: "claimed",
  },
  {
    name: "claimed at inbound_claim",
    expected: sum(ADMITTED, DELIVERY, { before_agent_reply: -1 }),
    plugins: [block("inbound_claim", { handled: true, reply: "routed" })],
    outcome: "claimed",
  },
  {
    name: "revised once by before_agent_finalize",
    // The second answer, and the instruction recorded for the transcript (Claude Code's Stop hook feedback).
    expected: sum(FULL_TURN, MODEL_CALL, { before_message_write: 2, before_agent_finalize: 1 }),
    plugins: [
      plugin("verifier", (api) =>
        api.on("before_agent_finalize", () => ({ action: "revise", retry: { instruction: "check it" } })),
      ),
    ],
    outcome: "completed",
  },
  {
    name: "compacted mid-run",
    warmUp: "first turn",
    options: { config: { compaction: { contextTokens: 1, keepRecent: 1 } } },
    // Each summary is stored through the output door: before_message_write sees it too.
    expected: sum(FULL_TURN, { session_start: 1, before_compaction: 2, after_compaction: 2, before_message_write: 2 }),
    outcome: "completed",
  },
  {
    name: "cancelled during a tool call",
    cancelAt: "before_tool_call",
    expected: sum(PREPARED, MODEL_CALL, { before_tool_call: 1, before_message_write: 2 }),
    outcome: "cancelled",
  },
  {
    name: "failed model call",
    script: { runs: [{ turns: [{ error: { message: "overloaded" } }] }] },
    expected: sum(PREPARED, MODEL_CALL, { llm_output: -1, before_message_write: 1 }),
    outcome: "failed",
  },
  {
    name: "/reset",
    input: { prompt: "/reset" },
    expected: sum(ADMITTED, DELIVERY, { before_agent_reply: -1, session_start: 1, before_reset: 1, session_end: 1 }),
    outcome: "completed",
  },
  {
    name: "approval requested and denied",
    plugins: [
      plugin("approvals", (api) => api.on("before_tool_call", () => ({ requireApproval: { title: "Run Echo?" } }))),
    ],
    // Nobody can be asked (no approver): permission_request decides nothing, and no notification
    // fires, since no person is asked (docs/permissions.md); permission_denied sees the denial.
    expected: sum(FULL_TURN, { after_tool_call: -1, permission_request: 1, permission_denied: 1 }),
    outcome: "completed",
  },
  {
    name: "approval requested and given by a person",
    plugins: [
      plugin("approvals", (api) => api.on("before_tool_call", () => ({ requireApproval: { title: "Run Echo?" } }))),
    ],
    options: { approver: async () => "allow-once" },
    expected: sum(FULL_TURN, { permission_request: 1, notification: 1 }),
    outcome: "completed",
  },
  {
    name: "sub-agent",
    script: {
      runs: [
        {
          match: "^child task",
          turns: [{ toolCalls: [{ name: "Echo", input: { text: "in the child" } }] }, { text: "child answer" }],
        },
        {
          turns: [
            { toolCalls: [{ name: "Agent", input: { description: "d", prompt: "child task" } }] },
            { text: "done" },
          ],
        },
      ],
    },
    // Agent calls ask in default mode: a rule allows them here.
    options: { subagents: true, permissions: { allow: ["Agent"] } },
    // The child run is a whole turn of its own, its tool call included, inside the parent's Agent call.
    expected: sum(FULL_TURN, FULL_TURN, { subagent_start: 1, subagent_end: 1 }),
    outcome: "completed",
    check(firings, { children }) {
      assert.equal(children.length, 1);
      const child = children[0] as Run;
      const inChild = (hook: HookName) => firings.filter((f) => f.hook === hook && f.ctx.runId === child.id);
      for (const hook of ["before_tool_call", "after_tool_call", "tool_result_persist"] as const) {
        const [f] = inChild(hook);
        assert.ok(f, `${hook} fired inside the child`);
        assert.deepEqual([f.ctx.depth, f.ctx.sessionId], [1, child.sessionId], `${hook} has the child's ctx`);
      }
      assert.equal(inChild("before_tool_call")[0]?.event.toolName, "Echo");
      const start = firings.find((f) => f.hook === "subagent_start");
      assert.equal(start?.ctx.depth, 0);
      assert.equal(start?.event.childSessionId, child.sessionId);
    },
  },
];

const firedSomewhere = new Set<HookName>();
const closers: (() => Promise<void>)[] = [];
after(async () => {
  for (const close of closers) await close();
});

describe("conformance matrix", () => {
  for (const scenario of scenarios) {
    test(`${scenario.name}: every hook fires exactly as docs/lifecycle.md says, with the run's context`, async () => {
      const rec = recorder();
      const controller = new AbortController();
      const cancel = scenario.cancelAt
        ? [plugin("canceller", (api) => api.on(scenario.cancelAt as "before_tool_call", () => void controller.abort()))]
        : [];
      const { gatehouse, store } = testGatehouse(scenario.script ?? TOOL_TURN, {
        ...scenario.options,
        plugins: [rec.plugin, ...(scenario.plugins ?? []), ...cancel],
      });
      closers.push(() => gatehouse.close());
      let sessionId: string | undefined;
      if (scenario.warmUp) {
        sessionId = (await gatehouse.run({ prompt: scenario.warmUp })).sessionId;
        await gatehouse.engine.drain();
        rec.firings.length = 0;
      }
      const input: RunInput = {
        prompt: "please use the tool",
        trigger: "user",
        ...(sessionId ? { sessionId } : {}),
        ...scenario.input,
        signal: controller.signal,
      };
      const result = scenario.streamed ? await drainStream(gatehouse.stream(input)) : await gatehouse.run(input);
      await gatehouse.engine.drain();
      assert.equal(result.outcome, scenario.outcome, result.error?.message);

      const actual: Counts = {};
      for (const f of rec.firings) actual[f.hook] = (actual[f.hook] ?? 0) + 1;
      for (const hook of HOOK_NAMES) {
        assert.equal(actual[hook] ?? 0, scenario.expected[hook] ?? 0, `${hook} fired ${actual[hook] ?? 0} times`);
        if (actual[hook]) firedSomewhere.add(hook);
      }
      const top = (await store.getRun(result.runId)) as Run;
      const children = [];
      for (const session of await store.listSessions({ parentSessionId: top.sessionId }))
        children.push(...(await store.listRuns(session.id)));
      checkContexts(rec.firings, result, input, { top, children });
      scenario.check?.(rec.firings, { top, children });
    });
  }

  test("every hook of the catalog fires on at least one path (a hook added without wiring fails here)", () => {
    const never = HOOK_NAMES.filter((h) => !firedSomewhere.has(h));
    assert.deepEqual(never, []);
  });
});

async function drainStream(stream: RunStream): Promise<RunResult> {
  for await (const _event of stream) {
    // consumed only to prove the streamed path fires the same hooks
  }
  return stream.result;
}

/** ctx.runId / sessionId / depth / trigger / jobId match the run that fired the hook. */
function checkContexts(firings: readonly Firing[], result: RunResult, input: RunInput, runs: RunsSeen): void {
  const run = runs.top;
  const topLevel = firings.filter((f) => f.ctx.depth === 0);
  assert.ok(topLevel.length > 0);
  for (const f of topLevel) {
    assert.equal(f.ctx.runId, result.runId, `${f.hook} ctx.runId`);
    assert.equal(f.ctx.sessionId, run.sessionId, `${f.hook} ctx.sessionId`);
    assert.equal(f.ctx.trigger, input.trigger ?? "api", `${f.hook} ctx.trigger`);
    assert.equal(f.ctx.jobId, input.jobId, `${f.hook} ctx.jobId`);
    assert.equal(f.ctx.agentId, "main");
  }
  for (const f of firings.filter((x) => x.ctx.depth > 0)) {
    assert.equal(f.ctx.depth, 1, `${f.hook} ctx.depth in a child`);
    assert.equal(f.ctx.trigger, "subagent");
    assert.equal(f.ctx.parentRunId, result.runId);
    const child = runs.children.find((c) => c.id === f.ctx.runId);
    assert.ok(child, `${f.hook} ctx.runId is a child run's id`);
    assert.equal(f.ctx.sessionId, child.sessionId, `${f.hook} ctx.sessionId is the child's`);
    assert.notEqual(f.ctx.sessionId, run.sessionId);
  }
}
