import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { hookEnv, isProviderCredential, scrubEnv } from "../../src/command-hooks/env.js";
import { runCommandHandler } from "../../src/command-hooks/executor.js";
import { execHook, inputFor, tempDir } from "./helpers.js";

const CREDENTIALS = [
  "OPENAI_API_KEY",
  "ANTHROPIC_API_KEY",
  "ANTHROPIC_AUTH_TOKEN",
  "AWS_ACCESS_KEY_ID",
  "AWS_SECRET_ACCESS_KEY",
  "AWS_SESSION_TOKEN",
  "AWS_BEARER_TOKEN_BEDROCK",
  "GOOGLE_API_KEY",
  "GOOGLE_APPLICATION_CREDENTIALS",
  "GEMINI_API_KEY",
  "AZURE_OPENAI_API_KEY",
  "AZURE_CLIENT_SECRET",
  "MISTRAL_API_KEY",
  "GROQ_API_KEY",
  "OPENROUTER_API_KEY",
  "HF_TOKEN",
  "CLAUDE_CODE_OAUTH_TOKEN",
  "SOME_NEW_PROVIDER_API_KEY",
  "openai_api_key",
];
const KEPT = ["PATH", "HOME", "LANG", "GITHUB_TOKEN", "OPENAI_BASE_URL", "ANTHROPIC_MODEL", "KEYBOARD", "TOKENIZER"];

describe("hook environment", () => {
  test("model provider credentials are recognised; ordinary variables are not", () => {
    for (const name of CREDENTIALS) assert.equal(isProviderCredential(name), true, name);
    for (const name of KEPT) assert.equal(isProviderCredential(name), false, name);
  });

  test("scrubEnv removes credentials unless passEnv lists them", () => {
    const env = Object.fromEntries([...CREDENTIALS, ...KEPT].map((k) => [k, `value-of-${k}`]));
    const scrubbed = scrubEnv(env);
    assert.deepEqual(Object.keys(scrubbed).sort(), [...KEPT].sort());
    const passed = scrubEnv(env, ["OPENAI_API_KEY"]);
    assert.equal(passed.OPENAI_API_KEY, "value-of-OPENAI_API_KEY");
    assert.equal(passed.ANTHROPIC_API_KEY, undefined);
  });

  test("hookEnv adds the project and session variables, overriding inherited ones", () => {
    const env = hookEnv({
      projectDir: "/p",
      sessionId: "s-1",
      env: { CLAUDE_PROJECT_DIR: "/elsewhere", PATH: "/bin" },
    });
    assert.deepEqual(env, {
      PATH: "/bin",
      CLAUDE_PROJECT_DIR: "/p",
      GATEHOUSE_PROJECT_DIR: "/p",
      CLAUDE_CODE_SESSION_ID: "s-1",
    });
  });

  test("a real hook process sees no credentials, except those passed through", async () => {
    const dir = tempDir();
    const out = join(dir, "seen.json");
    const base = { PATH: process.env.PATH, OPENAI_API_KEY: "sk-secret", AWS_SECRET_ACCESS_KEY: "aws", KEEP_ME: "1" };
    await runCommandHandler(execHook("record.py", [out]), inputFor("Stop"), {
      projectDir: dir,
      sessionId: "s",
      env: base,
    });
    let seen = JSON.parse(readFileSync(out, "utf8")).env;
    assert.equal(seen.OPENAI_API_KEY, undefined);
    assert.equal(seen.AWS_SECRET_ACCESS_KEY, undefined);
    assert.equal(seen.KEEP_ME, "1");
    await runCommandHandler(execHook("record.py", [out]), inputFor("Stop"), {
      projectDir: dir,
      sessionId: "s",
      env: base,
      passEnv: ["OPENAI_API_KEY"],
    });
    seen = JSON.parse(readFileSync(out, "utf8")).env;
    assert.equal(seen.OPENAI_API_KEY, "sk-secret");
    assert.equal(seen.AWS_SECRET_ACCESS_KEY, undefined);
  });
});
