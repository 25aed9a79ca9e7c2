// The canary scenarios the host adapters share with `gatehouse run` (harness/r1.ts): one policy
// plugin, the canaries it guards, and a scan of everything the Gatehouse store left on disk.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, afterEach, before, beforeEach } from "node:test";
import { filesUnder } from "../../harness/sinks.js";
import { createGatehouse } from "../../src/assembly/gatehouse.js";
import { definePlugin, type PluginDefinition } from "../../src/plugins/index.js";
import type { Gatehouse } from "../../src/runtime/gatehouse.js";
import type { AuditRecord } from "../../src/store/types.js";
import { chatChunk, type MockServer, startMockServer } from "../models/mock-server.js";

/** Each canary marks content a policy keeps out of every sink; `REASON` is a block's internal reason. */
export const CANARY = {
  /** In a user's prompt: `before_agent_run` blocks it. */
  prompt: "prompt-canary-7Q2",
  /** In a user's prompt: `before_input` blocks it. */
  input: "input-canary-R5T",
  /** In a model's answer: `before_response_emit` rewrites it away. */
  answer: "answer-canary-K9F",
  /** In a model's answer: `message_sending` rewrites it away. */
  sending: "sending-canary-H3J",
  /** In a model's answer: `before_response_emit` blocks the answer. */
  blockedAnswer: "blocked-canary-W4M",
  /** In a tool's output: `after_tool_call` redacts it. */
  toolOutput: "canary.person@example.com",
  /** The internal reason of every block: never shown, stored or sent to the model. */
  reason: "internal-reason-canary-Z8P",
} as const;

export const MESSAGES = {
  prompt: "Your message was refused by the policy.",
  input: "That input is not accepted here.",
  answer: "The answer was withheld by the policy.",
  tool: "deleteFiles is not allowed here.",
} as const;

/** What `message_sent` heard was delivered, oldest first (the policy's observer). */
export const delivered: string[] = [];

/** The policy: one plugin, one verdict per hook, as a project would write it. */
export const canaryPolicy = definePlugin({
  id: "canary-policy",
  setup(api) {
    api.on("before_input", (event) =>
      event.prompt.includes(CANARY.input)
        ? { outcome: "block", reason: CANARY.reason, message: MESSAGES.input }
        : undefined,
    );
    api.on("message_sending", (event) =>
      event.content.includes(CANARY.sending)
        ? { content: event.content.replaceAll(CANARY.sending, "[sent]") }
        : undefined,
    );
    api.on("message_sent", (event) => {
      delivered.push(event.content);
    });
    api.on("before_agent_run", (event) =>
      event.prompt.includes(CANARY.prompt)
        ? { outcome: "block", reason: CANARY.reason, message: MESSAGES.prompt }
        : undefined,
    );
    api.on("before_response_emit", (event) => {
      if (event.content.includes(CANARY.blockedAnswer))
        return { outcome: "block", reason: CANARY.reason, message: MESSAGES.answer };
      if (event.content.includes(CANARY.answer))
        return { content: event.content.replaceAll(CANARY.answer, "[redacted]") };
      return undefined;
    });
    api.on("before_tool_call", (event) =>
      event.toolName === "deleteFiles"
        ? { outcome: "block", reason: CANARY.reason, message: MESSAGES.tool }
        : undefined,
    );
    api.on("after_tool_call", (event) => {
      const text = typeof event.result === "string" ? event.result : JSON.stringify(event.result ?? "");
      return text.includes(CANARY.toolOutput) ? { result: text.replaceAll(CANARY.toolOutput, "[email]") } : undefined;
    });
  },
});

/** A policy that ends the run once the tool `finish` ran (a hook's `stopRun`), and asks for approval of `wire`. */
export const stopPolicy = definePlugin({
  id: "stop-policy",
  setup(api) {
    api.on("after_tool_call", (event) =>
      event.toolName === "finish" ? { stopRun: { message: "Stopped by the policy." } } : undefined,
    );
    api.on("before_tool_call", (event) =>
      event.toolName === "wire" ? { requireApproval: { title: "Wire money?" } } : undefined,
    );
  },
});

/** A Gatehouse in memory with `plugins`, for the verdicts the canary policy does not give. */
export function policyGatehouse(...plugins: PluginDefinition[]): Gatehouse {
  return createGatehouse({ model: "scripted:echo", tools: [], plugins, store: { kind: "memory" } });
}

/**
 * Per suite: a Chat Completions server (its requests cleared before each test); per test: a
 * Gatehouse with the canary policy on its own SQLite file, removed afterwards.
 */
export function canaryFixture(): { readonly server: MockServer; readonly handle: ReturnType<typeof canaryGatehouse> } {
  const fixture = {} as { server: MockServer; handle: ReturnType<typeof canaryGatehouse> };
  before(async () => {
    fixture.server = await startMockServer();
  });
  after(() => fixture.server.close());
  beforeEach(() => {
    fixture.server.requests.length = 0;
    fixture.handle = canaryGatehouse();
  });
  afterEach(() => fixture.handle.dispose());
  return fixture;
}

/** A Gatehouse with the canary policy on a SQLite file of its own, and what that file holds. */
export function canaryGatehouse(): { gatehouse: Gatehouse; dir: string; dispose(): void } {
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-adapter-"));
  const gatehouse = createGatehouse({
    model: "scripted:echo",
    tools: [],
    plugins: [canaryPolicy],
    store: { kind: "sqlite", path: join(dir, "data", "gatehouse.db") },
  });
  return { gatehouse, dir, dispose: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Closes the Gatehouse, then checks every byte of the store's files (the database, its WAL and
 * journal) for every canary and the reason. Returns the verdicts the store recorded (the audit:
 * hook, plugin, outcome), read before closing, so a test also sees the store was written to.
 */
export async function closeAndScan(handle: { gatehouse: Gatehouse; dir: string }): Promise<AuditRecord[]> {
  const audit = await handle.gatehouse.store.listAudit();
  await handle.gatehouse.close();
  const files = filesUnder(join(handle.dir, "data"));
  assert.ok(files.length > 0, "the store wrote its file");
  for (const file of files)
    for (const canary of Object.values(CANARY))
      assert.equal(file.bytes.indexOf(canary, 0, "utf8"), -1, `${canary} is in ${file.path}`);
  return audit;
}

/** Asserts none of the canaries (and no reason) is in `text`, naming where it looked. */
export function assertNoCanary(where: string, value: unknown, canaries: readonly string[] = Object.values(CANARY)) {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  for (const canary of canaries) assert.equal(text.includes(canary), false, `${canary} is in ${where}: ${text}`);
}

/** A non-streamed Chat Completions reply: this text, or these tool calls (ids call_0, call_1, …). */
export function completion(answer: string | { name: string; input: object }[]) {
  const message =
    typeof answer === "string"
      ? { role: "assistant", content: answer }
      : {
          role: "assistant",
          content: null,
          tool_calls: answer.map((c, i) => ({
            id: `call_${i}`,
            type: "function",
            function: { name: c.name, arguments: JSON.stringify(c.input) },
          })),
        };
  return {
    json: {
      id: "chatcmpl-1",
      object: "chat.completion",
      created: 1700000000,
      model: "gpt-test",
      choices: [{ index: 0, message, finish_reason: typeof answer === "string" ? "stop" : "tool_calls" }],
      usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
    },
  };
}

/** A streamed answer in these deltas (a canary split across two of them). */
export const streamedAnswer = (...deltas: string[]) => ({
  sse: [
    { data: chatChunk({ role: "assistant", content: "" }) },
    ...deltas.map((content) => ({ data: chatChunk({ content }) })),
    { data: chatChunk({}, "stop") },
    { data: "[DONE]" },
  ],
});
