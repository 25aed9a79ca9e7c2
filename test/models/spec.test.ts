import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { describe, test } from "node:test";
import { ModelSpecError, parseModelSpec, resolveModel } from "../../src/models/index.js";

describe("model specs", () => {
  test("parses each provider form", () => {
    assert.deepEqual(parseModelSpec("openai:gpt-4.1-mini"), { provider: "openai", modelId: "gpt-4.1-mini" });
    assert.deepEqual(parseModelSpec("anthropic:claude-sonnet-4-5"), {
      provider: "anthropic",
      modelId: "claude-sonnet-4-5",
    });
    assert.deepEqual(parseModelSpec("openai-compatible:http://localhost:11434/v1#qwen3:8b"), {
      provider: "openai-compatible",
      baseURL: "http://localhost:11434/v1",
      modelId: "qwen3:8b",
    });
    assert.deepEqual(parseModelSpec("scripted:echo"), { provider: "scripted", source: "echo" });
    assert.deepEqual(parseModelSpec("scripted:./demo/run.json"), {
      provider: "scripted",
      source: "file",
      file: "./demo/run.json",
    });
  });

  test("an unknown provider names the spec and lists the accepted forms", () => {
    assert.throws(
      () => parseModelSpec("foo:bar"),
      (error: unknown) =>
        error instanceof ModelSpecError &&
        error.spec === "foo:bar" &&
        error.message ===
          "unknown provider 'foo' in model spec 'foo:bar'; expected openai:<model>, anthropic:<model>, openai-compatible:<baseURL>#<model> or scripted:<file>|echo",
    );
  });

  test("a spec without a provider or a model is rejected with the expected forms", () => {
    assert.throws(() => parseModelSpec("gpt-4o"), /model spec 'gpt-4o' has no provider; expected openai:<model>/);
    assert.throws(() => parseModelSpec("openai:"), /model spec 'openai:' is missing the model name/);
    assert.throws(() => parseModelSpec("scripted:"), /model spec 'scripted:' is missing the script file/);
  });

  test("openai-compatible needs an http(s) base URL and a model after '#'", () => {
    assert.throws(
      () => parseModelSpec("openai-compatible:http://localhost:1234/v1"),
      /must look like openai-compatible:<baseURL>#<model>/,
    );
    assert.throws(() => parseModelSpec("openai-compatible:http://localhost:1234/v1#"), /must look like/);
    assert.throws(() => parseModelSpec("openai-compatible:localhost:1234#m"), /must be http:\/\/ or https:\/\//);
    assert.throws(() => parseModelSpec("openai-compatible:not a url#m"), /base URL 'not a url' is not a valid URL/);
  });

  test("resolveModel rejects a bad spec before loading any provider", async () => {
    await assert.rejects(() => resolveModel("foo:bar"), ModelSpecError);
  });

  test("resolveModel reports the provider and model id of what it built", async () => {
    const env = { OPENAI_API_KEY: "k", ANTHROPIC_API_KEY: "k" };
    const openai = await resolveModel("openai:gpt-x", { env });
    assert.equal(openai.provider, "openai.chat");
    assert.equal(openai.modelId, "gpt-x");
    const anthropic = await resolveModel("anthropic:claude-x", { env });
    assert.equal(anthropic.provider, "anthropic.messages");
    const compatible = await resolveModel("openai-compatible:http://127.0.0.1:9/v1#m", { env });
    assert.equal(compatible.provider, "openai-compatible.chat");
    assert.equal(compatible.modelId, "m");
    const echo = await resolveModel("scripted:echo");
    assert.equal(echo.provider, "scripted");
    assert.equal(echo.modelId, "echo");
  });

  test("provider packages are imported only on demand, so the CLI loads just the provider it uses", () => {
    const dir = new URL("../../src/models/", import.meta.url);
    for (const name of readdirSync(dir)) {
      const source = readFileSync(new URL(name, dir), "utf8");
      assert.doesNotMatch(
        source,
        /^import\s(?!type\b)[^;]*from\s+"@ai-sdk\/(openai|anthropic|openai-compatible)"/m,
        `${name} imports a provider package statically`,
      );
    }
  });
});
