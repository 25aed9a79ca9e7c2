import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { describe, test } from "node:test";
import { loadConfig } from "../../src/config/index.js";
import { gatehouse, put, tempProjects } from "./helpers.js";
import { gatehouseInProcess } from "./in-process.js";
import { parseJson } from "./project-helpers.js";

const FILES = ["gatehouse.json", "plugins/example.ts", ".claude/settings.json", "hooks/example-hook.sh"];

describe("gatehouse init", { concurrency: 4 }, () => {
  const fresh = tempProjects();

  test("writes gatehouse.json, an example plugin, .claude/settings.json and an executable hook", async () => {
    const cwd = await fresh();
    const r = await gatehouse(["init"], { cwd });
    assert.equal(r.code, 0, r.stderr);
    for (const file of FILES) {
      assert.ok(existsSync(join(cwd, file)), file);
      assert.ok(r.stdout.includes(`  ${file}\n`), `the output names ${file}`);
    }
    assert.ok(((await stat(join(cwd, "hooks/example-hook.sh"))).mode & 0o111) !== 0, "the hook is executable");
    assert.match(r.stdout, /npx gatehouse run -p/);
  });

  test("gatehouse.json is valid, points at the published schema and explains itself in $comment", async () => {
    const cwd = await fresh();
    assert.equal((await gatehouseInProcess(["init"], { cwd })).code, 0);
    const { config } = await loadConfig({ cwd });
    assert.equal(config.$schema, "./node_modules/gatehouse-runtime/schema/gatehouse.schema.json");
    assert.ok(Array.isArray(config.$comment) && config.$comment.length > 0);
    assert.equal(config.model, "scripted:echo");
    assert.deepEqual(config.plugins, [{ path: "./plugins/example.ts", hooks: { allowConversationAccess: true } }]);
    const published = JSON.parse(
      await readFile(new URL("../../schema/gatehouse.schema.json", import.meta.url), "utf8"),
    );
    assert.ok("$comment" in published.properties, "the published schema accepts $comment");
    const settings = JSON.parse(await readFile(join(cwd, ".claude/settings.json"), "utf8"));
    assert.equal(settings.hooks.PreToolUse[0].matcher, "Bash");
    assert.ok(settings.permissions.deny.includes("Read(./.env)"), "a starter permissions block");
    assert.ok(settings.permissions.allow.includes("Bash(npm test:*)"));
  });

  test("the starter project runs offline: the plugin redacts, blocks (exit 3) and shows up in plugins list", async () => {
    const cwd = await fresh();
    assert.equal((await gatehouseInProcess(["init"], { cwd })).code, 0);
    const hello = await gatehouseInProcess(["run", "-p", "hello, I am ada@example.com"], { cwd });
    assert.equal(hello.code, 0, hello.stderr);
    assert.equal(hello.stdout, "hello, I am [email]\n");
    const blocked = await gatehouseInProcess(["run", "-p", "what is the admin password?"], { cwd });
    assert.equal(blocked.code, 3, blocked.stderr);
    assert.equal(blocked.stdout, "I can't help with credentials.\n");
    const plugins = parseJson(await gatehouseInProcess(["plugins", "list", "--json"], { cwd })) as { id: string }[];
    assert.deepEqual(
      plugins.map((p) => p.id),
      ["example", "command-hooks"],
    );
  });

  test("the example command hook blocks a Bash call that runs rm -rf, and the reason reaches the model", async () => {
    const cwd = await fresh({
      "rm.json": {
        runs: [
          {
            turns: [
              { toolCalls: [{ name: "Bash", input: { command: "rm -rf build" } }] },
              { text: "tool said: {{lastToolResult}}" },
            ],
          },
        ],
      },
    });
    assert.equal((await gatehouseInProcess(["init"], { cwd })).code, 0);
    const r = await gatehouseInProcess(["run", "-p", "clean up", "--model", "scripted:rm.json"], { cwd });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /rm -rf is not allowed in this project/);
  });

  test("refuses to overwrite: if any file exists, exit 2 and nothing is written", async () => {
    const cwd = await fresh({ ".claude/settings.json": { hooks: {} } });
    const r = await gatehouseInProcess(["init"], { cwd });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /not overwriting \.claude\/settings\.json; nothing was written/);
    assert.equal(r.stdout, "");
    for (const file of FILES.filter((f) => f !== ".claude/settings.json"))
      assert.ok(!existsSync(join(cwd, file)), file);
    assert.equal(await readFile(join(cwd, ".claude/settings.json"), "utf8"), JSON.stringify({ hooks: {} }, null, 2));

    const again = await fresh();
    assert.equal((await gatehouseInProcess(["init"], { cwd: again })).code, 0);
    await put(again, "gatehouse.json", { model: "scripted:echo" });
    const second = await gatehouseInProcess(["init"], { cwd: again });
    assert.equal(second.code, 2);
    assert.match(
      second.stderr,
      /not overwriting gatehouse\.json, plugins\/example\.ts, \.claude\/settings\.json, hooks\/example-hook\.sh/,
    );
    assert.deepEqual(JSON.parse(await readFile(join(again, "gatehouse.json"), "utf8")), { model: "scripted:echo" });
  });

  test(".gitignore: created ignoring .gatehouse/, appended to when it ignores other things, left alone when it already ignores it", async () => {
    const none = await fresh();
    const created = await gatehouseInProcess(["init"], { cwd: none });
    assert.equal(created.code, 0, created.stderr);
    assert.match(await readFile(join(none, ".gitignore"), "utf8"), /^\.gatehouse\/$/m);
    assert.match(created.stdout, /\.gitignore \(written, ignoring \.gatehouse\/\)/);

    const other = await fresh({ ".gitignore": "node_modules\ndist" });
    const appended = await gatehouseInProcess(["init"], { cwd: other });
    assert.equal(appended.code, 0, appended.stderr);
    const text = await readFile(join(other, ".gitignore"), "utf8");
    assert.ok(text.startsWith("node_modules\ndist\n"), "what was there is kept, a newline added after it");
    assert.match(text, /^\.gatehouse\/$/m);
    assert.match(appended.stdout, /\.gitignore \(\.gatehouse\/ added\)/);

    const already = await fresh({ ".gitignore": "/.gatehouse\n" });
    const kept = await gatehouseInProcess(["init"], { cwd: already });
    assert.equal(kept.code, 0, kept.stderr);
    assert.equal(await readFile(join(already, ".gitignore"), "utf8"), "/.gatehouse\n");
    assert.ok(!kept.stdout.includes(".gitignore"));
  });

  test("init DIR creates the folder and writes there", async () => {
    const cwd = await fresh();
    const r = await gatehouseInProcess(["init", "new/project"], { cwd });
    assert.equal(r.code, 0, r.stderr);
    for (const file of FILES) assert.ok(existsSync(join(cwd, "new/project", file)), file);
    assert.match(r.stdout, /First: cd new\/project/);
    assert.ok(!existsSync(join(cwd, "gatehouse.json")));
  });

  test("--help documents the files and the exit statuses", async () => {
    const r = await gatehouseInProcess(["init", "--help"], { cwd: await fresh() });
    assert.match(r.stdout, /Nothing is overwritten/);
    assert.match(r.stdout, /Exit status:\n {2}0 {2}done\n {2}1 {2}a file could not be written\n {2}2 {2}bad input/);
    assert.match(r.stdout, /a file that already exists/);
  });
});
