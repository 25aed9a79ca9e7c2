import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { LanguageModelV3Prompt } from "@ai-sdk/provider";
import { z } from "zod";
import { createGatehouse } from "../src/assembly/gatehouse.js";
import { createEnvPolicy } from "../src/core/env-policy.js";
import { definePlugin } from "../src/plugins/define.js";
import { createBashTool, createReadTool } from "../src/tools/builtin/index.js";
import type { Tool } from "../src/tools/types.js";
import { captureLogger } from "./capture.js";
import type { Case } from "./r6.js";
import { dumpThroughApi, openScenarioStore, type Sink, sinkHas, textSink } from "./sinks.js";
import { failTool, harnessModel } from "./world.js";

/**
 * R6's masked-secret sink check (docs/security.md, "Secrets masked by value"): tool outputs carry
 * the values the environment policy withholds — a Bash command that prints a file holding them
 * (plainly and in base64) and one that fails printing them, a Read of that file, a tool whose
 * structured output holds them, a failing tool — and every sink is searched for each value: the
 * SQLite files byte by byte and their rows, the session export, the run's events, the model's
 * requests, a plugin's `after_tool_call` and the command hooks' PostToolUse / PostToolUseFailure
 * payloads. A control printed beside the secrets must reach every sink, or the search proved
 * nothing. With `sabotage`, the runtime is not told the secrets (its environment lacks them): the
 * same outputs go unmasked, and the check must find them.
 */
export async function maskedSecretCase(dir: string, options: { sabotage?: boolean } = {}): Promise<Case> {
  const root = join(dir, `masked-${options.sabotage ? "sabotage" : "run"}`);
  mkdirSync(root, { recursive: true });
  const secrets: Record<string, string> = {
    OPENAI_API_KEY: "masked-openai-4d9c21e07b",
    AWS_SECRET_ACCESS_KEY: "masked-aws-0a1b2c3d4e5f",
    GATEHOUSE_DATABASE_URL: "postgres://u:masked-db-77aa@db/x",
    DEPLOY_TOKEN: "masked-denied-deploy-5150",
  };
  const control = "masked-sink-control-31337";
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: root, APP_SETTING: control, ...secrets };
  const envPolicy = createEnvPolicy({ deny: ["DEPLOY_TOKEN"] });
  const vault = join(root, "vault.env");
  writeFileSync(
    vault,
    `${Object.entries(secrets)
      .map(([k, v]) => `${k}=${v}`)
      .join("\n")}\nCONTROL=${control}\n`,
  );
  const payloads = join(root, "payloads.jsonl");
  const all = Object.values(secrets).join(" ");

  const requests: string[] = [];
  const model = harnessModel(
    {
      runs: [
        {
          turns: [
            { toolCalls: [{ name: "Bash", input: { command: `cat ${vault}; base64 -w0 ${vault}; echo` } }] },
            { toolCalls: [{ name: "Bash", input: { command: `cat ${vault} >&2; exit 4` } }] },
            { toolCalls: [{ name: "Read", input: { file_path: vault } }] },
            { toolCalls: [{ name: "Vault", input: {} }] },
            { toolCalls: [{ name: "Fail", input: { key: "all" } }] },
            { text: "done" },
          ],
        },
      ],
    },
    (prompt: LanguageModelV3Prompt) => requests.push(JSON.stringify(prompt)),
  );
  const vaultTool: Tool<Record<string, never>, unknown> = {
    name: "Vault",
    description: "Returns what a plugin or MCP tool might: structured data",
    inputSchema: z.object({}),
    async execute() {
      return { found: { [secrets.OPENAI_API_KEY as string]: [all, control] } };
    },
  };
  const seenByPlugin: string[] = [];
  const recorder = definePlugin({
    id: "recorder",
    setup(api) {
      api.on("after_tool_call", (e) => {
        seenByPlugin.push(JSON.stringify(e));
        return undefined;
      });
    },
  });
  const record = `cat >> "${payloads}"; echo >> "${payloads}"`;
  const settings = {
    hooks: {
      PostToolUse: [{ hooks: [{ type: "command", command: record }] }],
      PostToolUseFailure: [{ hooks: [{ type: "command", command: record }] }],
    },
  };
  const opened = await openScenarioStore({ kind: "sqlite", dir: root });
  const gatehouse = createGatehouse({
    model,
    store: opened.store,
    tools: [
      createBashTool({ env, envPolicy }),
      createReadTool(),
      vaultTool as Tool,
      failTool({ all: `${all} ${control}` }) as Tool,
    ],
    plugins: [recorder],
    permissions: { mode: "bypassPermissions", allowBypass: true },
    commandHooks: { load: { homeDir: root, cliSettings: JSON.stringify(settings) } },
    logger: captureLogger().logger,
    config: { cwd: root },
    envPolicy,
    // The sabotage: the runtime does not know the secrets, so nothing masks them.
    env: options.sabotage ? { PATH: env.PATH, HOME: root } : env,
  });
  const events: string[] = [];
  let outcome = "not run";
  try {
    const stream = gatehouse.stream({ prompt: "show the vault", sessionId: "masked" });
    for await (const event of stream) events.push(JSON.stringify(event));
    outcome = (await stream.result).outcome;
    await opened.beforeClose();
    const exported = await dumpThroughApi(opened.store);
    await gatehouse.close();
    const sinks: Sink[] = [
      ...(await opened.persisted()),
      textSink("session export", exported),
      textSink("run events", events.join("\n")),
      textSink("model requests", requests.join("\n")),
      textSink("after_tool_call", seenByPlugin.join("\n")),
      textSink("PostToolUse payloads", readFileSync(payloads, "utf8")),
    ];
    const b64 = Buffer.from(readFileSync(vault)).toString("base64");
    const spellings = Object.entries(secrets).flatMap(([name, value]) => [
      [name, value],
      [`${name} (JSON)`, JSON.stringify(value).slice(1, -1)],
    ]);
    const leaked = sinks.flatMap((sink) =>
      spellings.filter(([, value]) => sinkHas(sink, value as string)).map(([name]) => `${name} in ${sink.name}`),
    );
    // The base64 dump reached the model: its secrets' parts are masked, its control parts are not.
    if (requests.join("\n").includes(b64)) leaked.push("the vault's base64 in model requests");
    const checked = ["session export", "run events", "model requests", "after_tool_call", "PostToolUse payloads"];
    const missing = checked.filter((name) => !sinks.some((s) => s.name === name && sinkHas(s, control)));
    if (!sinks.some((s) => s.name.endsWith("gatehouse.db") && sinkHas(s, control))) missing.push("the SQLite file");
    const ok = outcome === "completed" && leaked.length === 0 && missing.length === 0;
    return {
      name: `masked secrets: withheld values in tool output reach no sink${options.sabotage ? " (sabotaged)" : ""}`,
      ok,
      leaked,
      detail: `run ${outcome}; ${sinks.length} sinks searched for ${Object.keys(secrets).length} secrets; leaked: ${leaked.slice(0, 4).join(", ") || "none"}${leaked.length > 4 ? ` (+${leaked.length - 4})` : ""}; control missing from: ${missing.join(", ") || "none"}`,
    };
  } finally {
    await gatehouse.close();
    await opened.dispose();
  }
}
