// Hook engine benchmarks (issue 2, P1–P3). Each figure is a ratio against a baseline measured
// in the same process: rounds of many iterations, baseline and subject interleaved, after a
// warm-up; the figure is the ratio of the two medians. Absolute per-op times are printed too.
//
//   node --expose-gc --import tsx bench/hooks.bench.ts      (or: npm run bench -- hooks)
import { EventEmitter } from "node:events";
import { createHooks } from "hookable";
import { AsyncSeriesWaterfallHook } from "tapable";
import type { Message } from "../src/core/message.js";
import { HookEngine } from "../src/hooks/engine.js";
import { deepFreeze } from "../src/hooks/freeze.js";
import { newTraceparent, type RunContext, runWithContext } from "../src/hooks/run-context.js";

const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});

/** Runs `n` operations and returns the elapsed time in nanoseconds. */
type Round = (n: number) => number | Promise<number>;

interface Subject {
  readonly label: string;
  readonly round: Round;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/**
 * Warms every subject up, then runs `rounds` rounds of each, interleaved (A B C, A B C, …, with
 * the order rotating so no subject always runs first), and returns the median nanoseconds per
 * operation of each. No forced GC between rounds: a forced full GC shrinks the young
 * generation, and the rounds after it measure heap regrowth more than the code.
 */
async function compare(subjects: readonly Subject[], opts: { n: number; rounds: number; warmup: number }) {
  gc();
  for (const s of subjects) for (let i = 0; i < opts.warmup; i++) await s.round(opts.n);
  const samples = subjects.map(() => [] as number[]);
  for (let r = 0; r < opts.rounds; r++) {
    for (let k = 0; k < subjects.length; k++) {
      const i = (k + r) % subjects.length;
      samples[i]?.push((await (subjects[i] as Subject).round(opts.n)) / opts.n);
    }
  }
  return samples.map(median);
}

function fmt(ns: number): string {
  return ns < 1000 ? `${ns.toFixed(1)} ns` : `${(ns / 1000).toFixed(2)} µs`;
}

function figure(line: string, subject: number, baseline: number, goal: number, extra = ""): void {
  const ratio = subject / baseline;
  const verdict = ratio <= goal ? "" : " MISSED";
  console.log(
    `${line}: ${ratio.toFixed(2)}x (goal <= ${goal.toFixed(1)}x${verdict}) (${fmt(subject)} vs ${fmt(baseline)} per op${extra})`,
  );
}

const now = () => process.hrtime.bigint();
const elapsed = (t0: bigint) => Number(process.hrtime.bigint() - t0);

const silent = { warn: () => {}, error: () => {} };
let sink = 0;

const runContext: RunContext = Object.freeze({
  sessionId: "s-bench",
  sessionKey: "cli:bench",
  runId: "r-bench",
  agentId: "main",
  depth: 0,
  trigger: "user",
  channel: "cli",
  traceparent: newTraceparent(),
});

// ─── P1: a hook with no handler vs EventEmitter.emit with no listener ─────────────────────────

async function p1(): Promise<void> {
  const engine = new HookEngine({ logger: silent });
  // Other hooks have handlers (a realistic map), the measured one has none; same for the emitter.
  engine.on("bench", "message_received", () => {});
  engine.on("bench", "after_tool_call", async () => undefined);
  const emitter = new EventEmitter();
  emitter.on("message_received", () => {});
  emitter.on("after_tool_call", () => {});
  const event = deepFreeze({ toolName: "Read", params: { file_path: "/tmp/x" }, toolCallId: "call_1" });

  const engineRound: Round = (n) => {
    let hits = 0;
    const t0 = now();
    for (let i = 0; i < n; i++) if (engine.emit("before_tool_call", event) !== undefined) hits++;
    const ns = elapsed(t0);
    sink += hits;
    return ns;
  };
  const emitterRound: Round = (n) => {
    let hits = 0;
    const t0 = now();
    for (let i = 0; i < n; i++) if (emitter.emit("before_tool_call", event) !== undefined) hits++;
    const ns = elapsed(t0);
    sink += hits;
    return ns;
  };
  const [subject, baseline] = await compare(
    [
      { label: "engine", round: engineRound },
      { label: "EventEmitter", round: emitterRound },
    ],
    { n: 2_000_000, rounds: 31, warmup: 3 },
  );
  figure("P1 emit with no handler vs EventEmitter.emit with no listener", subject as number, baseline as number, 1.0);
}

// ─── P2: a modify hook with 3 no-op async handlers vs tapable / hookable ──────────────────────

async function p2(): Promise<void> {
  const engine = new HookEngine({ logger: silent });
  // No-op handlers that still answer: `{ block: false }` (no decision) is validated against the
  // hook's strict schema and merged, so timeouts, validation and the run context are all on the
  // path. (`{}` would not do: an empty result says nothing and skips validation.)
  for (const id of ["a", "b", "c"]) engine.on(`bench-${id}`, "before_tool_call", async () => ({ block: false }));

  const tapable = new AsyncSeriesWaterfallHook<[unknown]>(["event"]);
  for (const id of ["a", "b", "c"]) tapable.tapPromise(id, async (event) => event);

  const hookable = createHooks<{ before_tool_call: (event: unknown) => Promise<void> }>();
  for (let i = 0; i < 3; i++) hookable.hook("before_tool_call", async () => {});

  const makeEvent = (i: number) => ({ toolName: "Read", params: { file_path: "/tmp/x" }, toolCallId: `call_${i}` });

  const engineRound: Round = (n) =>
    runWithContext(runContext, async () => {
      const t0 = now();
      for (let i = 0; i < n; i++) {
        const outcome = await engine.emit("before_tool_call", makeEvent(i));
        if (outcome.decidedBy !== undefined) sink++;
      }
      return elapsed(t0);
    });
  const tapableRound: Round = async (n) => {
    const t0 = now();
    for (let i = 0; i < n; i++) if ((await tapable.promise(makeEvent(i))) === undefined) sink++;
    return elapsed(t0);
  };
  const hookableRound: Round = async (n) => {
    const t0 = now();
    for (let i = 0; i < n; i++) await hookable.callHook("before_tool_call", makeEvent(i));
    return elapsed(t0);
  };

  // Sanity: the run context really is active inside the engine's handlers.
  let seen: string | undefined;
  const probe = new HookEngine({ logger: silent });
  probe.on("probe", "before_tool_call", async (_e, ctx) => {
    seen = ctx.runId;
  });
  await runWithContext(runContext, () => probe.emit("before_tool_call", makeEvent(0)));
  if (seen !== runContext.runId) throw new Error("P2: the run context is not active in the handlers");
  // Sanity: results really are validated on this path (a wrongly typed one fails closed).
  const strict = new HookEngine({ logger: silent });
  strict.on("probe", "before_tool_call", async () => ({ block: "no" }) as never);
  if ((await strict.emit("before_tool_call", makeEvent(0))).decidedBy?.cause !== "invalid")
    throw new Error("P2: results are not validated");

  const [subject, baseline, reference] = await compare(
    [
      { label: "engine", round: engineRound },
      { label: "tapable", round: tapableRound },
      { label: "hookable", round: hookableRound },
    ],
    { n: 20_000, rounds: 41, warmup: 5 },
  );
  figure(
    "P2 modify hook with 3 no-op async handlers vs tapable AsyncSeriesWaterfallHook with 3 tapPromise taps",
    subject as number,
    baseline as number,
    1.5,
    `; hookable callHook ${fmt(reference as number)}`,
  );
}

// ─── P3: llm_input + before_prompt_build with 10,000 vs 10 messages of history ────────────────

function history(count: number): readonly Message[] {
  const messages: Message[] = [];
  for (let seq = 0; seq < count; seq++) {
    const role = seq % 2 ? "assistant" : "user";
    messages.push({
      id: `m${seq}`,
      sessionId: "s-bench",
      runId: `r${seq >> 3}`,
      seq,
      role,
      parts:
        seq % 4 === 3
          ? [
              { type: "text", text: `Let me look at file ${seq}.` },
              {
                type: "tool_call",
                toolCallId: `call_${seq}`,
                toolName: "Read",
                input: { file_path: `/src/f${seq}.ts` },
              },
            ]
          : [{ type: "text", text: `${role} message number ${seq}, with some ordinary text in it.` }],
      metadata: {},
      createdAt: new Date(1_700_000_000_000 + seq * 1000).toISOString(),
    });
  }
  // The runtime freezes messages once, when it creates them; dispatches never walk them again.
  return deepFreeze(messages);
}

async function p3(): Promise<void> {
  let dropped = 0;
  const engine = new HookEngine({ logger: { warn: () => dropped++, error: () => dropped++ } });
  engine.on("bench", "llm_input", async () => {});
  engine.on("bench", "before_prompt_build", async () => {});

  // Sanity: handlers get the history itself, not a copy.
  const probe = new HookEngine({ logger: silent });
  const probed = history(10);
  const seen: unknown[] = [];
  probe.on("probe", "llm_input", (event) => void seen.push(event.messages));
  probe.on("probe", "before_prompt_build", (event) => void seen.push(event.messages));
  probe.emit("llm_input", { provider: "openai", model: "gpt-bench", messages: probed });
  await probe.emit("before_prompt_build", { prompt: "q", messages: probed });
  await probe.drain();
  if (seen.length !== 2 || seen.some((m) => m !== probed))
    throw new Error("P3: handlers did not get the history as is");

  const round =
    (messages: readonly Message[]): Round =>
    (n) =>
      runWithContext(runContext, async () => {
        const t0 = now();
        for (let i = 0; i < n; i++) {
          engine.emit("llm_input", { provider: "openai", model: "gpt-bench", messages, systemPrompt: "Be brief." });
          const built = await engine.emit("before_prompt_build", { prompt: `question ${i}`, messages });
          if (built.result.systemPrompt !== undefined) sink++;
        }
        await engine.drain();
        return elapsed(t0);
      });

  const [large, small] = await compare(
    [
      { label: "10,000 messages", round: round(history(10_000)) },
      { label: "10 messages", round: round(history(10)) },
    ],
    { n: 10_000, rounds: 31, warmup: 3 },
  );
  figure(
    "P3 llm_input + before_prompt_build with a 10,000-message history vs a 10-message history",
    large as number,
    small as number,
    1.2,
    dropped ? `; ${dropped} detached events dropped or failed` : "",
  );
}

// `node … bench/hooks.bench.ts P2` runs one figure only (handy when profiling).
const only = process.argv.slice(2).map((a) => a.toUpperCase());
const figures = { P1: p1, P2: p2, P3: p3 };
for (const [name, run] of Object.entries(figures)) if (only.length === 0 || only.includes(name)) await run();
if (sink === -1) console.log("unreachable");
