import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { describeError, sanitizeLogLine } from "../../src/hooks/index.js";
import { emitEvent, engineWithLog, toolEvent } from "./helpers.js";

const SECRET = "sk-live-CANARY-0c8f2e";

describe("sanitized failure logs", () => {
  test("a secret in a thrown error's message never reaches the log", async () => {
    const { engine, lines } = engineWithLog();
    engine.on("leaky", "before_tool_call", (e) => {
      throw new Error(`could not check ${JSON.stringify(e.params)} with key ${SECRET}`);
    });
    await engine.emit("before_tool_call", { ...toolEvent, params: { command: `echo ${SECRET}` } });
    assert.equal(lines.length, 1);
    assert.doesNotMatch(lines.join("\n"), /CANARY/);
    assert.doesNotMatch(lines.join("\n"), /echo/);
  });

  test("event content and a gate's reason never reach the log, whatever the failure", async () => {
    const { engine, lines } = engineWithLog();
    engine.on("a", "before_response_emit", (e) => ({ content: e.content, extra: SECRET }) as never);
    engine.on("b", "before_agent_run", () => ({ outcome: "block", reason: SECRET, bogus: SECRET }) as never);
    engine.on("c", "message_received", () => Promise.reject(SECRET));
    await engine.emit("before_response_emit", emitEvent(`the answer is ${SECRET}`));
    await engine.emit("before_agent_run", { prompt: SECRET, modelPrompt: SECRET, messages: [], systemPrompt: "" });
    await engine.emit("message_received", { content: SECRET });
    assert.equal(lines.length, 3);
    assert.doesNotMatch(lines.join("\n"), /CANARY/);
  });

  test("a log line is one line, at most 500 characters, without control characters", () => {
    const line = sanitizeLogLine(`a\nb\r\u0007c\u2028d ${"x".repeat(1000)}`);
    assert.equal(line.includes("\n"), false);
    assert.ok([...line].every((c) => c >= " " && c !== "\u007f" && c !== "\u2028"));
    assert.ok(line.length <= 500);
    assert.ok(line.startsWith("a b c d "));
  });

  test("describeError gives the class and the first frame, not the message", () => {
    class PolicyError extends Error {
      override name = "PolicyError";
    }
    const described = describeError(new PolicyError(SECRET));
    assert.match(described, /^PolicyError at .*sanitize\.test\.ts:\d+:\d+$/);
    assert.equal(describeError("a thrown string"), "non-Error value (string)");
    const weird = new Error("m");
    weird.name = `${SECRET}\n`;
    assert.doesNotMatch(describeError(weird), /CANARY/);
  });

  test("an error name that is not shaped like an error class (a secret set as name) is logged as Error", async () => {
    for (const name of ["sk_live_4eC39HqLyjWDarjtT1zdp7dc", "ghp_Canary123", "AKIACANARY7EXAMPLE", "Bearer"]) {
      const error = new Error("m");
      error.name = name;
      assert.match(describeError(error), /^Error( at |$)/, name);
    }
    for (const name of ["TypeError", "AbortError", "DOMException", "Error", "PolicyViolationError"]) {
      const error = new Error("m");
      error.name = name;
      assert.match(describeError(error), new RegExp(`^${name}( at |$)`));
    }
    const { engine, lines } = engineWithLog();
    engine.on("leaky", "before_tool_call", () => {
      const error = new Error("denied");
      error.name = "sk_live_CANARY_4eC39HqLyjWDarjtT1zdp7dc";
      throw error;
    });
    await engine.emit("before_tool_call", toolEvent);
    assert.equal(lines.length, 1);
    assert.doesNotMatch(lines[0] as string, /CANARY|sk_live/);
    assert.match(lines[0] as string, /handler leaky threw \(Error at /);
  });
});
