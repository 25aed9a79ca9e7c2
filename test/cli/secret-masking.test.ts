// Secrets masked by value at the tool door: a Bash command that reads Gatehouse's own environment
// (`/proc/$PPID/environ`, the way around an environment policy that only cleans the child's), a
// failing command that prints it, and a Read of a file holding a key reach neither the model's
// requests, nor the store's files, nor a PostToolUse hook; what else they printed does.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { filesUnder } from "../../harness/sinks.js";
import { chatAnswer, chatToolCalls, type MockServer, startMockServer } from "../models/mock-server.js";
import { gatehouse, tempProjects } from "./helpers.js";

// Not key-shaped: only masking by value catches them.
const KEY = "plain-provider-key-5e1f0a9c77d2";
const DENIED = "denied-by-operator-0b7c3d";
const DB_PASSWORD = "db-pass-8d1e6f42";

describe("secrets masked by value in tool output", { concurrency: 1 }, () => {
  const fresh = tempProjects();
  let server: MockServer;
  before(async () => {
    server = await startMockServer();
  });
  after(() => server.close());

  test("Bash reading /proc/$PPID/environ (plain and base64), a failing command and Read of a .env reach no model request, store file or PostToolUse payload unmasked", async () => {
    const cwd = await fresh({
      ".env": `OPENAI_API_KEY=${KEY}\nNOT_SECRET=visible-control-value\n`,
      // Masking is the line that holds where there is no sandbox (which would hide /proc/$PPID).
      ".claude/settings.json": { sandbox: { enabled: false } },
      "gatehouse.json": {
        model: "openai:gpt-test",
        permissions: { allow: ["Bash", "Read"] },
        environment: { deny: ["DEPLOY_TOKEN_X"] },
        hooks: {
          PostToolUse: [
            {
              hooks: [
                {
                  type: "command",
                  command: 'cat >> "$CLAUDE_PROJECT_DIR/post.jsonl"; echo >> "$CLAUDE_PROJECT_DIR/post.jsonl"',
                },
              ],
            },
          ],
          PostToolUseFailure: [
            {
              hooks: [
                {
                  type: "command",
                  command: 'cat >> "$CLAUDE_PROJECT_DIR/post.jsonl"; echo >> "$CLAUDE_PROJECT_DIR/post.jsonl"',
                },
              ],
            },
          ],
        },
      },
    });
    server.requests.length = 0;
    server.reply(
      chatToolCalls({
        name: "Bash",
        input: { command: "tr '\\0' '\\n' < /proc/$PPID/environ; base64 -w0 /proc/$PPID/environ; echo" },
      }),
      chatToolCalls({ name: "Bash", input: { command: "tr '\\0' '\\n' < /proc/$PPID/environ >&2; exit 3" } }),
      chatToolCalls({ name: "Read", input: { file_path: join(cwd, ".env") } }),
      chatAnswer("done"),
    );
    const r = await gatehouse(["run", "--data-dir", ".gh", "-p", "go"], {
      cwd,
      env: {
        OPENAI_API_KEY: KEY,
        OPENAI_BASE_URL: `${server.origin}/v1`,
        DEPLOY_TOKEN_X: DENIED,
        GATEHOUSE_DATABASE_URL_UNUSED: `postgres://u:${DB_PASSWORD}@db/x`,
        CANARY_CONTROL: "printed-environ-control",
      },
    });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(server.requests.length, 4);
    const sent = server.requests.map((q) => JSON.stringify(q.body)).join("\n");
    const stored = filesUnder(join(cwd, ".gh"));
    const post = readFileSync(join(cwd, "post.jsonl"), "utf8");
    // The controls: the environment and the file were read and reached every sink, masked.
    for (const [sink, text] of [
      ["model requests", sent],
      ["PostToolUse payloads", post],
    ] as const) {
      assert.ok(text.includes("CANARY_CONTROL=printed-environ-control"), `${sink}: the environ dump arrived`);
      assert.ok(text.includes("visible-control-value"), `${sink}: the .env file arrived`);
      assert.ok(text.includes("OPENAI_API_KEY=****"), `${sink}: the key's place is masked`);
      assert.ok(text.includes("Exit code 3"), `${sink}: the failure arrived`);
    }
    assert.ok(
      stored.some((f) => f.bytes.includes("printed-environ-control")),
      "the store holds the environ dump",
    );
    const b64 = (s: string) => Buffer.from(s).toString("base64");
    for (const secret of [KEY, DENIED, DB_PASSWORD]) {
      assert.ok(!sent.includes(secret), `model requests hold ${secret}`);
      assert.ok(!post.includes(secret), `PostToolUse payloads hold ${secret}`);
      for (const f of stored) assert.ok(!f.bytes.includes(secret), `${f.path} holds ${secret}`);
      assert.ok(!r.stdout.includes(secret));
    }
    // The base64 dump: every alignment of the key inside it is masked, the rest of it is not.
    const dump = sent.match(/[A-Za-z0-9+/]{200,}/)?.[0] ?? "";
    assert.ok(dump.length > 0 && sent.includes("****"), "the base64 dump reached the model");
    for (const shift of ["", "x", "xy"]) {
      const core = b64(`${shift}${KEY}`).slice(Math.ceil((shift.length * 8) / 6), -4);
      assert.ok(!sent.includes(core), `base64 of the key at shift ${shift.length}`);
    }
  });

  test("a value a SessionStart hook exports (CLAUDE_ENV_FILE) under a withheld name is masked in later tool output; under another name it is not", async () => {
    const value = "session-secret-value-4f2a9b";
    const project = (deny: string[]) =>
      fresh({
        "s.json": {
          runs: [
            {
              turns: [
                { toolCalls: [{ name: "Bash", input: { command: "cat found.txt" } }] },
                { text: "{{lastToolResult}}" },
              ],
            },
          ],
        },
        "found.txt": `found ${value}\n`,
        "gatehouse.json": {
          model: "scripted:s.json",
          permissions: { allow: ["Bash"] },
          environment: { deny },
          hooks: {
            SessionStart: [
              {
                hooks: [
                  { type: "command", command: `printf "export DEPLOY_SECRET=${value}\\n" >> "$CLAUDE_ENV_FILE"` },
                ],
              },
            ],
          },
        },
      });
    const masked = await gatehouse(["run", "-p", "go"], { cwd: await project(["DEPLOY_SECRET"]) });
    assert.equal(masked.code, 0, masked.stderr);
    assert.equal(masked.stdout, "found ****\n");
    // Control: the same run where the policy does not withhold the variable prints the value.
    const plain = await gatehouse(["run", "-p", "go"], { cwd: await project([]) });
    assert.equal(plain.stdout, `found ${value}\n`);
  });
});
