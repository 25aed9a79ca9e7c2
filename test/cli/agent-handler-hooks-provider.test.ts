// Claude Code's `agent` handler against a real OpenAI-protocol server standing in for its model:
// the test sees exactly what the agent's model was sent. Its reads meet the permission rules and
// the sandbox's read rules; keys reach it masked; a model that never answers fails open or closed.
import assert from "node:assert/strict";
import { existsSync, rmSync, symlinkSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { chatAnswer, chatToolCalls, type MockServer, startMockServer } from "../models/mock-server.js";
import { agentHook, settings } from "./agent-hooks-fixtures.js";
import { gatehouse, tempProjects } from "./helpers.js";

// The agent's model as a real OpenAI-protocol server, so the test sees exactly what it was sent.
const KEY = "plain-agent-hook-key-0123456789"; // not key-shaped: only masking by value catches it
const SECRET = "hunter2-not-for-any-model";
const ANTHROPIC_SHAPED = "sk-ant-abcdefghijklmnopqrstuvwx";

const toolCalls = chatToolCalls;
const answer = chatAnswer;
/** The text of each tool message the agent's model was sent, by tool call id. */
// biome-ignore lint/suspicious/noExplicitAny: wire JSON
const toolMessages = (body: any): Record<string, string> =>
  Object.fromEntries(
    (body.messages as { role: string; tool_call_id?: string; content: string }[])
      .filter((m) => m.role === "tool")
      .map((m) => [m.tool_call_id, m.content]),
  );

describe("agent hooks against a provider's server", { concurrency: 1 }, () => {
  const fresh = tempProjects();
  let server: MockServer;
  let silent: Server;
  let silentOrigin: string;
  before(async () => {
    server = await startMockServer();
    // A provider that never answers.
    silent = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    silentOrigin = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
  });
  after(async () => {
    await server.close();
    silent.closeAllConnections();
    await new Promise((resolve) => silent.close(resolve));
  });

  const agentProject = (files: Record<string, unknown>, hook: object = {}) =>
    fresh({
      "s.json": {
        runs: [{ turns: [{ toolCalls: [{ name: "Bash", input: { command: "touch ran" } }] }, { text: "done" }] }],
      },
      "gatehouse.json": settings(agentHook({ model: "openai:gpt-test", ...hook })),
      ...files,
    });
  const run = (cwd: string, origin = server.origin) => {
    server.requests.length = 0;
    return gatehouse(["run", "-p", "go"], { cwd, env: { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: `${origin}/v1` } });
  };

  test("a read a deny or ask rule covers is refused, and a search of the folder skips the file: its secret never reaches the agent's model", async () => {
    const cwd = await agentProject({
      ".env": `DB_PASSWORD=${SECRET}\n`,
      "ask.txt": `also ${SECRET}\n`,
      "README.md": "nothing to see\n",
      ".claude/settings.json": { permissions: { deny: ["Read(./.env)"], ask: ["Read(./ask.txt)"] } },
    });
    server.reply(
      toolCalls(
        { name: "Read", input: { file_path: ".env" } },
        { name: "Read", input: { file_path: "ask.txt" } },
        { name: "Grep", input: { pattern: "hunter2", path: ".", output_mode: "content" } },
        { name: "Glob", input: { pattern: "*" } },
      ),
      answer('{"ok": true}'),
    );
    const r = await run(cwd);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(existsSync(join(cwd, "ran")), true);
    assert.equal(server.requests.length, 2);
    const [first, second] = server.requests.map((q) => q.body);
    assert.deepEqual(
      first.tools.map((t: { function: { name: string } }) => t.function.name),
      ["Read", "Grep", "Glob"],
    );
    const results = toolMessages(second);
    // (HOME is the project folder here: its .claude/settings.json is read as the user's.)
    assert.match(results.call_0 ?? "", /denied \(rule Read\(\.\/\.env\) from user settings\)/);
    assert.match(results.call_1 ?? "", /Read\(\.\/ask\.txt\) from user settings asks, and no one can be asked/);
    assert.equal(results.call_2, "No matches found");
    assert.match(results.call_3 ?? "", /README\.md/);
    assert.doesNotMatch(results.call_3 ?? "", /\.env|ask\.txt/);
    assert.ok(!JSON.stringify(server.requests).includes(SECRET), "the secret is in no request");
  });

  test("the sandbox's read rules bind the agent too: denyRead refuses, allowRead re-opens, credential files stay shut", async () => {
    const cwd = await agentProject({
      "private/key.txt": `sandboxed ${SECRET}\n`,
      "private/public.md": "open to all\n",
      ".ssh/id_rsa": `ssh ${SECRET}\n`,
      "linked.txt": "replaced by a link below",
      // (HOME is the project folder here: `~/private` is the project's folder.)
      ".claude/settings.json": {
        sandbox: { filesystem: { denyRead: ["~/private"], allowRead: ["~/private/public.md"] } },
      },
    });
    rmSync(join(cwd, "linked.txt"));
    symlinkSync(join(cwd, "private", "key.txt"), join(cwd, "linked.txt"));
    server.reply(
      toolCalls(
        { name: "Read", input: { file_path: "private/key.txt" } },
        { name: "Read", input: { file_path: "private/public.md" } },
        { name: "Read", input: { file_path: "~/.ssh/id_rsa" } },
        { name: "Read", input: { file_path: "linked.txt" } },
        { name: "Grep", input: { pattern: "hunter2", path: ".", output_mode: "content" } },
        { name: "Glob", input: { pattern: "**/*", path: "private" } },
      ),
      answer('{"ok": true}'),
    );
    const r = await run(cwd);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(server.requests.length, 2);
    const results = toolMessages(server.requests[1]?.body);
    const refused =
      /Permission to use (Read|Glob) was denied \(the sandbox's filesystem rules keep it from being read\)/;
    assert.match(results.call_0 ?? "", refused);
    assert.match(results.call_1 ?? "", /open to all/);
    assert.match(results.call_2 ?? "", refused, "~/.ssh is a credential folder");
    assert.match(results.call_3 ?? "", refused, "a link meets the rules of its target");
    assert.equal(results.call_4, "No matches found");
    assert.match(results.call_5 ?? "", refused);
    assert.ok(!JSON.stringify(server.requests).includes(SECRET), "the secret is in no request");
  });

  test("a key in a file the agent may read, and in the hook input, reaches its model masked", async () => {
    const cwd = await fresh({
      "s.json": {
        runs: [
          { turns: [{ toolCalls: [{ name: "Bash", input: { command: `echo ${KEY} > ran` } }] }, { text: "done" }] },
        ],
      },
      "notes.txt": `OPENAI_API_KEY=${KEY}\nbackup key ${ANTHROPIC_SHAPED}\n`,
      "gatehouse.json": settings(agentHook({ model: "openai:gpt-test" })),
    });
    server.reply(toolCalls({ name: "Read", input: { file_path: "notes.txt" } }), answer('{"ok": true}'));
    const r = await run(cwd);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(server.requests.length, 2);
    const sent = JSON.stringify(server.requests.map((q) => q.body));
    assert.ok(!sent.includes(KEY), "the provider key is in no request body");
    assert.ok(!sent.includes(ANTHROPIC_SHAPED), "nor a key-shaped string");
    assert.match(
      toolMessages(server.requests[1]?.body).call_0 ?? "",
      /OPENAI_API_KEY=\*\*\*\*\n.*backup key \*\*\*\*/s,
    );
    assert.match(JSON.stringify(server.requests[0]?.body.messages), /echo \*\*\*\* > ran/);
  });

  test("an agent whose model does not answer in time fails open, or closed with onFailure block", async () => {
    const open = await agentProject({}, { timeout: 1 });
    const r = await run(open, silentOrigin);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(existsSync(join(open, "ran")), true);
    assert.match(r.stderr, /timed out after 1 s: no decision/);

    const closed = await agentProject({}, { timeout: 1, onFailure: "block" });
    const blocked = await run(closed, silentOrigin);
    assert.equal(blocked.code, 0, blocked.stderr);
    assert.equal(existsSync(join(closed, "ran")), false);
    assert.match(blocked.stderr, /timed out after 1 s: blocked \(onFailure: block\)/);
  });
});
