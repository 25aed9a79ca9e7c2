// The environment policy where the user meets it: one `gatehouse run` in which the model's Bash
// tool, a command hook, an http hook's headers and an MCP stdio server each report what they see,
// checked against the matrix in test/core/env-matrix.ts; and `hooks check` on the same project.
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import type { EnvConsumer } from "../../src/core/env-policy.js";
import { canary, MATRIX, MATRIX_CONFIG, MCP_ENV, matrixEnv } from "../core/env-matrix.js";
import { gatehouse, tempProjects } from "./helpers.js";

const MCP_FIXTURE = fileURLToPath(new URL("fixtures/mcp-echo.mjs", import.meta.url));

/** `NAME=value` lines of `env` output. */
function parseEnvOutput(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split("\n")) {
    const eq = line.indexOf("=");
    if (eq > 0) out[line.slice(0, eq)] = line.slice(eq + 1);
  }
  return out;
}

describe("the environment policy through gatehouse run", () => {
  const fresh = tempProjects();
  let headers: Record<string, string | string[] | undefined> | undefined;
  const server = createServer((req, res) => {
    headers = req.headers;
    req.resume();
    req.on("end", () => res.end("{}"));
  });
  let url = "";
  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  /** One header per matrix variable: x-v-<index>. */
  const headerOf = (i: number) => `x-v-${i}`;

  const projectFiles = () => ({
    "s.json": {
      runs: [
        {
          turns: [
            {
              toolCalls: [
                { name: "Bash", input: { command: "env > bash.env" } },
                { name: "mcp__fx__env", input: { file: "mcp.env.json" } },
              ],
            },
            { text: "done" },
          ],
        },
      ],
    },
    "gatehouse.json": {
      model: "scripted:s.json",
      // Bash and MCP tools ask in default mode; nobody can answer here, so rules allow them.
      permissions: { allow: ["Bash", "mcp__fx"] },
      ...MATRIX_CONFIG,
      mcpServers: { fx: { command: process.execPath, args: [MCP_FIXTURE], env: MCP_ENV } },
      hooks: {
        PreToolUse: [
          {
            matcher: "Bash",
            hooks: [
              { type: "command", command: 'env > "$CLAUDE_PROJECT_DIR/hook.env"' },
              {
                type: "http",
                url,
                headers: Object.fromEntries(MATRIX.map((r, i) => [headerOf(i), `$${r.variable}`])),
                allowedEnvVars: MATRIX.map((r) => r.variable),
              },
            ],
          },
        ],
      },
    },
  });

  test("Bash tool, command hook, http headers and MCP server each see exactly their column of the matrix", async () => {
    const cwd = await fresh(projectFiles());
    const env = matrixEnv(process.env.PATH ?? "/usr/bin:/bin");
    // --model beats the GATEHOUSE_MODEL canary; the GATEHOUSE_DATABASE_URL canary is a SQLite file name.
    const r = await gatehouse(["run", "-p", "env", "--model", "scripted:s.json"], { cwd, env });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "done\n");
    const seen: Record<EnvConsumer, Record<string, string>> = {
      bash: parseEnvOutput(await readFile(join(cwd, "bash.env"), "utf8")),
      commandHooks: parseEnvOutput(await readFile(join(cwd, "hook.env"), "utf8")),
      httpHeaders: Object.fromEntries(
        MATRIX.map((row, i) => [row.variable, String(headers?.[headerOf(i)] ?? "")] as const).filter(
          ([, v]) => v !== "",
        ),
      ),
      mcp: JSON.parse(await readFile(join(cwd, "mcp.env.json"), "utf8")) as Record<string, string>,
    };
    const wrong: string[] = [];
    for (const [consumer, vars] of Object.entries(seen) as [EnvConsumer, Record<string, string>][]) {
      for (const row of MATRIX) {
        const expected = row.variable === "PATH" ? env.PATH : canary(row.variable);
        const has = vars[row.variable] === expected;
        if (has !== row.sees[consumer])
          wrong.push(`${consumer} × ${row.variable} (${row.class}): ${has ? "seen" : "missing"}`);
      }
      // Nothing else carries a canary either (under another name, or inside another value).
      const hidden = MATRIX.filter((row) => !row.sees[consumer] && JSON.stringify(vars).includes(canary(row.variable)));
      for (const row of hidden) wrong.push(`${consumer}: the ${row.variable} canary under another name`);
    }
    assert.deepEqual(wrong, []);
  });

  test("hooks check warns about each header naming a variable the policy removes, and about an unlisted one", async () => {
    const files = projectFiles();
    const hook = files["gatehouse.json"].hooks.PreToolUse[0]?.hooks[1] as { headers: Record<string, string> };
    hook.headers["x-unlisted"] = "$NOT_IN_ALLOWED";
    const cwd = await fresh(files);
    const r = await gatehouse(["hooks", "check"], { cwd });
    assert.equal(r.code, 0, r.stderr);
    const removed = MATRIX.filter((row) => !row.sees.httpHeaders && row.variable !== "GEMINI_API_KEY");
    for (const row of removed) {
      assert.match(
        r.stdout,
        new RegExp(
          `warning: gatehouse\\.json:\\d+:\\d+: hooks\\.PreToolUse\\[0\\]\\.hooks\\[1\\]\\.headers\\["x-v-\\d+"\\]: \\$${row.variable} is removed by the environment policy`,
        ),
        row.variable,
      );
    }
    assert.match(r.stdout, /\$GEMINI_API_KEY is removed by the environment policy \(a model-provider credential\)/);
    assert.match(r.stdout, /headers\["x-unlisted"\]: \$NOT_IN_ALLOWED is not in allowedEnvVars/);
    for (const row of MATRIX.filter((x) => x.sees.httpHeaders))
      assert.doesNotMatch(r.stdout, new RegExp(`\\$${row.variable} is`), row.variable);
  });
});
