// Claude Code plugins (issue 29): `enabledPlugins` with a plugin from a directory marketplace, its
// hooks/hooks.json and .mcp.json, CLAUDE_PLUGIN_ROOT, trust, and what `hooks check` and
// `gatehouse plugins list` say about them.
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { gatehouse, tempProjects } from "./helpers.js";
import { oneCall } from "./real-hooks-helpers.js";

// biome-ignore lint/suspicious/noTemplateCurlyInString: Claude Code's placeholder, substituted by Gatehouse
const ROOT = "${CLAUDE_PLUGIN_ROOT}";

/** A marketplace folder `market/` with one plugin `guard` whose PreToolUse hook refuses Bash lines that say "danger". */
const marketplace = {
  "market/.claude-plugin/marketplace.json": {
    name: "team-tools",
    owner: { name: "Team" },
    plugins: [{ name: "guard", source: "./plugins/guard", version: "1.0.0" }],
  },
  "market/plugins/guard/.claude-plugin/plugin.json": { name: "guard", version: "1.0.0" },
  "market/plugins/guard/hooks/hooks.json": {
    hooks: {
      PreToolUse: [
        {
          matcher: "Bash",
          hooks: [{ type: "command", command: `sh "${ROOT}/guard.sh"` }],
        },
      ],
    },
  },
  // Exit 2 with its own root, as the process saw it in its environment.
  "market/plugins/guard/guard.sh":
    'input=$(cat)\ncase "$input" in *danger*) echo "refused by the guard plugin at $CLAUDE_PLUGIN_ROOT" >&2; exit 2;; esac\nexit 0\n',
  "market/plugins/guard/.mcp.json": { mcpServers: { notes: { command: `${ROOT}/bin/notes` } } },
};

const settings = (enabled: boolean) => ({
  permissions: { allow: ["Bash"] },
  extraKnownMarketplaces: { "team-tools": { source: { source: "directory", path: "./market" } } },
  enabledPlugins: { "guard@team-tools": enabled },
});

describe("Claude Code plugins from a directory marketplace", { concurrency: 2 }, () => {
  const fresh = tempProjects();
  const project = (enabled: boolean, command = "echo danger > ran") =>
    fresh({
      ...marketplace,
      "s.json": oneCall("Bash", { command }),
      "gatehouse.json": { model: "scripted:s.json" },
      ".claude/settings.json": settings(enabled),
    });

  test("an enabled plugin's hooks.json runs: its guard blocks the call, with CLAUDE_PLUGIN_ROOT set to the plugin's folder", async () => {
    const cwd = await project(true);
    const r = await gatehouse(["run", "-p", "go"], { cwd });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /refused by the guard plugin at \S*market\/plugins\/guard/);
    // As Claude Code's, the model's error names the plugin the blocking hook came from.
    assert.match(r.stdout, /plugins\/guard\n\nThis hook comes from the guard@team-tools plugin\./);
    assert.equal(existsSync(join(cwd, "ran")), false);
  });

  test("control: the same plugin disabled in enabledPlugins runs nothing, and the call runs", async () => {
    const cwd = await project(false);
    const r = await gatehouse(["run", "-p", "go"], { cwd });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(readFileSync(join(cwd, "ran"), "utf8"), "danger\n");
  });

  test("hooks check and hooks list name the plugin's handler; plugins list shows source, enabled state, hook and MCP counts", async () => {
    const cwd = await project(true);
    const check = await gatehouse(["hooks", "check"], { cwd });
    assert.equal(check.code, 0, check.stdout + check.stderr);
    assert.match(check.stdout, /1 handler/);
    const list = await gatehouse(["hooks", "list", "--json"], { cwd });
    const [handler] = JSON.parse(list.stdout) as { source: string; plugin?: string; command: string }[];
    assert.equal(handler?.source, "plugin");
    assert.equal(handler?.plugin, "guard@team-tools");
    assert.match(handler?.command ?? "", /market\/plugins\/guard\/guard\.sh/);
    const plugins = await gatehouse(["plugins", "list", "--json"], { cwd });
    const listed = (JSON.parse(plugins.stdout) as Record<string, unknown>[]).find((p) => p.id === "guard@team-tools");
    assert.deepEqual(listed, {
      id: "guard@team-tools",
      kind: "claude-code",
      status: "loaded",
      enabled: true,
      source: "directory market/plugins/guard",
      version: "1.0.0",
      hooks: 1,
      mcpServers: 1,
    });
    const table = await gatehouse(["plugins", "list"], { cwd });
    assert.match(table.stdout, /guard@team-tools\s+loaded\s+1\s+1\s+directory/);
  });

  test("an enabled plugin that cannot be found is an error in hooks check and refuses the run, never 0 handlers", async () => {
    const cwd = await fresh({
      "gatehouse.json": { model: "scripted:echo" },
      ".claude/settings.json": { enabledPlugins: { "missing@nowhere": true } },
    });
    const check = await gatehouse(["hooks", "check"], { cwd });
    assert.notEqual(check.code, 0);
    assert.match(check.stdout + check.stderr, /enabledPlugins\.missing@nowhere.*marketplace "nowhere" is unknown/);
    const run = await gatehouse(["run", "-p", "hi"], { cwd });
    assert.equal(run.code, 2);
    const listed = await gatehouse(["plugins", "list", "--json"], { cwd });
    assert.equal(
      (JSON.parse(listed.stdout) as { id: string; status: string }[]).find((p) => p.id === "missing@nowhere")?.status,
      "failed",
    );
  });

  test("a plugin whose hooks.json is not JSON is an error naming the file", async () => {
    const cwd = await project(true);
    await import("./helpers.js").then(({ put }) => put(cwd, "market/plugins/guard/hooks/hooks.json", "{ nope"));
    const check = await gatehouse(["hooks", "check"], { cwd });
    assert.notEqual(check.code, 0);
    assert.match(check.stdout + check.stderr, /plugins\/guard\/hooks\/hooks\.json:1:\d+: not valid JSON/);
  });

  test("a project not trusted enables no plugin: a warning says it waits for trust, and gatehouse trust lists enabledPlugins", async () => {
    const cwd = await project(true);
    const untrusted = { GATEHOUSE_TRUST_WORKSPACE: "", HOME: await fresh() };
    const check = await gatehouse(["hooks", "check"], { cwd, env: untrusted });
    assert.match(check.stdout + check.stderr, /enabledPlugins\.guard@team-tools.*waits for workspace trust/);
    assert.match(check.stdout, /0 handlers/);
    const trust = await gatehouse(["trust"], { cwd, env: untrusted });
    assert.match(trust.stdout + trust.stderr, /enabledPlugins/);
  });
});
