import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, test } from "node:test";
import { runEndLine } from "../../src/cli/run-end.js";
import { gatehouse, tempProjects } from "./helpers.js";
import { gatehouseInProcess } from "./in-process.js";
import { gatehouseOnTty, onScreen, uncolored } from "./project-helpers.js";

// What `gatehouse run` shows while and after a run: --output-format, the live status line on a
// terminal, max_steps, sub-agents in the totals.

const SCRIPT = {
  runs: [
    {
      match: "loop",
      turns: [
        { toolCalls: [{ name: "Bash", input: { command: "echo one" } }], usage: { inputTokens: 10, outputTokens: 5 } },
        { toolCalls: [{ name: "Bash", input: { command: "echo two" } }], usage: { inputTokens: 20, outputTokens: 5 } },
        { text: "done looping", usage: { inputTokens: 30, outputTokens: 5 } },
      ],
    },
    {
      match: "delegate",
      turns: [
        {
          toolCalls: [{ name: "Agent", input: { description: "sub", prompt: "child task", subagent_type: "helper" } }],
          usage: { inputTokens: 100, outputTokens: 10 },
        },
        { text: "the child said: {{lastToolResult}}", usage: { inputTokens: 200, outputTokens: 20 } },
      ],
    },
    {
      match: "hold",
      turns: [
        { toolCalls: [{ name: "Bash", input: { command: "while [ ! -f go ]; do sleep 0.05; done; echo released" } }] },
        { text: "held done" },
      ],
    },
    {
      match: "recurse",
      turns: [
        { toolCalls: [{ name: "Agent", input: { description: "sub", prompt: "nested steps job" } }] },
        { text: "parent got: {{lastToolResult}}" },
      ],
    },
    {
      match: "nested steps job",
      turns: [
        { toolCalls: [{ name: "Bash", input: { command: "echo a" } }] },
        { toolCalls: [{ name: "Bash", input: { command: "echo b" } }] },
        { text: "child finished" },
      ],
    },
    { match: "child task", turns: [{ text: "child answer", usage: { inputTokens: 7, outputTokens: 3 } }] },
    { match: "", turns: [{ text: "hello there", chunks: 3 }] },
  ],
};

/** An output gate: `message_sending` with a handler that passes everything. */
const GATE = `export default { id: "gate", register(api) { api.on("message_sending", () => undefined); } };\n`;

/** The script's tools run without asking (nobody could be asked here; docs/permissions.md). */
const ALLOWED = { allow: ["Bash", "Agent"] };

const projects = tempProjects();
const fresh = (extra: Record<string, unknown> = {}) =>
  projects({
    "script.json": SCRIPT,
    "gatehouse.json": { model: "scripted:script.json", permissions: ALLOWED },
    ...extra,
  });
const gated = () =>
  fresh({
    "gate.mjs": GATE,
    "gatehouse.json": {
      model: "scripted:script.json",
      permissions: ALLOWED,
      plugins: [{ path: "gate.mjs", hooks: { allowConversationAccess: true } }],
    },
  });

describe("gatehouse run: output and progress", { concurrency: 2 }, () => {
  test("json prints claude -p's result object, Gatehouse's own fields beside it", async () => {
    const cwd = await fresh();
    const r = await gatehouse(["run", "-p", "loop", "--output-format", "json"], { cwd });
    assert.equal(r.code, 0, r.stderr);
    const result = JSON.parse(r.stdout);
    assert.equal(result.type, "result");
    assert.equal(result.subtype, "success");
    assert.equal(result.is_error, false);
    assert.equal(result.result, "done looping");
    assert.equal(result.num_turns, 3);
    assert.equal(result.session_id, result.sessionId);
    assert.equal(result.usage.input_tokens, 60);
    assert.equal(result.usage.inputTokens, 60);
    assert.deepEqual(result.permission_denials, []);
    assert.equal(result.terminal_reason, "completed");
    assert.equal(result.outcome, "completed");
  });

  test("stream-json prints claude -p's messages: init, the model's turns, the tool results it read, the result", async () => {
    const cwd = await fresh();
    const r = await gatehouse(["run", "-p", "loop", "--output-format", "stream-json"], { cwd });
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const kinds = lines.map(
      (m) =>
        `${m.type}${m.subtype ? `/${m.subtype}` : ""}:${(m.message?.content ?? []).map((b: { type: string }) => b.type).join("+")}`,
    );
    assert.deepEqual(kinds, [
      "system/init:",
      "assistant:tool_use",
      "user:tool_result",
      "assistant:tool_use",
      "user:tool_result",
      "assistant:text",
      "result/success:",
    ]);
    assert.ok(lines[0].tools.includes("Bash"));
    assert.equal(lines[2].message.content[0].content, "one");
    assert.equal(lines[2].message.content[0].tool_use_id, lines[1].message.content[0].id);
    assert.ok(lines.every((m) => m.session_id === lines[0].session_id));
  });

  test("a call a PreToolUse hook blocks is in json's permission_denials, as claude -p lists it, its input not kept", async () => {
    const cwd = await fresh({
      ".claude/settings.json": {
        hooks: { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "echo no >&2; exit 2" }] }] },
      },
    });
    const r = await gatehouseInProcess(["run", "-p", "loop", "--output-format", "json"], { cwd });
    const result = JSON.parse(r.stdout);
    assert.deepEqual(
      result.permission_denials.map((d: { tool_name: string; tool_input: unknown }) => [d.tool_name, d.tool_input]),
      // What a hook blocked is kept nowhere, the call's input included.
      [
        ["Bash", {}],
        ["Bash", {}],
      ],
    );
  });

  test("gatehouse-events prints one JSON object per run event, the result last, text deltas included", async () => {
    const cwd = await fresh();
    const r = await gatehouse(["run", "-p", "loop", "--output-format", "gatehouse-events"], { cwd });
    assert.equal(r.code, 0, r.stderr);
    const events = r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const types = events.map((e) => e.type);
    assert.equal(types[0], "run-start");
    assert.equal(events[0].outputHeld, false);
    assert.ok(
      types.includes("tool-call") && types.includes("tool-result") && types.includes("text-delta"),
      types.join(),
    );
    assert.deepEqual(
      types.filter((t) => t === "step"),
      ["step", "step", "step"],
    );
    const end = events.at(-1);
    assert.equal(end.type, "run-end");
    assert.equal(end.result.reply, "done looping");
  });

  test("gatehouse-events respects an output gate's holdback: no text-delta, the answer once as final", async () => {
    const cwd = await gated();
    const r = await gatehouseInProcess(["run", "-p", "hi", "--output-format", "gatehouse-events"], { cwd });
    assert.equal(r.code, 0, r.stderr);
    const events = r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    assert.equal(events[0].outputHeld, true);
    assert.ok(!events.some((e) => e.type === "text-delta"));
    assert.deepEqual(
      events.filter((e) => e.type === "final").map((e) => e.text),
      ["hello there"],
    );
  });

  test("--max-turns ends a run still calling tools as max_steps: exit 1, one clear line, outcome in --json", async () => {
    const cwd = await fresh();
    const r = await gatehouse(["run", "-p", "loop", "--max-turns", "2", "--json"], { cwd });
    assert.equal(r.code, 1, r.stderr);
    const result = JSON.parse(r.stdout);
    assert.equal(result.outcome, "max_steps");
    assert.equal(result.reply, null);
    assert.equal(result.steps, 2);
    assert.match(r.stderr, /^gatehouse: stopped after 2 model calls: the step limit was reached/m);
    const bad = await gatehouse(["run", "-p", "loop", "--max-turns", "0"], { cwd });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--max-turns: expected a whole number from 1 to 1000/);
  });

  test("a step limit of one says 'stopped after 1 model call', in the singular", () => {
    assert.match(runEndLine({ outcome: "max_steps", steps: 1 }) ?? "", /^stopped after 1 model call: /);
  });

  test("steps and usage include a sub-agent's, which --json lists per child", async () => {
    const cwd = await fresh();
    const r = await gatehouseInProcess(["run", "-p", "delegate", "--json"], { cwd });
    assert.equal(r.code, 0, r.stderr);
    const result = JSON.parse(r.stdout);
    assert.equal(result.reply, "the child said: child answer");
    assert.equal(result.steps, 3);
    assert.equal(result.usage.inputTokens, 307);
    assert.equal(result.usage.outputTokens, 33);
    assert.equal(result.children.length, 1);
    const [child] = result.children;
    assert.equal(child.agentType, "helper");
    assert.equal(child.outcome, "completed");
    assert.equal(child.steps, 1);
    assert.equal(child.usage.inputTokens, 7);
  });

  test("on a terminal: a live status line on stderr (step, tool, tokens, elapsed) and the text streamed", async () => {
    const cwd = await fresh();
    const r = await gatehouseOnTty(["run", "-p", "loop"], { cwd, env: { NO_COLOR: "1" } });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(uncolored(r.stdout), "done looping\n", "the reply once, streamed");
    assert.match(r.stderr, /step 1 · [\d.]+s/);
    assert.match(r.stderr, /step 2 · Bash · 15 tokens · [\d.]+s|step 2 · 15 tokens · [\d.]+s/);
    assert.match(r.stderr, /step 3 · 40 tokens/);
    assert.match(onScreen(r.stderr), /^session: \S+$/m, "the status line is gone at the end");
  });

  test("on a terminal with an output gate, the status line says the reply is held until the policy passes", async () => {
    const cwd = await gated();
    const r = await gatehouseOnTty(["run", "-p", "hi"], { cwd, env: { NO_COLOR: "1" } });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /\(the reply is held until the output policy passes\)/);
    assert.equal(r.stdout, "hello there\n");
  });

  test("a run waiting for its session's lock says so in one line, and the wait counts in durationMs", async () => {
    const cwd = await fresh();
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      void writeFile(join(cwd, "go"), "");
    };
    let second: Promise<Awaited<ReturnType<typeof gatehouse>>> | undefined;
    const first = gatehouse(["run", "--session", "s-lock", "-p", "hold", "--output-format", "gatehouse-events"], {
      cwd,
      onStdout: (soFar) => {
        // The first run holds the session's lock (it is in its tool call): the second has to wait.
        if (second || !soFar.includes('"type":"tool-call"')) return;
        second = gatehouse(["run", "--session", "s-lock", "-p", "hi", "--json"], {
          cwd,
          onStderr: (err) => {
            if (err.includes("waiting for another run")) release();
          },
        });
      },
    });
    const a = await first;
    assert.equal(a.code, 0, a.stderr);
    assert.ok(second, "the second run started");
    const b = await second;
    assert.equal(b.code, 0, b.stderr);
    assert.equal(
      b.stderr.match(/^gatehouse: waiting for another run of this session to finish…$/gm)?.length,
      1,
      b.stderr,
    );
    const result = JSON.parse(b.stdout);
    assert.ok(Number.isInteger(result.durationMs));
  });

  test("--verbose logs model calls, tool calls and hook decisions as metadata, never content", async () => {
    const cwd = await gated();
    const r = await gatehouse(["run", "-p", "loop secret-prompt-words", "--verbose"], { cwd });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /^gatehouse: model call: step 1, scripted:\S+, \d+ messages, \d+ tools$/m);
    assert.match(r.stderr, /^gatehouse: model call: step 3 done in \d+ ms, stop, 0 tool calls, tokens in 30 out 5$/m);
    assert.match(r.stderr, /^gatehouse: tool call: Bash \(\S+\) done in \d+ ms$/m);
    assert.match(r.stderr, /^gatehouse: hook message_sending: 1 handler, done in \d+ ms$/m);
    for (const content of ["secret-prompt-words", "echo one", "done looping"])
      assert.ok(!r.stderr.includes(content), `${content} in ${r.stderr}`);
  });

  test("GATEHOUSE_LOG_FORMAT=json writes pino's JSON lines", async () => {
    const cwd = await fresh();
    const r = await gatehouseInProcess(["run", "-p", "hi"], {
      cwd,
      env: { GATEHOUSE_LOG_LEVEL: "debug", GATEHOUSE_LOG_FORMAT: "json" },
    });
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stderr
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    assert.ok(lines.length > 0);
    for (const entry of lines) {
      assert.equal(entry.level, "debug");
      assert.equal(typeof entry.time, "string");
    }
    assert.ok(lines.some((e) => /^model call: step 1 done/.test(e.msg)));
  });

  test("a sub-agent that hits the step limit answers its Agent call with an error saying so", async () => {
    const cwd = await fresh();
    const r = await gatehouse(["run", "-p", "recurse", "--max-turns", "2", "--json"], { cwd });
    assert.equal(r.code, 0, r.stderr);
    const result = JSON.parse(r.stdout);
    assert.match(result.reply, /^parent got: .*the sub-agent stopped after 2 model calls, its step limit/);
    assert.equal(result.children[0].outcome, "max_steps");
    assert.equal(result.steps, 4);
  });
});
