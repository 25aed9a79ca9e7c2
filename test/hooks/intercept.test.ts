import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Interception } from "../../src/hooks/index.js";
import { deferred, engineWithLog, inRun, toolEvent } from "./helpers.js";

describe("engine interceptors (call / result / error / done)", () => {
  test("call fires before any handler, result with the dispatch's outcome, then done, each with the run's context", async () => {
    const { engine } = engineWithLog();
    const order: string[] = [];
    engine.on("guard", "before_tool_call", () => {
      order.push("handler");
      return { block: true, blockReason: "no" };
    });
    let seen: Interception | undefined;
    engine.intercept({
      name: "probe",
      call: (d) => {
        seen = d;
        order.push(`call ${d.hook} ${d.run.runId} handlers=${d.handlers}`);
      },
      result: (d, out) => {
        assert.equal(d, seen, "one interception object per dispatch");
        order.push(`result block=${(out as { result: { block?: boolean } }).result.block}`);
      },
      done: () => void order.push("done"),
    });
    const out = await inRun(() => engine.emit("before_tool_call", toolEvent), { runId: "run-7" });
    assert.equal(out.result.block, true);
    assert.deepEqual(order, ["call before_tool_call run-7 handlers=1", "handler", "result block=true", "done"]);
    assert.ok(Object.isFrozen(seen?.event));
  });

  test("a hook with no handler is invisible to interceptors unless one asks for it; asking makes hasHooks true", async () => {
    const { engine } = engineWithLog();
    const calls: string[] = [];
    const log = (line: string) => calls.push(line);
    engine.intercept({ name: "quiet", call: (d) => log(`quiet ${d.hook}`) });
    assert.equal(engine.hasHooks("agent_end"), false);
    await engine.emit("message_sent", { to: "user", content: "x", success: true });
    assert.deepEqual(calls, []);
    const remove = engine.intercept({
      name: "runs",
      hooks: ["agent_end"],
      call: (d) => log(`runs ${d.hook}`),
    });
    assert.equal(engine.hasHooks("agent_end"), true);
    await engine.emit("agent_end", { runId: "r", outcome: "completed", success: true, durationMs: 1, messages: [] });
    assert.deepEqual(calls, ["quiet agent_end", "runs agent_end"]);
    remove();
    assert.equal(engine.hasHooks("agent_end"), false);
  });

  test("the caller resumes only after a promise returned by result settles", async () => {
    const { engine } = engineWithLog();
    engine.on("gate", "before_agent_run", () => ({ outcome: "block", reason: "r" }));
    const written = deferred();
    let recorded = false;
    engine.intercept({
      name: "slow-audit",
      result: async () => {
        await written.promise;
        recorded = true;
      },
    });
    const dispatch = engine.emit("before_agent_run", { prompt: "p", modelPrompt: "p", messages: [], systemPrompt: "" });
    let resumed = false;
    void dispatch.then(() => {
      resumed = true;
    });
    await new Promise((r) => setImmediate(r));
    assert.equal(resumed, false, "the gate's outcome waits for the interceptor");
    written.resolve();
    const out = await dispatch;
    assert.equal(out.outcome, "block");
    assert.equal(recorded, true);
  });

  test("an interceptor that throws is logged and changes nothing: the verdict stands", async () => {
    const { engine, lines } = engineWithLog();
    engine.on("gate", "before_agent_run", () => ({ outcome: "block", reason: "internal", message: "notice" }));
    engine.intercept({
      name: "broken",
      call: () => {
        throw new Error("boom");
      },
      result: async () => {
        throw new Error("late boom");
      },
    });
    const out = await engine.emit("before_agent_run", {
      prompt: "p",
      modelPrompt: "p",
      messages: [],
      systemPrompt: "",
    });
    assert.equal(out.outcome, "block");
    assert.ok(lines.some((l) => l.includes("interceptor broken call failed")));
    assert.ok(lines.some((l) => l.includes("interceptor result failed")));
    assert.ok(!lines.some((l) => l.includes("internal")), "no reason in the log");
  });

  test("sync hooks and detached observers are intercepted without making them asynchronous", () => {
    const { engine } = engineWithLog();
    engine.on("p", "before_message_write", () => ({ block: true }));
    engine.on("p", "model_call_started", () => undefined);
    const hooks: string[] = [];
    engine.intercept({ name: "probe", result: (d) => void hooks.push(d.hook) });
    const out = engine.emit("before_message_write", { message: { role: "assistant", parts: [] } as never });
    assert.equal(out.result.block, true);
    assert.equal(engine.emit("model_call_started", { provider: "p", model: "m", step: 1 }), undefined);
    assert.deepEqual(hooks, ["before_message_write", "model_call_started"]);
  });
});
