import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { LanguageModelV3Prompt } from "@ai-sdk/provider";
import { createGatehouse } from "../src/assembly/gatehouse.js";
import { isGatehouseSecret, isProviderCredential } from "../src/core/env-policy.js";
import { openStore } from "../src/store/index.js";
import { captureLogger } from "./capture.js";
import type { Case } from "./r6.js";
import { echoTool, harnessModel } from "./world.js";

/**
 * R6 for the model a `prompt` or `agent` command hook asks: the provider is a process that did
 * not ask for the user's keys. A run's tool call carries every provider key and Gatehouse secret
 * of the environment in its input (the hook input), and a file the hook's agent reads holds them
 * too; no request either hook makes to its model may contain one. Values are key-length: masking
 * by value leaves strings under 8 characters alone, as they are too common to be secrets.
 */
export async function hookModelCase(dir: string): Promise<Case> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: dir,
    OPENAI_API_KEY: "cred-openai-5f2c81d09a",
    ANTHROPIC_API_KEY: "cred-anthropic-77e1b0",
    AWS_SECRET_ACCESS_KEY: "cred-aws-c0ffee1234",
    GEMINI_API_KEY: "cred-gemini-9a8b7c6d",
    HF_TOKEN: "cred-hf-0011223344",
    GATEHOUSE_DATABASE_URL: "postgres://u:cred-gatehouse-db-8899@db/x",
    APP_SETTING: "kept",
  };
  const secrets = Object.entries(env).filter(([k]) => isProviderCredential(k) || isGatehouseSecret(k));
  const secretFile = join(dir, "deploy-notes.txt");
  writeFileSync(secretFile, secrets.map(([k, v]) => `${k}=${v}`).join("\n"));
  const carried = secrets.map(([, v]) => v).join(" ");

  const hookCalls: string[] = [];
  const onCall = (prompt: LanguageModelV3Prompt) => {
    const text = JSON.stringify(prompt);
    if (text.includes("Judge this call") || text.includes("Inspect the project")) hookCalls.push(text);
  };
  const model = harnessModel(
    {
      runs: [
        { match: "^Judge this call", turns: [{ text: '{"ok": true}' }] },
        {
          match: "^Inspect the project",
          turns: [{ toolCalls: [{ name: "Read", input: { file_path: secretFile } }] }, { text: '{"ok": true}' }],
        },
        {
          turns: [{ toolCalls: [{ name: "Echo", input: { text: `deploy with ${carried}` } }] }, { text: "done" }],
        },
      ],
    },
    onCall,
  );
  const settings = {
    hooks: {
      PreToolUse: [
        {
          matcher: "Echo",
          hooks: [
            { type: "prompt", prompt: "Judge this call: $ARGUMENTS" },
            { type: "agent", prompt: "Inspect the project for this call: $ARGUMENTS" },
          ],
        },
      ],
    },
  };
  const gatehouse = createGatehouse({
    model,
    store: await openStore({ kind: "memory" }),
    tools: [echoTool],
    commandHooks: { load: { homeDir: dir, cliSettings: JSON.stringify(settings) } },
    logger: captureLogger().logger,
    config: { cwd: dir },
    env,
  });
  try {
    const result = await gatehouse.run({ prompt: "deploy" });
    const seen = hookCalls.join("\n");
    const leaked = secrets.filter(([, v]) => seen.includes(v)).map(([k]) => k);
    // The agent's second call carries what Read returned: the file was read, its keys masked.
    const agentRead = hookCalls.some((c) => c.includes("tool-result") && c.includes("deploy-notes"));
    const ok = result.outcome === "completed" && hookCalls.length >= 3 && agentRead && leaked.length === 0;
    return {
      name: "prompt and agent hooks: their model reads no provider key or Gatehouse secret",
      ok,
      leaked,
      detail: `run ${result.outcome}; ${hookCalls.length} hook model calls (agent read the file: ${agentRead}); leaked: ${leaked.join(", ") || "none"}`,
    };
  } finally {
    await gatehouse.close();
  }
}
