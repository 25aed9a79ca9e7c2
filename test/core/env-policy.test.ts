// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these tests spell the literal ${VAR} syntax of configs
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { hookEnv } from "../../src/command-hooks/env.js";
import { runCommandHandler } from "../../src/command-hooks/executor.js";
import { expandHeaders } from "../../src/command-hooks/headers.js";
import { createEnvPolicy, DEFAULT_ENV_POLICY, ENV_CONSUMERS, isProviderCredential } from "../../src/core/env-policy.js";
import { execHook, inputFor, tempDir } from "../command-hooks/helpers.js";
import { MATRIX, MATRIX_CONFIG, MCP_ENV } from "./env-matrix.js";

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
const ORDINARY = [
  "PATH",
  "HOME",
  "LANG",
  "GITHUB_TOKEN",
  "OPENAI_BASE_URL",
  "ANTHROPIC_MODEL",
  "KEYBOARD",
  "TOKENIZER",
];

const policy = createEnvPolicy({
  deny: MATRIX_CONFIG.environment.deny,
  passEnv: { bash: MATRIX_CONFIG.tools.bash.passEnv, commandHooks: MATRIX_CONFIG.commandHooks.passEnv },
});

describe("environment policy", () => {
  test("model provider credentials are recognised; ordinary variables are not", () => {
    for (const name of CREDENTIALS) assert.equal(isProviderCredential(name), true, name);
    for (const name of ORDINARY) assert.equal(isProviderCredential(name), false, name);
  });

  test("the matrix: each consumer sees exactly the variables of its column", () => {
    const base = Object.fromEntries(MATRIX.map((r) => [r.variable, `v-${r.variable}`]));
    for (const consumer of ENV_CONSUMERS) {
      // An MCP server's allow list is its entry's env, added on top of what the policy lets through.
      const extra = consumer === "mcp" ? Object.keys(MCP_ENV) : [];
      const seen = new Set([...Object.keys(policy.environment(base, consumer)), ...extra]);
      for (const r of MATRIX) {
        assert.equal(seen.has(r.variable), r.sees[consumer], `${consumer} × ${r.variable} (${r.class})`);
      }
    }
  });

  test("with no configuration: provider keys and Gatehouse secrets are removed, the rest kept", () => {
    const env = { OPENAI_API_KEY: "k", GATEHOUSE_DATABASE_URL: "postgres://u:p@h/d", APP: "a", STRIPE_KEY: "s" };
    assert.deepEqual(DEFAULT_ENV_POLICY.environment(env, "bash"), { APP: "a", STRIPE_KEY: "s" });
    assert.deepEqual(DEFAULT_ENV_POLICY.environment(env, "commandHooks"), { APP: "a", STRIPE_KEY: "s" });
    assert.deepEqual(DEFAULT_ENV_POLICY.environment({ ...env, PATH: "/bin" }, "mcp"), { PATH: "/bin" });
  });

  test("extend adds to the lists; a pass list reaches only its consumer", () => {
    const more = DEFAULT_ENV_POLICY.extend({ deny: ["APP"], passEnv: { commandHooks: ["OPENAI_API_KEY"] } });
    assert.equal(more.allows("APP", "bash"), false);
    assert.equal(more.allows("OPENAI_API_KEY", "commandHooks"), true);
    assert.equal(more.allows("OPENAI_API_KEY", "httpHeaders"), true);
    assert.equal(more.allows("OPENAI_API_KEY", "bash"), false);
    assert.equal(more.extend({ passEnv: { bash: ["APP"] } }).allows("OPENAI_API_KEY", "commandHooks"), true);
  });

  test("http headers expand a variable only when allowedEnvVars names it and the policy allows it", () => {
    const def = {
      type: "http" as const,
      url: "http://127.0.0.1/",
      headers: { A: "Bearer $OPENAI_API_KEY", B: "${MISTRAL_API_KEY}", C: "$APP_SETTING", D: "$NOT_LISTED" },
      allowedEnvVars: ["OPENAI_API_KEY", "MISTRAL_API_KEY", "APP_SETTING"],
    };
    const env = { OPENAI_API_KEY: "o", MISTRAL_API_KEY: "m", APP_SETTING: "a", NOT_LISTED: "n" };
    assert.deepEqual(expandHeaders(def, env, policy), { A: "Bearer ", B: "m", C: "a", D: "" });
  });

  test("hookEnv adds the project and session variables, overriding inherited ones", () => {
    const env = hookEnv({
      projectDir: "/p",
      sessionId: "s-1",
      env: { CLAUDE_PROJECT_DIR: "/elsewhere", PATH: "/bin", OPENAI_API_KEY: "k" },
    });
    assert.deepEqual(env, {
      PATH: "/bin",
      CLAUDE_PROJECT_DIR: "/p",
      GATEHOUSE_PROJECT_DIR: "/p",
      CLAUDE_CODE_SESSION_ID: "s-1",
    });
  });

  test("a real hook process sees what the policy lets through, and what commandHooks.passEnv adds", async () => {
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
      envPolicy: createEnvPolicy({ passEnv: { commandHooks: ["OPENAI_API_KEY"] } }),
    });
    seen = JSON.parse(readFileSync(out, "utf8")).env;
    assert.equal(seen.OPENAI_API_KEY, "sk-secret");
    assert.equal(seen.AWS_SECRET_ACCESS_KEY, undefined);
  });
});
