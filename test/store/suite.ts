import assert from "node:assert/strict";
import { readFileSync, statSync } from "node:fs";
import { describe, test } from "node:test";
import { messageText } from "../../src/core/message.js";
import { assistantTexts, type SessionStore, StoreError } from "../../src/store/index.js";
import { filesContaining, image, reasoning, text, toolCall, toolResult, uniqueId } from "./helpers.js";

/** A fresh store, plus what it takes to look for leftovers of blocked content at rest. */
export interface StoreHarness {
  readonly store: SessionStore;
  readonly transcriptDir: string;
  /** Places (files or table rows) that still hold the needle while the store is open. */
  scanOpen?(needle: string): Promise<string[]>;
  /** Closes the store, then reports the places that still hold the needle. */
  closeAndScan?(needle: string): Promise<string[]>;
  close(): Promise<void>;
}

export type StoreFactory = () => Promise<StoreHarness>;

const NOTICE = { notice: "This answer was withheld by policy.", blockedBy: "acme-dlp", hook: "before_response_emit" };

/** A session with one finished run (user + assistant) so there is history before the run under test. */
async function sessionWithHistory(store: SessionStore, key = uniqueId("key")) {
  const session = await store.createSession({ key });
  const earlier = await store.startRun({ sessionId: session.id });
  await store.appendMessage({ sessionId: session.id, runId: earlier.id, role: "user", parts: [text("hello")] });
  await store.appendMessage({ sessionId: session.id, runId: earlier.id, role: "assistant", parts: [text("hi there")] });
  await store.finishRun(earlier.id, "completed");
  const run = await store.startRun({ sessionId: session.id });
  return { session, earlier, run };
}

async function rejectsWith(promise: Promise<unknown>, code: StoreError["code"]): Promise<void> {
  await assert.rejects(promise, (error: unknown) => error instanceof StoreError && error.code === code);
}

export function defineStoreSuite(label: string, factory: StoreFactory): void {
  const withStore = (fn: (h: StoreHarness) => Promise<void>) => async () => {
    const harness = await factory();
    try {
      await fn(harness);
    } finally {
      await harness.close();
    }
  };

  describe(`${label}: sessions and runs`, () => {
    test(
      "a session reads back by id and by key, the latest session of a key winning",
      withStore(async ({ store }) => {
        const key = uniqueId("key");
        const first = await store.createSession({ key });
        const second = await store.createSession({ key });
        assert.deepEqual(await store.getSession(first.id), first);
        assert.equal((await store.getSessionByKey(key))?.id, second.id);
        assert.equal(await store.getSession("no-such-session"), undefined);
        await rejectsWith(store.createSession({ id: first.id }), "conflict");
      }),
    );

    test(
      "a session's title: given at creation, set, cleared; one line of text; not activity",
      withStore(async ({ store }) => {
        const titled = await store.createSession({ title: "  Garden plans " });
        assert.equal(titled.title, "Garden plans");
        assert.equal((await store.getSession(titled.id))?.title, "Garden plans");
        const plain = await store.createSession();
        assert.equal("title" in plain, false, "no title unless one is given");
        assert.equal(await store.setSessionTitle(plain.id, "Fence repair"), true);
        const renamed = await store.getSession(plain.id);
        assert.equal(renamed?.title, "Fence repair");
        assert.equal(renamed?.updatedAt, plain.updatedAt, "renaming is not activity");
        const [listed] = (await store.listSessions({ limit: 10 })).filter((s) => s.id === plain.id);
        assert.equal(listed?.title, "Fence repair");
        assert.equal(await store.setSessionTitle(plain.id, null), true);
        assert.equal("title" in ((await store.getSession(plain.id)) ?? {}), false, "cleared");
        assert.equal(await store.setSessionTitle("no-such-session", "x"), false);
        await rejectsWith(store.setSessionTitle(plain.id, "two\nlines"), "invalid");
        await rejectsWith(store.setSessionTitle(plain.id, "   "), "invalid");
        await rejectsWith(store.setSessionTitle(plain.id, "x".repeat(501)), "invalid");
      }),
    );

    test(
      "runs are numbered in admission order and a blocked run stays blocked when finished",
      withStore(async ({ store }) => {
        const session = await store.createSession();
        const a = await store.startRun({ sessionId: session.id, trigger: "api", jobId: "job-1" });
        const b = await store.startRun({ sessionId: session.id, depth: 1, parentRunId: a.id });
        assert.deepEqual([a.seq, b.seq], [1, 2]);
        assert.equal(a.status, "running");
        assert.equal(a.jobId, "job-1");
        assert.equal(b.parentRunId, a.id);
        const done = await store.finishRun(a.id, "completed");
        assert.equal(done.status, "completed");
        assert.ok(done.endedAt);
        await store.blockRun(b.id, NOTICE);
        assert.equal((await store.finishRun(b.id, "completed")).status, "blocked");
        assert.deepEqual(
          (await store.listRuns(session.id)).map((r) => r.status),
          ["completed", "blocked"],
        );
        await rejectsWith(store.startRun({ sessionId: "missing" }), "not_found");
      }),
    );

    test(
      "a finished run keeps its model, usage, outcome detail and error kind",
      withStore(async ({ store }) => {
        const session = await store.createSession();
        const a = await store.startRun({ sessionId: session.id });
        const b = await store.startRun({ sessionId: session.id });
        const usage = { inputTokens: 120, outputTokens: 30, totalTokens: 150 };
        await store.finishRun(a.id, "failed", { model: "openai:gpt-test", usage, detail: "max_steps" });
        await store.finishRun(b.id, "failed", { model: "anthropic:claude", errorKind: "rate_limit" });
        const [first, second] = await store.listRuns(session.id);
        assert.equal(first?.model, "openai:gpt-test");
        assert.deepEqual(first?.usage, usage);
        assert.equal(first?.detail, "max_steps");
        assert.equal(first?.errorKind, undefined);
        assert.equal(second?.errorKind, "rate_limit");
        assert.equal(second?.usage, undefined);
        assert.deepEqual(await store.getRun(a.id), first);
      }),
    );

    test(
      "history leaves out the messages of a run that failed with an error, and keeps a max_steps run's",
      withStore(async ({ store }) => {
        const session = await store.createSession();
        const failed = await store.startRun({ sessionId: session.id });
        await store.appendMessage({ sessionId: session.id, runId: failed.id, role: "user", parts: [text("lost")] });
        await store.finishRun(failed.id, "failed", { errorKind: "rate_limit" });
        const stopped = await store.startRun({ sessionId: session.id });
        await store.appendMessage({ sessionId: session.id, runId: stopped.id, role: "user", parts: [text("kept")] });
        await store.finishRun(stopped.id, "failed", { detail: "max_steps" });
        const texts = (await store.history(session.id)).map((m) => (m.parts[0] as { text: string }).text);
        assert.deepEqual(texts, ["kept"]);
        assert.equal((await store.sessionMessages(session.id)).length, 2, "both stay stored");
      }),
    );

    test(
      "sessions list with counts, filtered by key and by parent; show gives runs, count and summaries",
      withStore(async ({ store }) => {
        const key = uniqueId("key");
        const { session, run } = await sessionWithHistory(store, key);
        const child = await store.createSession({ key, parentSessionId: session.id });
        const listed = await store.listSessions({ key });
        assert.deepEqual(listed.map((s) => s.id).sort(), [session.id, child.id].sort());
        const parent = listed.find((s) => s.id === session.id);
        assert.equal(parent?.messageCount, 2);
        assert.equal(parent?.runCount, 2);
        assert.deepEqual(
          (await store.listSessions({ key, parentSessionId: null })).map((s) => s.id),
          [session.id],
        );
        assert.deepEqual(
          (await store.listSessions({ parentSessionId: session.id })).map((s) => s.id),
          [child.id],
        );
        const shown = await store.showSession(session.id);
        assert.equal(shown?.messageCount, 2);
        assert.deepEqual(shown?.runs.map((r) => r.id).at(-1), run.id);
        assert.equal(await store.showSession("missing"), undefined);
      }),
    );

    test(
      "deleting a session removes it, its sub-agent sessions, runs and messages, and keeps audit records",
      withStore(async ({ store }) => {
        const { session, run } = await sessionWithHistory(store);
        const child = await store.createSession({ parentSessionId: session.id });
        const childRun = await store.startRun({ sessionId: child.id, depth: 1, parentRunId: run.id });
        await store.appendMessage({ sessionId: child.id, runId: childRun.id, role: "user", parts: [text("sub")] });
        await store.writeAudit({ hook: "before_agent_run", pluginId: "p", outcome: "pass", sessionId: session.id });
        assert.equal(await store.deleteSession(session.id), true);
        assert.equal(await store.getSession(session.id), undefined);
        assert.equal(await store.getSession(child.id), undefined);
        assert.equal(await store.getRun(run.id), undefined);
        assert.deepEqual(await store.runMessages(childRun.id), []);
        assert.equal((await store.listAudit({ sessionId: session.id })).length, 1);
        assert.equal(await store.deleteSession(session.id), false);
      }),
    );

    test(
      "an export is JSONL: header, session, runs, messages, summaries, pending injections, audit",
      withStore(async ({ store }) => {
        const { session, run } = await sessionWithHistory(store);
        await store.appendMessage({ sessionId: session.id, runId: run.id, role: "user", parts: [text("q")] });
        await store.recordCompaction({ sessionId: session.id, fromSeq: 1, toSeq: 2, summary: "greetings" });
        await store.queueInjection({ sessionId: session.id, text: "ctx", placement: "prepend" });
        await store.writeAudit({ hook: "before_agent_run", pluginId: "p", outcome: "pass", sessionId: session.id });
        let jsonl = "";
        for await (const line of store.exportSession(session.id)) jsonl += line;
        assert.ok(jsonl.endsWith("\n"));
        const records = jsonl
          .trimEnd()
          .split("\n")
          .map((l) => JSON.parse(l) as { type: string });
        assert.deepEqual(
          records.map((r) => r.type),
          [
            "export",
            "session",
            "run",
            "run",
            "message",
            "message",
            "message",
            "message",
            "compaction",
            "injection",
            "audit",
          ],
        );
        await assert.rejects(async () => {
          for await (const _ of store.exportSession("missing")) assert.fail("no line expected");
        });
      }),
    );
  });

  describe(`${label}: messages and history`, () => {
    test(
      "messages keep their order and parts; the run's messages are found by run id",
      withStore(async ({ store }) => {
        const { session, earlier, run } = await sessionWithHistory(store);
        const parts = [text("look"), toolCall("c1", { command: "ls" }), image()];
        const m = await store.appendMessage({
          sessionId: session.id,
          runId: run.id,
          role: "assistant",
          parts,
          metadata: { model: "scripted" },
        });
        assert.equal(m.seq, 3);
        assert.deepEqual(m.parts, parts);
        const read = await store.runMessages(run.id);
        assert.deepEqual(read, [m]);
        assert.equal((await store.runMessages(earlier.id)).length, 2);
        assert.deepEqual(
          (await store.sessionMessages(session.id, { afterSeq: 1, limit: 1 })).map((x) => x.seq),
          [2],
        );
      }),
    );

    test(
      "concurrent appends to one session get distinct, consecutive positions",
      withStore(async ({ store }) => {
        const { session, run } = await sessionWithHistory(store);
        const appended = await Promise.all(
          Array.from({ length: 40 }, (_, i) =>
            store.appendMessage({ sessionId: session.id, runId: run.id, role: "user", parts: [text(`m${i}`)] }),
          ),
        );
        assert.deepEqual(
          appended.map((m) => m.seq).sort((a, b) => a - b),
          Array.from({ length: 40 }, (_, i) => i + 3),
        );
        assert.equal((await store.runMessages(run.id)).length, 40);
      }),
    );

    test(
      "appending rejects an empty assistant message, malformed parts, and a run of another session",
      withStore(async ({ store }) => {
        const { session, run } = await sessionWithHistory(store);
        const other = await store.createSession();
        await rejectsWith(
          store.appendMessage({ sessionId: session.id, runId: run.id, role: "assistant", parts: [] }),
          "invalid",
        );
        await rejectsWith(
          store.appendMessage({
            sessionId: session.id,
            runId: run.id,
            role: "user",
            parts: [{ type: "video" } as never],
          }),
          "invalid",
        );
        await rejectsWith(
          store.appendMessage({ sessionId: other.id, runId: run.id, role: "user", parts: [text("x")] }),
          "not_found",
        );
        assert.deepEqual(await store.runMessages(run.id), []);
        assert.equal((await store.sessionMessages(other.id)).length, 0);
      }),
    );

    test(
      "an idempotency key makes a repeated append return the first message and write nothing",
      withStore(async ({ store }) => {
        const { session, run } = await sessionWithHistory(store);
        const input = {
          sessionId: session.id,
          runId: run.id,
          role: "tool" as const,
          parts: [toolResult("c1", "ok")],
          idempotencyKey: "tool:c1",
        };
        const first = await store.appendMessage(input);
        const again = await store.appendMessage({ ...input, parts: [toolResult("c1", "different")] });
        assert.deepEqual(again, first);
        assert.equal(first.idempotencyKey, "tool:c1");
        assert.equal((await store.runMessages(run.id)).length, 1);
      }),
    );

    test(
      "history puts each summary in place of the range it covers, the outermost of nested ones winning",
      withStore(async ({ store }) => {
        const { session, run } = await sessionWithHistory(store);
        for (const t of ["q1", "a1", "q2"]) {
          await store.appendMessage({
            sessionId: session.id,
            runId: run.id,
            role: t.startsWith("q") ? "user" : "assistant",
            parts: [text(t)],
          });
        }
        // seqs: 1 hello, 2 hi there, 3 q1, 4 a1, 5 q2
        await store.recordCompaction({ sessionId: session.id, fromSeq: 1, toSeq: 2, summary: "S-inner" });
        assert.deepEqual((await store.history(session.id)).map(messageText), ["S-inner", "q1", "a1", "q2"]);
        await store.recordCompaction({ sessionId: session.id, fromSeq: 1, toSeq: 4, summary: "S-outer" });
        const history = await store.history(session.id);
        assert.deepEqual(history.map(messageText), ["S-outer", "q2"]);
        assert.equal(history[0]?.role, "summary");
        await rejectsWith(
          store.recordCompaction({ sessionId: session.id, fromSeq: 3, toSeq: 5, summary: "overlap" }),
          "conflict",
        );
        const compactions = await store.listCompactions(session.id);
        assert.equal(compactions.length, 2);
        assert.ok(compactions.every((c) => c.runIds.length > 0));
      }),
    );

    test(
      "after a compaction summarised part of the current run, the run's messages are still found by run id",
      withStore(async ({ store }) => {
        const { session, run } = await sessionWithHistory(store);
        const say = (role: "user" | "assistant", t: string) =>
          store.appendMessage({ sessionId: session.id, runId: run.id, role, parts: [text(t)] });
        await say("user", "question");
        await store.appendMessage({
          sessionId: session.id,
          runId: run.id,
          role: "assistant",
          parts: [text("step one"), toolCall("c1")],
        });
        await store.appendMessage({
          sessionId: session.id,
          runId: run.id,
          role: "tool",
          parts: [toolResult("c1", "x")],
        });
        const compaction = await store.recordCompaction({
          sessionId: session.id,
          fromSeq: 1,
          toSeq: 5,
          summary: "earlier turns and the first step",
        });
        assert.ok(compaction.runIds.includes(run.id));
        await say("assistant", "final answer");
        const history = await store.history(session.id);
        assert.deepEqual(history.map(messageText), ["earlier turns and the first step", "final answer"]);
        const mine = await store.runMessages(run.id);
        assert.deepEqual(
          mine.map((m) => m.role),
          ["user", "assistant", "tool", "assistant"],
        );
        assert.deepEqual(assistantTexts(mine), ["step one", "final answer"]);
      }),
    );
  });

  describe(`${label}: rewrite`, () => {
    test(
      "a rewrite of multi-part messages puts the text in the first text part, drops other text and reasoning, keeps tool calls and images",
      withStore(async ({ store }) => {
        const { session, earlier, run } = await sessionWithHistory(store);
        const m1 = await store.appendMessage({
          sessionId: session.id,
          runId: run.id,
          role: "assistant",
          parts: [reasoning("think SECRET"), text("part A SECRET"), toolCall("c1", { q: 1 }), text("part B"), image()],
        });
        await store.appendMessage({ sessionId: session.id, runId: run.id, role: "tool", parts: [toolResult("c1", 1)] });
        const m2 = await store.appendMessage({
          sessionId: session.id,
          runId: run.id,
          role: "assistant",
          parts: [text("final SECRET")],
        });
        const result = await store.rewriteRun(run.id, ["part A [redacted]", "final [redacted]"]);
        assert.deepEqual(result, { updatedMessages: 2, removedMessages: 0, droppedSummaries: 0 });
        const [r1, , r2] = await store.runMessages(run.id);
        assert.deepEqual(r1?.parts, [text("part A [redacted]"), toolCall("c1", { q: 1 }), image()]);
        assert.deepEqual(r2?.parts, [text("final [redacted]")]);
        assert.equal(r1?.id, m1.id);
        assert.equal(r2?.seq, m2.seq);
        assert.deepEqual((await store.runMessages(earlier.id)).map(messageText), ["hello", "hi there"]);
      }),
    );

    test(
      "rewriting to empty text removes a text-only message and keeps a tool-call message's calls: no empty assistant message",
      withStore(async ({ store }) => {
        const { session, run } = await sessionWithHistory(store);
        await store.appendMessage({
          sessionId: session.id,
          runId: run.id,
          role: "assistant",
          parts: [text("calling"), toolCall("c1")],
        });
        await store.appendMessage({ sessionId: session.id, runId: run.id, role: "tool", parts: [toolResult("c1", 1)] });
        await store.appendMessage({ sessionId: session.id, runId: run.id, role: "assistant", parts: [text("gone")] });
        await store.appendMessage({ sessionId: session.id, runId: run.id, role: "assistant", parts: [text("kept")] });
        const result = await store.rewriteRun(run.id, ["", "", "kept"]);
        assert.deepEqual(result, { updatedMessages: 1, removedMessages: 1, droppedSummaries: 0 });
        const after = await store.runMessages(run.id);
        assert.deepEqual(
          after.map((m) => m.parts.map((p) => p.type).join("+")),
          ["tool_call", "tool_result", "text"],
        );
        assert.ok(after.every((m) => m.parts.length > 0));
      }),
    );

    test(
      "a rewrite with the wrong number of texts changes nothing",
      withStore(async ({ store }) => {
        const { session, run } = await sessionWithHistory(store);
        await store.appendMessage({ sessionId: session.id, runId: run.id, role: "assistant", parts: [text("a")] });
        await rejectsWith(store.rewriteRun(run.id, ["x", "y"]), "invalid");
        assert.deepEqual(assistantTexts(await store.runMessages(run.id)), ["a"]);
        await rejectsWith(store.rewriteRun("missing-run", []), "not_found");
      }),
    );

    test(
      "a rewrite reaches a message a summary covers, and drops that summary (it was written from the old text)",
      withStore(async ({ store }) => {
        const { session, run } = await sessionWithHistory(store);
        await store.appendMessage({ sessionId: session.id, runId: run.id, role: "user", parts: [text("q")] });
        await store.appendMessage({ sessionId: session.id, runId: run.id, role: "assistant", parts: [text("early")] });
        await store.recordCompaction({ sessionId: session.id, fromSeq: 1, toSeq: 4, summary: "sum of early" });
        await store.appendMessage({ sessionId: session.id, runId: run.id, role: "assistant", parts: [text("late")] });
        const untouched = await store.rewriteRun(run.id, ["early", "late v2"]);
        assert.equal(untouched.droppedSummaries, 0);
        assert.equal((await store.listCompactions(session.id)).length, 1);
        const result = await store.rewriteRun(run.id, ["early v2", "late v2"]);
        assert.equal(result.droppedSummaries, 1);
        assert.deepEqual(await store.listCompactions(session.id), []);
        assert.deepEqual((await store.history(session.id)).map(messageText), [
          "hello",
          "hi there",
          "q",
          "early v2",
          "late v2",
        ]);
      }),
    );
  });

  describe(`${label}: block`, () => {
    test(
      "a block removes the run's assistant and tool messages, keeps the prompt and stores one notice in their place",
      withStore(async ({ store }) => {
        const { session, earlier, run } = await sessionWithHistory(store);
        await store.appendMessage({ sessionId: session.id, runId: run.id, role: "user", parts: [text("question")] });
        const first = await store.appendMessage({
          sessionId: session.id,
          runId: run.id,
          role: "assistant",
          parts: [reasoning("r"), text("calling"), toolCall("c1", { secret: 1 })],
        });
        await store.appendMessage({
          sessionId: session.id,
          runId: run.id,
          role: "tool",
          parts: [toolResult("c1", "s")],
        });
        await store.appendMessage({ sessionId: session.id, runId: run.id, role: "assistant", parts: [text("answer")] });
        const result = await store.blockRun(run.id, { ...NOTICE, category: "pii" });
        assert.equal(result.changed, true);
        assert.equal(result.removedMessages, 3);
        const after = await store.runMessages(run.id);
        assert.deepEqual(
          after.map((m) => [m.role, messageText(m)]),
          [
            ["user", "question"],
            ["assistant", NOTICE.notice],
          ],
        );
        const notice = after[1];
        assert.equal(notice?.seq, first.seq);
        assert.equal(notice?.metadata.blockedBy, "acme-dlp");
        assert.equal(notice?.metadata.hook, "before_response_emit");
        assert.equal(notice?.metadata.category, "pii");
        assert.equal(typeof notice?.metadata.at, "string");
        assert.equal(Object.keys(notice?.metadata ?? {}).length, 4);
        assert.equal((await store.getRun(run.id))?.status, "blocked");
        assert.equal((await store.runMessages(earlier.id)).length, 2);
        assert.deepEqual((await store.history(session.id)).map(messageText), [
          "hello",
          "hi there",
          "question",
          NOTICE.notice,
        ]);
      }),
    );

    test(
      "a block may leave the run cancelled or failed: the output goes, the outcome stays",
      withStore(async ({ store }) => {
        const { session, run } = await sessionWithHistory(store);
        await store.appendMessage({ sessionId: session.id, runId: run.id, role: "user", parts: [text("q")] });
        await store.appendMessage({
          sessionId: session.id,
          runId: run.id,
          role: "assistant",
          parts: [text("unchecked"), toolCall("c1", {})],
        });
        await store.blockRun(run.id, { ...NOTICE, status: "cancelled" });
        assert.equal((await store.getRun(run.id))?.status, "cancelled");
        assert.deepEqual((await store.runMessages(run.id)).map(messageText), ["q", NOTICE.notice]);
        assert.equal((await store.finishRun(run.id, "cancelled")).status, "cancelled");
        const failed = await store.startRun({ sessionId: session.id });
        await store.appendMessage({ sessionId: session.id, runId: failed.id, role: "assistant", parts: [text("x")] });
        await store.blockRun(failed.id, { ...NOTICE, status: "failed" });
        assert.equal((await store.getRun(failed.id))?.status, "failed");
        await rejectsWith(store.blockRun(failed.id, { ...NOTICE, status: "running" as never }), "invalid");
      }),
    );

    test(
      "blocking the same run again is a no-op",
      withStore(async ({ store }) => {
        const { session, run } = await sessionWithHistory(store);
        await store.appendMessage({ sessionId: session.id, runId: run.id, role: "assistant", parts: [text("x")] });
        const first = await store.blockRun(run.id, NOTICE);
        const second = await store.blockRun(run.id, { ...NOTICE, notice: "another notice" });
        assert.equal(second.changed, false);
        assert.deepEqual(second.replacement, first.replacement);
        assert.deepEqual((await store.runMessages(run.id)).map(messageText), [NOTICE.notice]);
      }),
    );

    test(
      "a block also drops a summary that covers part of the blocked run",
      withStore(async ({ store }) => {
        const { session, earlier, run } = await sessionWithHistory(store);
        await store.appendMessage({ sessionId: session.id, runId: run.id, role: "user", parts: [text("q")] });
        await store.appendMessage({ sessionId: session.id, runId: run.id, role: "assistant", parts: [text("leak")] });
        const previous = await store.recordCompaction({
          sessionId: session.id,
          fromSeq: 1,
          toSeq: 2,
          summary: "older turns",
        });
        const covering = await store.recordCompaction({
          sessionId: session.id,
          fromSeq: 1,
          toSeq: 4,
          summary: "summary quoting leak",
        });
        assert.deepEqual(previous.runIds, [earlier.id]);
        await store.appendMessage({ sessionId: session.id, runId: run.id, role: "assistant", parts: [text("more")] });
        const result = await store.blockRun(run.id, NOTICE);
        assert.equal(result.droppedSummaries, 1);
        const remaining = await store.listCompactions(session.id);
        assert.deepEqual(
          remaining.map((c) => c.id),
          [previous.id],
        );
        const history = await store.history(session.id);
        assert.deepEqual(history.map(messageText), ["older turns", "q", NOTICE.notice]);
        assert.ok(!(await store.sessionMessages(session.id)).some((m) => m.id === covering.message.id));
      }),
    );

    test(
      "dropping the summaries that cover a run leaves the others",
      withStore(async ({ store }) => {
        const { session, earlier, run } = await sessionWithHistory(store);
        await store.appendMessage({ sessionId: session.id, runId: run.id, role: "user", parts: [text("q")] });
        await store.recordCompaction({ sessionId: session.id, fromSeq: 1, toSeq: 2, summary: "old" });
        await store.recordCompaction({ sessionId: session.id, fromSeq: 3, toSeq: 3, summary: "new" });
        assert.equal(await store.dropSummariesCovering(run.id), 1);
        assert.equal(await store.dropSummariesCovering(run.id), 0);
        assert.deepEqual(
          (await store.listCompactions(session.id)).map((c) => c.runIds),
          [[earlier.id]],
        );
      }),
    );

    test(
      "a prompt block replaces the run's user message with a notice, idempotently",
      withStore(async ({ store }) => {
        const { session, run } = await sessionWithHistory(store);
        const prompt = await store.appendMessage({
          sessionId: session.id,
          runId: run.id,
          role: "user",
          parts: [text("my password is hunter2")],
        });
        const input = { notice: "Your message was blocked.", blockedBy: "guard", hook: "before_agent_run" };
        const result = await store.blockPrompt(run.id, input);
        assert.equal(result.replacement.role, "user");
        assert.equal(result.replacement.seq, prompt.seq);
        assert.equal((await store.blockPrompt(run.id, input)).changed, false);
        assert.deepEqual((await store.runMessages(run.id)).map(messageText), ["Your message was blocked."]);
        assert.equal((await store.getRun(run.id))?.status, "blocked");
      }),
    );

    test(
      "a block of a run that stored nothing yet appends the notice at the end",
      withStore(async ({ store }) => {
        const { session, run } = await sessionWithHistory(store);
        const result = await store.blockPrompt(run.id, {
          notice: "blocked",
          blockedBy: "guard",
          hook: "before_agent_run",
        });
        assert.equal(result.removedMessages, 0);
        assert.equal(result.replacement.seq, 3);
        assert.equal((await store.sessionMessages(session.id)).length, 3);
        await rejectsWith(store.blockRun("missing-run", NOTICE), "not_found");
        await rejectsWith(store.blockRun(run.id, { ...NOTICE, blockedBy: "has spaces in it" }), "invalid");
      }),
    );
  });

  describe(`${label}: injections`, () => {
    test(
      "injections peeked by a blocked run stay queued for the next run, which consumes them",
      withStore(async ({ store }) => {
        const { session, run } = await sessionWithHistory(store);
        await store.queueInjection({ sessionId: session.id, text: "first ctx", placement: "prepend" });
        await store.queueInjection({ sessionId: session.id, text: "second ctx", placement: "system" });
        const peeked = await store.peekInjections(session.id);
        assert.deepEqual(
          peeked.map((i) => i.text),
          ["first ctx", "second ctx"],
        );
        await store.blockPrompt(run.id, { notice: "blocked", blockedBy: "guard", hook: "before_agent_run" });
        const next = await store.startRun({ sessionId: session.id });
        const again = await store.peekInjections(session.id);
        assert.deepEqual(again, peeked);
        assert.equal(
          await store.commitInjections(
            next.id,
            again.map((i) => i.id),
          ),
          2,
        );
        assert.deepEqual(await store.peekInjections(session.id), []);
        assert.equal(
          await store.commitInjections(
            next.id,
            again.map((i) => i.id),
          ),
          0,
        );
      }),
    );

    test(
      "an injection's idempotency key queues it once, even after it was consumed",
      withStore(async ({ store }) => {
        const { session, run } = await sessionWithHistory(store);
        const input = {
          sessionId: session.id,
          text: "ctx",
          placement: "append" as const,
          idempotencyKey: "SessionStart:startup",
        };
        const first = await store.queueInjection(input);
        assert.equal((await store.queueInjection(input)).id, first.id);
        await store.commitInjections(run.id, [first.id]);
        assert.equal((await store.queueInjection(input)).id, first.id);
        assert.deepEqual(await store.peekInjections(session.id), []);
      }),
    );

    test(
      "expired injections are not peeked and expiring removes them",
      withStore(async ({ store }) => {
        const { session } = await sessionWithHistory(store);
        const now = new Date("2030-01-01T00:00:00.000Z");
        await store.queueInjection({
          sessionId: session.id,
          text: "old",
          placement: "prepend",
          expiresAt: new Date(now.getTime() - 1000),
        });
        await store.queueInjection({
          sessionId: session.id,
          text: "fresh",
          placement: "prepend",
          expiresAt: "2030-01-02T00:00:00Z",
        });
        assert.deepEqual(
          (await store.peekInjections(session.id, { now })).map((i) => i.text),
          ["fresh"],
        );
        assert.equal(await store.expireInjections({ now, sessionId: session.id }), 1);
        assert.equal(await store.expireInjections({ now, sessionId: session.id }), 0);
        assert.equal((await store.peekInjections(session.id, { now: new Date("2000-01-01T00:00:00Z") })).length, 1);
      }),
    );
  });

  describe(`${label}: audit`, () => {
    test(
      "audit records hold identifiers, an outcome and a category slug, and refuse a reason or free text",
      withStore(async ({ store }) => {
        const { session, run } = await sessionWithHistory(store);
        const record = await store.writeAudit({
          hook: "before_response_emit",
          pluginId: "@acme/dlp",
          outcome: "block",
          category: "pii.email",
          sessionId: session.id,
          runId: run.id,
        });
        assert.deepEqual(Object.keys(record).sort(), [
          "at",
          "category",
          "hook",
          "id",
          "outcome",
          "pluginId",
          "runId",
          "sessionId",
        ]);
        const smuggled = { hook: "x", pluginId: "p", outcome: "block", reason: "user said secret" };
        await rejectsWith(store.writeAudit(smuggled as never), "invalid");
        await rejectsWith(
          store.writeAudit({ hook: "x", pluginId: "p", outcome: "block", category: "the user said a secret" }),
          "invalid",
        );
        await rejectsWith(store.writeAudit({ hook: "x", pluginId: "p", outcome: "because" as never }), "invalid");
        await store.writeAudit({ hook: "llm_input", pluginId: "p", outcome: "pass", sessionId: session.id });
        assert.deepEqual(
          (await store.listAudit({ runId: run.id })).map((r) => r.id),
          [record.id],
        );
        const all = await store.listAudit({ sessionId: session.id });
        assert.deepEqual(
          all.map((r) => r.hook),
          ["before_response_emit", "llm_input"],
        );
        assert.deepEqual(
          (await store.listAudit({ sessionId: session.id, limit: 1 })).map((r) => r.hook),
          ["llm_input"],
        );
      }),
    );
  });

  describe(`${label}: run lock`, () => {
    test(
      "run locks on one session are granted one at a time, first come first served",
      withStore(async ({ store }) => {
        const session = await store.createSession();
        const order: string[] = [];
        const first = await store.acquireRunLock(session.id);
        const waiters = ["b", "c", "d"].map((name) =>
          store.acquireRunLock(session.id).then(async (lock) => {
            order.push(`${name}+`);
            await new Promise((resolve) => setImmediate(resolve));
            order.push(`${name}-`);
            await lock.release();
          }),
        );
        const other = await store.acquireRunLock((await store.createSession()).id);
        await other.release();
        order.push("a-");
        await first.release();
        await first.release();
        await Promise.all(waiters);
        assert.deepEqual(order, ["a-", "b+", "b-", "c+", "c-", "d+", "d-"]);
      }),
    );

    test(
      "a waiter that aborts leaves the queue and the next one still gets the lock",
      withStore(async ({ store }) => {
        const session = await store.createSession();
        const holder = await store.acquireRunLock(session.id);
        const controller = new AbortController();
        const aborted = store.acquireRunLock(session.id, { signal: controller.signal });
        const next = store.acquireRunLock(session.id);
        controller.abort();
        await assert.rejects(aborted, { name: "AbortError" });
        await holder.release();
        await (await next).release();
      }),
    );
  });

  describe(`${label}: never persists`, () => {
    test(
      "after a block, a rewrite and a prompt block, no copy of the blocked text is left at rest or in the transcript",
      withStore(async (h) => {
        const { store } = h;
        const canary = `CANARY-${uniqueId("c")}`;
        const { session, run } = await sessionWithHistory(store);
        await store.appendMessage({ sessionId: session.id, runId: run.id, role: "user", parts: [text("go")] });
        await store.appendMessage({
          sessionId: session.id,
          runId: run.id,
          role: "assistant",
          parts: [reasoning(`thinking ${canary}`), text(`calling ${canary}`), toolCall("c1", { arg: canary })],
        });
        await store.appendMessage({
          sessionId: session.id,
          runId: run.id,
          role: "tool",
          parts: [toolResult("c1", `${canary} `.repeat(2000))],
        });
        await store.recordCompaction({ sessionId: session.id, fromSeq: 1, toSeq: 5, summary: `summary ${canary}` });
        await store.appendMessage({
          sessionId: session.id,
          runId: run.id,
          role: "assistant",
          parts: [text(`final ${canary}`)],
        });
        const transcript = await store.materializeTranscript(session.id);
        assert.ok(readFileSync(transcript, "utf8").includes(canary));
        await store.blockRun(run.id, NOTICE);

        const rewritten = await store.startRun({ sessionId: session.id });
        await store.appendMessage({
          sessionId: session.id,
          runId: rewritten.id,
          role: "assistant",
          parts: [text(`second ${canary}`), text(" more")],
        });
        await store.rewriteRun(rewritten.id, ["second [redacted]"]);

        const prompt = await store.startRun({ sessionId: session.id });
        await store.appendMessage({
          sessionId: session.id,
          runId: prompt.id,
          role: "user",
          parts: [text(`prompt ${canary}`)],
        });
        await store.blockPrompt(prompt.id, { notice: "blocked", blockedBy: "guard", hook: "before_agent_run" });

        const lines = readFileSync(transcript, "utf8").trimEnd().split("\n");
        assert.ok(lines.every((l) => !l.includes(canary)));
        assert.equal(lines.length, (await store.sessionMessages(session.id)).length);
        assert.deepEqual(filesContaining(h.transcriptDir, canary), []);
        if (h.scanOpen) assert.deepEqual(await h.scanOpen(canary), []);
        if (h.closeAndScan) assert.deepEqual(await h.closeAndScan(canary), []);
      }),
    );

    test(
      "a transcript is Claude Code JSONL in a private folder, and goes with its session",
      withStore(async ({ store, transcriptDir }) => {
        const { session, run } = await sessionWithHistory(store);
        await store.appendMessage({
          sessionId: session.id,
          runId: run.id,
          role: "assistant",
          parts: [reasoning("hmm"), text("calling"), toolCall("c1", { command: "ls" })],
        });
        await store.appendMessage({
          sessionId: session.id,
          runId: run.id,
          role: "tool",
          parts: [toolResult("c1", "a b")],
        });
        const path = await store.materializeTranscript(session.id);
        assert.equal(statSync(transcriptDir).mode & 0o777, 0o700);
        assert.equal(statSync(path).mode & 0o777, 0o600);
        const entries = readFileSync(path, "utf8")
          .trimEnd()
          .split("\n")
          .map((l) => JSON.parse(l) as Record<string, unknown>);
        assert.deepEqual(
          entries.map((e) => e.type),
          ["user", "assistant", "assistant", "user"],
        );
        assert.equal(entries[0]?.parentUuid, null);
        assert.equal(entries[1]?.parentUuid, entries[0]?.uuid);
        assert.equal(entries[0]?.sessionId, session.id);
        assert.deepEqual(entries[0]?.message, { role: "user", content: "hello" });
        assert.deepEqual((entries[2]?.message as { content: unknown } | undefined)?.content, [
          { type: "thinking", thinking: "hmm", signature: "" },
          { type: "text", text: "calling" },
          { type: "tool_use", id: "c1", name: "Bash", input: { command: "ls" } },
        ]);
        assert.deepEqual((entries[3]?.message as { content: unknown } | undefined)?.content, [
          { type: "tool_result", tool_use_id: "c1", content: "a b" },
        ]);
        await store.deleteSession(session.id);
        assert.throws(() => statSync(path), { code: "ENOENT" });
      }),
    );
  });
}
