// The library as a new user calls it: `createGatehouse({ model })` has the built-in tools (under
// the permission rules), `tools: []` has none, and without a project folder nothing is written
// to disk (sessions in memory). Handlers registered for one built-in tool see its input typed.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { createGatehouse } from "../../src/assembly/gatehouse.js";
import { createScriptedModel } from "../../src/models/index.js";
import { definePlugin } from "../../src/plugins/index.js";

const dirs: string[] = [];
after(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));
const bashCall = (command: string) =>
  createScriptedModel({
    runs: [{ turns: [{ toolCalls: [{ name: "Bash", input: { command } }] }, { text: "read: {{lastToolResult}}" }] }],
  });

/** A type test as much as a run: under `matcher: "Bash"`, `event.params.command` is a string. */
const noRm = definePlugin({
  id: "no-rm",
  setup(api) {
    api.on(
      "before_tool_call",
      (event) => {
        const command: string = event.params.command;
        // @ts-expect-error Bash's input has no file_path
        void event.params.file_path;
        return command.includes("rm ") ? { outcome: "block", message: "rm is not allowed" } : undefined;
      },
      { matcher: "Bash" },
    );
    api.on("before_tool_call", (event) => {
      // @ts-expect-error without a built-in tool's name as matcher, params is unknown
      void event.params.command;
      return undefined;
    });
  },
});

test("createGatehouse({ model }) runs the built-in tools: the model's Bash call runs (allowed by a rule)", async () => {
  const gatehouse = createGatehouse({
    model: bashCall("echo from-bash"),
    permissions: { allow: ["Bash(echo:*)"] },
  });
  const result = await gatehouse.run({ prompt: "go" });
  assert.equal(result.outcome, "completed");
  assert.match(result.reply ?? "", /from-bash/);
  await gatehouse.close();
});

test("tools: [] runs with no tools: the model's call names a tool that does not exist", async () => {
  const gatehouse = createGatehouse({ model: bashCall("echo x"), tools: [] });
  const result = await gatehouse.run({ prompt: "go" });
  assert.match(result.reply ?? "", /no tool named Bash|unknown tool|not available/i);
  await gatehouse.close();
});

test("a handler with matcher Bash reads params.command and blocks; nothing ran", async () => {
  const cwd = await mkdtemp(join(tmpdir(), "gatehouse-lib-"));
  dirs.push(cwd);
  const gatehouse = createGatehouse({
    model: bashCall(`rm -f ${join(cwd, "keep")} && touch ${join(cwd, "ran")}`),
    permissions: { mode: "bypassPermissions", allowBypass: true },
    plugins: [noRm],
  });
  const result = await gatehouse.run({ prompt: "go" });
  assert.match(result.reply ?? "", /rm is not allowed/);
  assert.equal(existsSync(join(cwd, "ran")), false);
  await gatehouse.close();
});

test("without a project folder (config.cwd) or GATEHOUSE_DATABASE_URL the sessions are kept in memory: no .gatehouse/ written", async () => {
  const cwd = await mkdtemp(join(tmpdir(), "gatehouse-lib-"));
  dirs.push(cwd);
  const previous = process.cwd();
  process.chdir(cwd);
  try {
    const env = { ...process.env };
    delete env.GATEHOUSE_DATABASE_URL;
    const gatehouse = createGatehouse({ model: "scripted:echo", env });
    await gatehouse.run({ prompt: "hello" });
    assert.equal(gatehouse.store.kind, "memory");
    await gatehouse.close();
    assert.equal(existsSync(join(cwd, ".gatehouse")), false);
    const project = createGatehouse({ model: "scripted:echo", env, config: { cwd } });
    await project.run({ prompt: "hello" });
    assert.equal(project.store.kind, "sqlite", "a project folder keeps its sessions in .gatehouse/");
    await project.close();
  } finally {
    process.chdir(previous);
  }
});
