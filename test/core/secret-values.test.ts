import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { runCommandHandler } from "../../src/command-hooks/executor.js";
import { createEnvPolicy } from "../../src/core/env-policy.js";
import { createSecretMasker, envMasker, MIN_MASKED_LENGTH, withheldValues } from "../../src/core/secret-values.js";
import { execOptions, inputFor, shellHook, tempDir } from "../command-hooks/helpers.js";

const KEY = "plain-provider-key-5e1f0a9c77d2";

describe("secrets masked by value", () => {
  test("the withheld values: provider keys, Gatehouse secrets and denied names; not short values, ordinary variables or what passEnv gives Bash", () => {
    const env = {
      OPENAI_API_KEY: KEY,
      GATEHOUSE_DATABASE_URL: "postgres://u:pw-1234567@db/x",
      STRIPE_SECRET: "denied-value-123",
      AWS_SDK_LOAD_CONFIG: "1",
      HOME: "/home/someone-long",
      ANTHROPIC_API_KEY: "passed-to-bash-9876",
    };
    const policy = createEnvPolicy({ deny: ["STRIPE_*"], passEnv: { bash: ["ANTHROPIC_API_KEY"] } });
    assert.deepEqual(withheldValues([env], policy).sort(), ["denied-value-123", KEY, "postgres://u:pw-1234567@db/x"]);
    assert.equal(MIN_MASKED_LENGTH, 8);
    assert.equal(createSecretMasker(["short7!"]).size, 0, "a value under 8 characters is not masked");
  });

  test("each spelling is masked: as is, JSON-escaped, URL-encoded, base64 at every alignment (standard and URL-safe)", () => {
    const secret = 'k3y"with/odd+chars?&=';
    const m = createSecretMasker([secret]);
    assert.equal(m.mask(`a ${secret} b`), "a **** b");
    assert.equal(m.mask(JSON.stringify({ v: secret })), '{"v":"****"}');
    assert.equal(m.mask(`?q=${encodeURIComponent(secret)}`), "?q=****");
    for (const prefix of ["", "a", "ab", "abc"]) {
      const encoded = Buffer.from(`${prefix}${secret}tail`).toString("base64");
      const masked = m.mask(encoded);
      assert.ok(masked.includes("****"), `base64 after ${prefix.length} bytes`);
      const urlSafe = encoded.replace(/\+/g, "-").replace(/\//g, "_");
      assert.ok(m.mask(urlSafe).includes("****"), `URL-safe base64 after ${prefix.length} bytes`);
    }
    // Control: the same text without the secret is left as it is.
    const other = Buffer.from("nothing secret here at all").toString("base64");
    assert.equal(m.mask(other), other);
  });

  test("maskDeep masks every string and key of a structured output, and returns the same object when nothing matched", () => {
    const m = createSecretMasker([KEY]);
    const clean = { a: ["x", { b: 1 }] };
    assert.equal(m.maskDeep(clean), clean);
    assert.deepEqual(m.maskDeep({ stdout: `k=${KEY}`, list: [KEY], [KEY]: true, n: 3 }), {
      stdout: "k=****",
      list: ["****"],
      "****": true,
      n: 3,
    });
    class Output {
      text = `key ${KEY}`;
    }
    assert.deepEqual(m.maskDeep(new Output()), { text: "key ****" });
  });

  test("a command hook's output is masked before it is read: it runs unsandboxed and may print a key it was not given", async () => {
    const project = tempDir();
    const file = join(project, "found.txt");
    writeFileSync(
      file,
      JSON.stringify({ hookSpecificOutput: { hookEventName: "PostToolUse", additionalContext: `found ${KEY}` } }),
    );
    const run = (env: Record<string, string>) =>
      runCommandHandler(
        shellHook(`cat "${file}"; echo "${KEY}" >&2`, { event: "PostToolUse" }),
        inputFor("PostToolUse"),
        execOptions(project, { env: { PATH: process.env.PATH ?? "", ...env } }),
      );
    const masked = await run({ OPENAI_API_KEY: KEY });
    assert.ok(!masked.stdout.includes(KEY) && !masked.stderr.includes(KEY));
    assert.equal((masked.verdict as { additionalContext?: string }).additionalContext, "found ****");
    // Control: under a name the policy does not withhold, the same value passes.
    const plain = await run({ SOME_SETTING: KEY });
    assert.equal((plain.verdict as { additionalContext?: string }).additionalContext, `found ${KEY}`);
  });

  test("envMasker reads every environment it is given", () => {
    const m = envMasker([{ OPENAI_API_KEY: KEY }, { HF_TOKEN: "hf-token-value-42" }]);
    assert.equal(m.mask(`${KEY} hf-token-value-42`), "**** ****");
  });
});
