import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import type { Message, SessionStore } from "../../src/store/types.js";
import { plugin, testGatehouse } from "./helpers.js";

// The doors at library level (issue 11): what each one lets through, and what the store keeps.

const stored = async (store: SessionStore): Promise<string> => {
  const all: Message[] = [];
  for (const s of await store.listSessions({ limit: 100 })) all.push(...(await store.sessionMessages(s.id)));
  return JSON.stringify(all);
};

describe("the doors", () => {
  const closers: (() => Promise<void>)[] = [];
  after(async () => {
    for (const close of closers) await close();
  });

  test("withholding a sub-agent's answer empties every session below it, two deep", async () => {
    const agent = (prompt: string) => ({ name: "Agent", input: { description: "d", prompt } });
    const { gatehouse, store } = testGatehouse(
      {
        runs: [
          { match: "^grand", turns: [{ text: "grand answer SECRET-GRAND" }] },
          {
            match: "^child",
            turns: [{ toolCalls: [agent("grand task SECRET-TASK")] }, { text: "WITHHOLD {{lastToolResult}}" }],
          },
          { turns: [{ toolCalls: [agent("child task")] }, { text: "top saw {{lastToolResult}}" }] },
        ],
      },
      {
        subagents: { maxDepth: 2 },
        permissions: { allow: ["Agent"] },
        plugins: [
          plugin("withholder", (api) =>
            api.on("after_tool_call", (e) =>
              JSON.stringify(e.result ?? null).includes("WITHHOLD") ? { block: true } : undefined,
            ),
          ),
        ],
      },
    );
    closers.push(() => gatehouse.close());
    const result = await gatehouse.run({ prompt: "start" });
    assert.equal(result.outcome, "completed");
    assert.match(result.reply ?? "", /withheld by a policy \(withholder\)/);
    const everything = await stored(store);
    for (const secret of ["SECRET-GRAND", "SECRET-TASK"]) assert.ok(!everything.includes(secret), secret);
    const [child] = await store.listSessions({ parentSessionId: result.sessionId });
    const [grand] = await store.listSessions({ parentSessionId: child?.id as string });
    const [grandRun] = await store.listRuns(grand?.id as string);
    assert.equal(grandRun?.status, "blocked");
  });

  test("a step's message is stored with the input each call ran with, and none for a call that did not run", async () => {
    const { gatehouse, store } = testGatehouse(
      {
        runs: [
          {
            turns: [
              {
                toolCalls: [
                  { id: "a", name: "Echo", input: { text: "rewrite me" } },
                  { id: "b", name: "Echo", input: { text: "refuse me" } },
                  { id: "c", name: "Echo", input: { text: "as is" } },
                ],
              },
              { text: "done" },
            ],
          },
        ],
      },
      {
        plugins: [
          plugin("calls", (api) =>
            api.on("before_tool_call", (e) => {
              const text = (e.params as { text: string }).text;
              if (text === "rewrite me") return { params: { text: "rewritten" } };
              if (text === "refuse me") return { block: true, blockReason: "no" };
              return undefined;
            }),
          ),
        ],
      },
    );
    closers.push(() => gatehouse.close());
    const result = await gatehouse.run({ prompt: "go" });
    const messages = await store.runMessages(result.runId);
    const calls = messages.flatMap((m) => m.parts.filter((p) => p.type === "tool_call"));
    assert.deepEqual(
      calls.map((p) => (p.type === "tool_call" ? p.input : undefined)),
      [{ text: "rewritten" }, {}, { text: "as is" }],
    );
  });

  test("a message_sending rewrite is the stored answer, and later model calls see it", async () => {
    const { gatehouse, store, calls } = testGatehouse(
      { runs: [{ turns: [{ text: "the key is SECRET-KEY" }] }, { turns: [{ text: "second" }] }] },
      {
        plugins: [
          plugin("sender", (api) =>
            api.on("message_sending", (e) => ({ content: e.content.replace("SECRET-KEY", "[key]") })),
          ),
        ],
      },
    );
    closers.push(() => gatehouse.close());
    const first = await gatehouse.run({ prompt: "one" });
    assert.equal(first.reply, "the key is [key]");
    await gatehouse.run({ prompt: "two", sessionId: first.sessionId });
    assert.ok(!(await stored(store)).includes("SECRET-KEY"));
    assert.ok(!JSON.stringify(calls.at(-1)?.prompt).includes("SECRET-KEY"), "the next model call sees the rewrite");
  });

  test("a cancelled delivery keeps the response gate's rewrites of the run's earlier texts", async () => {
    const { gatehouse, store } = testGatehouse(
      {
        runs: [
          {
            turns: [
              { text: "early SECRET-EARLY", toolCalls: [{ name: "Echo", input: { text: "x" } }] },
              { text: "final" },
            ],
          },
        ],
      },
      {
        plugins: [
          plugin("both", (api) => {
            api.on("before_response_emit", (e) => ({
              allContent: e.allContent.map((t) => t.replace("SECRET-EARLY", "[x]")),
            }));
            api.on("message_sending", () => ({ cancel: true }));
          }),
        ],
      },
    );
    closers.push(() => gatehouse.close());
    const result = await gatehouse.run({ prompt: "go" });
    assert.equal(result.reply, null);
    const everything = await stored(store);
    assert.ok(!everything.includes("SECRET-EARLY"));
    assert.match(everything, /early \[x\]/);
    assert.match(everything, /not delivered: a policy \(both\)/);
  });

  test("a slash command's reply and a block's notice carry their source to the output gates", async () => {
    const sources: string[] = [];
    const { gatehouse } = testGatehouse(
      { runs: [{ turns: [{ text: "answer" }] }] },
      {
        plugins: [
          plugin("sources", (api) => {
            api.on("before_response_emit", (e) => void sources.push(`emit:${e.source}`));
            api.on("message_sending", (e) => void sources.push(`send:${e.source}`));
            api.on("before_input", (e) =>
              e.prompt === "no" ? { outcome: "block", reason: "r", message: "Not that." } : undefined,
            );
          }),
        ],
      },
    );
    closers.push(() => gatehouse.close());
    await gatehouse.run({ prompt: "/help" });
    await gatehouse.run({ prompt: "no" });
    await gatehouse.run({ prompt: "yes" });
    assert.deepEqual(sources, [
      "emit:command",
      "send:command",
      "emit:notice",
      "send:notice",
      "emit:model",
      "send:model",
    ]);
  });
});
