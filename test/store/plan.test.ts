import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Message } from "../../src/core/message.js";
import {
  assembleHistory,
  checkCompactionRange,
  outermostSummaries,
  planBlock,
  planRewrite,
  rewriteParts,
} from "../../src/store/plan.js";
import { image, reasoning, text, toolCall, toolResult } from "./helpers.js";

let nextSeq = 1;
function msg(role: Message["role"], parts: Message["parts"], seq = nextSeq++): Message {
  return { id: `m${seq}`, sessionId: "s", runId: "r", seq, role, parts, metadata: {}, createdAt: "t" };
}

describe("multi-part rewrite", () => {
  test("the new text takes the first text part's place; other text and reasoning go; other parts keep their order", () => {
    const parts = [reasoning("r"), toolCall("a"), text("one"), image(), text("two"), toolCall("b")];
    assert.deepEqual(rewriteParts(parts, "new"), [toolCall("a"), text("new"), image(), toolCall("b")]);
  });

  test("an empty new text removes every text part", () => {
    assert.deepEqual(rewriteParts([text("x"), toolCall("a"), text("y")], ""), [toolCall("a")]);
    assert.deepEqual(rewriteParts([text("x")], ""), []);
  });

  test("the plan keeps unchanged texts, drops every reasoning of the run, and removes messages left empty", () => {
    const messages = [
      msg("user", [text("q")]),
      msg("assistant", [reasoning("restates it"), text("same")]),
      msg("assistant", [reasoning("thinking"), toolCall("c")]),
      msg("tool", [toolResult("c", 1)]),
      msg("assistant", [text("to go")]),
      msg("assistant", [reasoning("only this")]),
      msg("assistant", [text("old "), text("answer")]),
    ];
    const plan = planRewrite(messages, ["same", "", "new answer"]);
    assert.deepEqual(plan.removals, [messages[4]?.id, messages[5]?.id]);
    assert.deepEqual(plan.updates, [
      { id: messages[1]?.id, parts: [text("same")] },
      { id: messages[2]?.id, parts: [toolCall("c")] },
      { id: messages[6]?.id, parts: [text("new answer")] },
    ]);
    assert.deepEqual(
      plan.changedSeqs,
      [1, 2, 4, 5, 6].map((i) => messages[i]?.seq),
    );
  });

  test("a plan that changes no text changes nothing, reasoning included", () => {
    const messages = [msg("user", [text("q")]), msg("assistant", [reasoning("kept"), text("same")])];
    assert.deepEqual(planRewrite(messages, ["same"]), { updates: [], removals: [], changedSeqs: [] });
  });
});

describe("block planning", () => {
  test("an output block removes assistant and tool messages and puts the notice where the first of them was", () => {
    const messages = [msg("user", [text("q")]), msg("assistant", [toolCall("c")]), msg("tool", [toolResult("c", 1)])];
    assert.deepEqual(planBlock("output", messages), {
      removals: [messages[1]?.id, messages[2]?.id],
      seq: messages[1]?.seq,
    });
    assert.equal(planBlock("prompt", messages).removals.length, 3);
    assert.equal(planBlock("output", [messages[0] as Message]).seq, undefined);
  });
});

describe("summaries in history", () => {
  const summary = (id: string, fromSeq: number, toSeq: number, seq: number) => ({
    id,
    fromSeq,
    toSeq,
    message: { ...msg("summary", [text(id)], seq), runId: null },
  });

  test("nested summaries: the outer one is shown; of two over the same range, the later one", () => {
    const inner = summary("inner", 1, 2, 10);
    const outer = summary("outer", 1, 4, 11);
    const redo = summary("redo", 1, 4, 12);
    assert.deepEqual(
      outermostSummaries([inner, outer, redo]).map((s) => s.id),
      ["redo"],
    );
  });

  test("each summary stands where its range starts; messages outside every range stay in order", () => {
    nextSeq = 1;
    const messages = [1, 2, 3, 4, 5, 6].map((n) => msg(n % 2 ? "user" : "assistant", [text(`m${n}`)]));
    const history = assembleHistory(messages, [summary("A", 2, 3, 20), summary("B", 5, 5, 21)]);
    assert.deepEqual(
      history.map((m) => (m.parts[0] as { text: string }).text),
      ["m1", "A", "m4", "B", "m6"],
    );
    const trailing = assembleHistory(messages.slice(0, 2), [summary("C", 2, 9, 22)]);
    assert.deepEqual(
      trailing.map((m) => (m.parts[0] as { text: string }).text),
      ["m1", "C"],
    );
  });

  test("a new range must contain an existing summary's range or stay clear of it", () => {
    const existing = [{ id: "s", fromSeq: 3, toSeq: 5 }];
    checkCompactionRange(existing, 1, 2);
    checkCompactionRange(existing, 1, 9);
    checkCompactionRange(existing, 3, 5);
    assert.throws(() => checkCompactionRange(existing, 4, 9), /without containing it/);
    assert.throws(() => checkCompactionRange(existing, 4, 4), /without containing it/);
  });
});
