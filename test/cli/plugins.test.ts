import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { before, describe, test } from "node:test";
import { gatehouse, tempProjects } from "./helpers.js";
import { gatehouseInProcess } from "./in-process.js";
import { ESC, gatehouseOnTty, parseJson, uncolored } from "./project-helpers.js";

/** Registers a ★ hook without the grant (refused), two tool hooks, and an unknown hook. */
const NOSY = `export default {
  id: "nosy",
  name: "Nosy",
  version: "1.2.0",
  setup(api) {
    api.on("before_agent_run", () => ({ outcome: "pass" }));
    api.on("after_tool_call", () => undefined, { priority: 5, matcher: "Bash", timeoutMs: 2000 });
    api.on("before_tool_call", () => undefined, { id: "guard" });
    api.on("no_such_hook", () => undefined);
  },
};
`;

/** Granted conversation access; two handlers on one hook with different priorities. */
const REDACT = `export default {
  id: "redact",
  setup(api) {
    api.on("before_response_emit", () => undefined, { priority: -1, id: "late" });
    api.on("before_response_emit", () => undefined, { priority: 10, id: "early" });
    api.on("before_agent_run", () => ({ outcome: "pass" }));
  },
};
`;

interface Registration {
  hook: string;
  priority: number;
  timeoutMs: number;
  failure: string;
  matcher: boolean;
  id?: string;
}
interface PluginReport {
  id: string;
  source: string;
  status: string;
  trusted: boolean;
  conversationAccess: boolean;
  registrations: Registration[];
  refused: { hook: string; message: string }[];
  diagnostics: { level: string; code: string; hook?: string; message: string }[];
}

describe("gatehouse plugins", { concurrency: 4 }, () => {
  const fresh = tempProjects();

  let cwd = "";
  before(async () => {
    cwd = await fresh({
      "plugins/nosy.mjs": NOSY,
      "plugins/redact.mjs": REDACT,
      "gatehouse.json": {
        plugins: [
          { path: "plugins/nosy.mjs" },
          {
            path: "plugins/redact.mjs",
            hooks: { allowConversationAccess: true, timeouts: { before_agent_run: 1234 } },
          },
        ],
      },
    });
  });

  test("list shows each plugin's status, hooks, refusals, conversation access and source", async () => {
    const r = await gatehouse(["plugins", "list"], { cwd });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, "", "problems are reported by the command, not logged");
    const lines = r.stdout.trimEnd().split("\n");
    assert.match(lines[0] ?? "", /^ID\s+STATUS\s+HOOKS\s+REFUSED\s+CONVERSATION\s+SOURCE$/);
    assert.match(lines[1] ?? "", /^nosy\s+loaded\s+2\s+1\s+no\s+plugins\/nosy\.mjs$/);
    assert.match(lines[2] ?? "", /^redact\s+loaded\s+3\s+0\s+granted\s+plugins\/redact\.mjs$/);
    assert.equal(lines.length, 3);
    assert.ok(!existsSync(join(cwd, ".gatehouse")), "nothing is written");
  });

  test("list --json is an array of plugins with counts", async () => {
    const plugins = parseJson(await gatehouseInProcess(["plugins", "list", "--json"], { cwd })) as Record<
      string,
      unknown
    >[];
    assert.deepEqual(plugins[0], {
      id: "nosy",
      name: "Nosy",
      version: "1.2.0",
      source: "plugins/nosy.mjs",
      status: "loaded",
      trusted: false,
      conversationAccess: false,
      hooks: 2,
      refused: 1,
      problems: 1,
    });
    assert.equal(plugins[1]?.id, "redact");
  });

  test("inspect lists registrations by hook in run order, with priority, timeout and failure policy", async () => {
    const r = await gatehouseInProcess(["plugins", "inspect", "redact"], { cwd });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^redact {2}loaded$/m);
    assert.match(r.stdout, /^ {2}conversation {2}granted$/m);
    const rows = r.stdout.split("\n").filter((l) => /^ {2}(before|after)_/.test(l));
    assert.equal(rows.length, 3);
    assert.match(rows[0] ?? "", /^ {2}before_agent_run\s+priority 0\s+timeout 1\.2s\s+fails closed$/);
    assert.match(rows[1] ?? "", /^ {2}before_response_emit\s+priority 10\s+timeout 15s\s+fails closed\s+id early$/);
    assert.match(rows[2] ?? "", /^ {2}before_response_emit\s+priority -1\s+timeout 15s\s+fails closed\s+id late$/);
  });

  test("inspect shows refused registrations and other problems with why", async () => {
    const r = await gatehouseInProcess(["plugins", "inspect", "nosy"], { cwd });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^nosy \(Nosy 1\.2\.0\) {2}loaded$/m);
    assert.match(r.stdout, /^ {2}before_tool_call\s+priority 0\s+timeout 15s\s+fails closed\s+id guard$/m);
    assert.match(r.stdout, /^ {2}after_tool_call\s+priority 5\s+timeout 2s\s+fails closed\s+matcher$/m);
    assert.match(
      r.stdout,
      /^ {2}refused before_agent_run: "before_agent_run" reads the conversation; grant it with hooks\.allowConversationAccess: true/m,
    );
    assert.match(r.stdout, /^ {2}error no_such_hook: unknown hook "no_such_hook" \(unknown-hook\)$/m);
  });

  test("inspect --json has the registrations, refusals and diagnostics of each plugin", async () => {
    const report = parseJson(await gatehouseInProcess(["plugins", "inspect", "--json"], { cwd })) as {
      plugins: PluginReport[];
      diagnostics: string[];
    };
    assert.deepEqual(
      report.plugins.map((p) => p.id),
      ["nosy", "redact"],
    );
    const nosy = report.plugins[0] as PluginReport;
    assert.deepEqual(nosy.registrations, [
      { hook: "before_tool_call", id: "guard", priority: 0, timeoutMs: 15000, failure: "closed", matcher: false },
      { hook: "after_tool_call", priority: 5, timeoutMs: 2000, failure: "closed", matcher: true },
    ]);
    assert.deepEqual(
      nosy.refused.map((x) => x.hook),
      ["before_agent_run"],
    );
    assert.deepEqual(nosy.diagnostics, [
      { level: "error", hook: "no_such_hook", code: "unknown-hook", message: 'unknown hook "no_such_hook"' },
    ]);
    assert.deepEqual(report.diagnostics, []);
    const one = parseJson(await gatehouseInProcess(["plugins", "inspect", "redact", "--json"], { cwd })) as {
      plugins: PluginReport[];
    };
    assert.deepEqual(
      one.plugins.map((p) => p.id),
      ["redact"],
    );
  });

  test("inspect of an unknown id exits 1 naming the configured ones", async () => {
    const r = await gatehouseInProcess(["plugins", "inspect", "ghost"], { cwd });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /no plugin "ghost" \(configured: nosy, redact\)/);
    assert.equal(r.stdout, "");
  });

  test("a plugin that cannot be loaded is shown as failed with why, and the command exits 2", async () => {
    const dir = await fresh({
      "ok.mjs": REDACT,
      "gatehouse.json": { plugins: [{ path: "missing.mjs" }, { path: "ok.mjs" }] },
    });
    const list = await gatehouseInProcess(["plugins", "list"], { cwd: dir });
    assert.equal(list.code, 2);
    assert.match(list.stdout, /^missing\.mjs\s+failed\s+0\s+0\s+no\s+missing\.mjs$/m);
    assert.match(list.stdout, /^redact\s+loaded/m);
    const inspect = await gatehouseInProcess(["plugins", "inspect", "--json"], { cwd: dir });
    assert.equal(inspect.code, 2);
    const failed = (parseJson(inspect) as { plugins: PluginReport[] }).plugins[0] as PluginReport;
    assert.equal(failed.status, "failed");
    assert.equal(failed.diagnostics[0]?.code, "load-failed");
    assert.match(failed.diagnostics[0]?.message ?? "", /cannot load .*missing\.mjs/);
  });

  test("command hooks appear as the command-hooks plugin; no plugins at all says so", async () => {
    const dir = await fresh({
      ".claude/settings.json": {
        hooks: { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "true" }] }] },
      },
    });
    const r = await gatehouseInProcess(["plugins", "list", "--json"], { cwd: dir });
    assert.equal(r.code, 0, r.stderr);
    const [commandHooks] = parseJson(r) as { id: string; source: string; trusted: boolean }[];
    assert.equal(commandHooks?.id, "command-hooks");
    assert.match(commandHooks?.source ?? "", /^command hooks/);
    const none = await fresh();
    const empty = await gatehouseInProcess(["plugins", "list"], { cwd: none });
    assert.equal(empty.code, 0);
    assert.equal(empty.stdout, "no plugins configured\n");
    assert.deepEqual(parseJson(await gatehouseInProcess(["plugins", "inspect", "--json"], { cwd: none })), {
      plugins: [],
      diagnostics: [],
    });
  });

  test("--config selects the file whose plugins are loaded", async () => {
    const dir = await fresh({ "conf/p.mjs": REDACT, "conf/gatehouse.json": { plugins: [{ path: "p.mjs" }] } });
    const r = await gatehouseInProcess(["plugins", "list", "--json", "--config", "conf/gatehouse.json"], { cwd: dir });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(
      (parseJson(r) as { id: string; source: string }[]).map((p) => [p.id, p.source]),
      [["redact", "conf/p.mjs"]],
    );
  });

  test("colored on a terminal, never with NO_COLOR; --help documents the exit statuses", async () => {
    for (const args of [
      ["plugins", "list"],
      ["plugins", "inspect"],
    ]) {
      const colored = await gatehouseOnTty(args, { cwd });
      assert.ok(colored.stdout.includes(ESC), args.join(" "));
      const plain = await gatehouseOnTty(args, { cwd, env: { NO_COLOR: "1" } });
      assert.ok(!plain.stdout.includes(ESC), args.join(" "));
      assert.equal(plain.stdout, uncolored(colored.stdout));
      const help = await gatehouseInProcess([...args, "--help"], { cwd });
      assert.match(help.stdout, /Exit status:\n {2}0 {2}done\n/);
      assert.match(help.stdout, /a configured plugin that cannot be loaded/);
    }
  });
});
