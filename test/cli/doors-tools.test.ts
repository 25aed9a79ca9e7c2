import assert from "node:assert/strict";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { assertNowhere, doorProjects, resultOf } from "./doors-helpers.js";

// Issue 11, paths 4, 7, 8 and 10: the tool door (a failed call's output can be withheld; a call's
// stored input is what ran), scrubs by tree, and the memory store's transcripts.

const MCP_FAILS = fileURLToPath(new URL("fixtures/mcp-fails.mjs", import.meta.url));

/** Withholds any output (or failure) holding `SECRET-`: Claude Code's JSON block answer. */
const WITHHOLD = `#!/bin/sh
input=$(cat)
case "$input" in *SECRET-*) printf '%s\\n' '{"decision": "block", "reason": "the output held a token"}' ;; esac
exit 0
`;

describe("the tool door, through the CLI", { concurrency: 4 }, () => {
  const fresh = doorProjects();

  test("path 4: PostToolUseFailure withholds a failed Bash call's output and an MCP isError result", async () => {
    const hook = { hooks: [{ type: "command", command: "/bin/sh", args: ["withhold.sh"] }] };
    const p = await fresh({
      "gatehouse.json": {
        model: "scripted:script.json",
        hooks: { PostToolUseFailure: [hook] },
        mcpServers: { fx: { command: process.execPath, args: [MCP_FAILS] } },
        // Bash and MCP tools ask in default mode and nobody can answer: rules let the calls run.
        permissions: { allow: ["Bash", "mcp__fx"] },
      },
      "withhold.sh": WITHHOLD,
      "script.json": {
        runs: [
          {
            match: "bash",
            turns: [
              { toolCalls: [{ name: "Bash", input: { command: "echo token SECRET-$((40+2))-BASH; exit 1" } }] },
              { text: "got {{lastToolResult}}" },
            ],
          },
          { turns: [{ toolCalls: [{ name: "mcp__fx__leak" }] }, { text: "got {{lastToolResult}}" }] },
        ],
      },
    });
    const bash = await p.run(["run", "-p", "bash please", "--json"]);
    assert.equal(bash.code, 0, bash.stderr);
    assert.match(
      String(resultOf(bash).reply),
      /^got \[The output of this Bash call was withheld by a policy \(command-hooks\)/,
    );
    const mcp = await p.run(["run", "-p", "mcp please", "--json"]);
    assert.equal(mcp.code, 0, mcp.stderr);
    assert.match(String(resultOf(mcp).reply), /^got \[The output of this mcp__fx__leak call was withheld/);
    for (const secret of ["SECRET-42-BASH", "SECRET-77-MCP"]) await assertNowhere(p, secret, [bash, mcp]);
  });

  test("path 7: a call blocked or rewritten by before_tool_call is stored with the input that ran, or none", async () => {
    const guard = `export default {
      id: "input-guard",
      setup(api) {
        api.on("before_tool_call", (e) => {
          const command = String(e.params.command);
          if (command.includes("SECRET-BLK")) return { block: true, blockReason: "not that one" };
          if (command.includes("SECRET-RW")) return { params: { command: "echo rewritten" } };
          return undefined;
        }, { matcher: "Bash" });
      },
    };`;
    const p = await fresh({
      "gatehouse.json": {
        model: "scripted:script.json",
        plugins: [{ path: "guard.mjs" }],
        permissions: { allow: ["Bash"] },
      },
      "guard.mjs": guard,
      "script.json": {
        runs: [
          {
            turns: [
              {
                toolCalls: [
                  { name: "Bash", input: { command: "echo SECRET-RW-7" } },
                  { name: "Bash", input: { command: "echo SECRET-BLK-7" } },
                ],
              },
              { text: "done" },
            ],
          },
        ],
      },
    });
    const r = await p.run(["run", "--session", "s7", "-p", "go"]);
    assert.equal(r.code, 0, r.stderr);
    const exported = await p.run(["sessions", "export", "s7"]);
    assert.match(exported.stdout, /"command":"echo rewritten"/, "the rewritten input is stored");
    for (const secret of ["SECRET-RW-7", "SECRET-BLK-7"]) await assertNowhere(p, secret, [r, exported]);
  });

  test("path 8: withholding a sub-agent's answer scrubs its whole subtree (subagents.maxDepth 2)", async () => {
    const withholder = `export default {
      id: "withholder",
      setup(api) {
        api.on("after_tool_call", (e) => JSON.stringify(e.result ?? null).includes("WITHHOLD-8") ? { block: true } : undefined);
      },
    };`;
    const agent = (prompt: string) => ({ name: "Agent", input: { description: "a task", prompt } });
    const p = await fresh({
      "gatehouse.json": {
        model: "scripted:script.json",
        plugins: [{ path: "withholder.mjs" }],
        subagents: { maxDepth: 2 },
        permissions: { allow: ["Agent"] },
      },
      "withholder.mjs": withholder,
      "script.json": {
        runs: [
          { match: "^\\[grand\\]", turns: [{ text: "grand says SECRET-GC-8" }] },
          {
            match: "^\\[child\\]",
            turns: [{ toolCalls: [agent("[grand] dig")] }, { text: "child relays WITHHOLD-8 {{lastToolResult}}" }],
          },
          { turns: [{ toolCalls: [agent("[child] look")] }, { text: "top got {{lastToolResult}}" }] },
        ],
      },
    });
    const r = await p.run(["run", "-p", "start", "--json"]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(String(resultOf(r).reply), /^top got \[The output of this Agent call was withheld/);
    await assertNowhere(p, "SECRET-GC-8", [r]);
  });

  test("path 10: the memory store's transcripts of a killed run do not outlive it; a finished run leaves none", async () => {
    // The Stop hook kills gatehouse (its parent) once the unchecked answer is in the transcript.
    const kill = "#!/bin/sh\ncat >/dev/null\nkill -9 $PPID\nsleep 5\n";
    const stop = { Stop: [{ hooks: [{ type: "command", command: "/bin/sh", args: ["kill.sh"] }] }] };
    const p = await fresh({
      "gatehouse.json": { model: "scripted:script.json", store: "memory", hooks: stop },
      "kill.sh": kill,
      "script.json": { runs: [{ turns: [{ text: "unchecked SECRET-MEM-10" }] }] },
    });
    const killed = await p.run(["run", "-p", "go"]);
    assert.equal(killed.code, null, "killed by the Stop hook");
    // The next process that opens a memory store in this project recovers what the dead one left.
    const listed = await p.run(["sessions", "list"]);
    assert.equal(listed.code, 0, listed.stderr);
    await assertNowhere(p, "SECRET-MEM-10", [killed, listed]);

    const calm = await fresh({
      "gatehouse.json": {
        model: "scripted:echo",
        store: "memory",
        hooks: { Stop: [{ hooks: [{ type: "command", command: "true" }] }] },
      },
    });
    const finished = await calm.run(["run", "-p", "hello"]);
    assert.equal(finished.code, 0, finished.stderr);
    const temp = (await readdir(join(calm.cwd, "tmp"))).filter((name) => name.startsWith("gatehouse"));
    assert.deepEqual(temp, [], "no temp folder survives");
    const transcripts = await readdir(join(calm.cwd, ".gatehouse", "transcripts")).catch(() => []);
    assert.deepEqual(transcripts, [], "no transcript folder survives a finished run");
  });
});
