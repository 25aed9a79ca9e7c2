import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { childRunContext, currentRunContext, type HookContext, runWithContext } from "../../src/hooks/index.js";
import { deferred, engineWithLog, runContext, toolEvent } from "./helpers.js";

describe("run context", () => {
  test("it survives awaits, timers and spawned promises", async () => {
    const seen = await runWithContext(runContext({ runId: "r-timers" }), async () => {
      const ids: (string | undefined)[] = [];
      await Promise.resolve();
      ids.push(currentRunContext()?.runId);
      await new Promise<void>((resolve) => setTimeout(resolve, 0));
      ids.push(currentRunContext()?.runId);
      await new Promise<void>((resolve) => setImmediate(resolve));
      const spawned = (async () => currentRunContext()?.runId)();
      ids.push(await spawned);
      return ids;
    });
    assert.deepEqual(seen, ["r-timers", "r-timers", "r-timers"]);
    assert.equal(currentRunContext(), undefined);
  });

  test("every handler's ctx comes from the run that emitted, even when two runs interleave", async () => {
    const { engine } = engineWithLog();
    const gateA = deferred();
    const seen: string[] = [];
    engine.on("p", "before_tool_call", async (_e, ctx) => {
      if (ctx.runId === "run-a") await gateA.promise;
      seen.push(`${ctx.runId}/${ctx.sessionId}/${ctx.trigger}/${ctx.jobId ?? "-"}`);
    });
    const a = runWithContext(runContext({ runId: "run-a", sessionId: "sa", trigger: "cron", jobId: "nightly" }), () =>
      engine.emit("before_tool_call", toolEvent),
    );
    const b = runWithContext(runContext({ runId: "run-b", sessionId: "sb" }), () =>
      engine.emit("before_tool_call", toolEvent),
    );
    await b;
    gateA.resolve();
    await a;
    assert.deepEqual(seen, ["run-b/sb/user/-", "run-a/sa/cron/nightly"]);
  });

  test("a child context is isolated: depth + 1, parent ids recorded, same trace, and the parent's context unchanged", async () => {
    const parent = runContext({ runId: "parent-run", sessionId: "parent-session", jobId: "j" });
    const { engine } = engineWithLog();
    const contexts: HookContext[] = [];
    engine.on("p", "subagent_end", (_e, ctx) => void contexts.push(ctx));
    await runWithContext(parent, async () => {
      const child = childRunContext(parent, {
        sessionId: "child-session",
        sessionKey: "child",
        runId: "child-run",
        agentId: "explorer",
      });
      await runWithContext(child, async () => {
        assert.throws(() => {
          (currentRunContext() as { depth: number }).depth = 0;
        }, TypeError);
        await engine.emit("subagent_end", { agentType: "explorer", outcome: "completed", childSessionId: "child" });
      });
      await engine.emit("subagent_end", { agentType: "explorer", outcome: "completed", childSessionId: "child" });
    });
    const [inChild, inParent] = contexts;
    assert.equal(inChild?.depth, 1);
    assert.equal(inChild?.runId, "child-run");
    assert.equal(inChild?.parentRunId, "parent-run");
    assert.equal(inChild?.parentSessionId, "parent-session");
    assert.equal(inChild?.trigger, "subagent");
    assert.equal(inChild?.jobId, "j");
    assert.equal(inChild?.traceparent.split("-")[1], parent.traceparent.split("-")[1]);
    assert.notEqual(inChild?.traceparent, parent.traceparent);
    assert.equal(inParent?.depth, 0);
    assert.equal(inParent?.runId, "parent-run");
    assert.equal(inParent?.parentRunId, undefined);
  });

  test("a run's cancellation aborts the signal of its handlers", async () => {
    const { engine } = engineWithLog();
    const controller = new AbortController();
    const started = deferred();
    engine.on("p", "before_prompt_build", (_e, ctx) => {
      started.resolve();
      return new Promise((resolve) => ctx.signal.addEventListener("abort", () => resolve(undefined)));
    });
    const pending = runWithContext(runContext({ signal: controller.signal }), () =>
      engine.emit("before_prompt_build", { prompt: "", messages: [] }),
    );
    await started.promise;
    controller.abort();
    assert.deepEqual(await pending, { result: {} });
  });

  test("a timeout resumes the dispatch in its own run context, whichever dispatch armed the shared timer", {
    timeout: 10_000,
  }, async () => {
    const { engine } = engineWithLog();
    const seen: string[] = [];
    // Handlers with the same timeout share one timer: the first dispatch (run-b) arms it.
    engine.on(
      "slow",
      "before_prompt_build",
      (_e, ctx) => {
        ctx.signal.addEventListener("abort", () => seen.push(`abort ${ctx.runId} in ${currentRunContext()?.runId}`));
        return new Promise(() => {});
      },
      { timeoutMs: 10 },
    );
    engine.on("next", "before_prompt_build", (_e, ctx) => {
      seen.push(`next ${ctx.runId} in ${currentRunContext()?.runId}`);
    });
    const event = { prompt: "", messages: [] };
    const b = runWithContext(runContext({ runId: "run-b" }), () => engine.emit("before_prompt_build", event));
    const a = runWithContext(runContext({ runId: "run-a" }), () => engine.emit("before_prompt_build", event));
    await Promise.all([a, b]);
    assert.deepEqual(seen.sort(), [
      "abort run-a in run-a",
      "abort run-b in run-b",
      "next run-a in run-a",
      "next run-b in run-b",
    ]);
  });

  test("outside any run, ctx carries empty ids and depth 0", async () => {
    const { engine } = engineWithLog();
    let ctx: HookContext | undefined;
    engine.on("p", "notification", (_e, c) => {
      ctx = c;
    });
    await engine.emit("notification", { kind: "test", message: "m" });
    assert.equal(ctx?.runId, "");
    assert.equal(ctx?.depth, 0);
    assert.equal(ctx?.pluginId, "p");
    assert.equal(ctx?.hook, "notification");
  });
});
