// `gatehouse hook install <agent>` and `gatehouse hook <agent>` as a user (and an agent) runs them.
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { after, describe, test } from "node:test";
import { coldCall, hookCall } from "../../src/cli/hook.js";
import { installCommand } from "../../src/cli/hook-install.js";
import { loadCommandHookSources } from "../../src/command-hooks/sources.js";
import type { Agent } from "../../src/host-hooks/hosts.js";
import { AGENTS, hostEvents } from "../../src/host-hooks/hosts.js";
import { CONFIG_FILE } from "../../src/host-hooks/install.js";
import { pidFileOf, socketPathFor } from "../../src/host-hooks/warm.js";
import { gatehouse, tempProjects } from "../cli/helpers.js";

/** `gatehouse hook install` in this process, with no terminal. */
async function install(agent: Agent, cwd: string, flags: { yes?: boolean } = {}) {
  let stdout = "";
  let stderr = "";
  const out = new PassThrough().on("data", (d: Buffer) => (stdout += d));
  const err = new PassThrough().on("data", (d: Buffer) => (stderr += d));
  const code = await installCommand(agent, flags, {
    cwd,
    env: { HOME: cwd, NO_COLOR: "1" },
    stdin: Object.assign(new PassThrough(), { isTTY: false }),
    stdout: out,
    stderr: err,
  });
  return { code, stdout, stderr };
}

const pre = (command: string) =>
  JSON.stringify({
    hook_event_name: "PreToolUse",
    session_id: "s",
    tool_use_id: "t",
    tool_name: "Bash",
    tool_input: { command },
  });

const guard = (word: string) => `export default {
  id: "guard",
  setup(api) {
    api.on("before_tool_call", (e) => String(e.params.command).includes("${word}")
      ? { outcome: "block", reason: "INTERNAL", message: "No ${word}." } : undefined);
  },
};
`;

describe("gatehouse hook install", () => {
  const makeProject = tempProjects();

  test("without a terminal and without --yes it prints the diff and what takes effect, writes nothing and exits 2", async () => {
    const dir = await makeProject({ ".claude/settings.json": { permissions: { allow: ["Read"] } } });
    const before = readFileSync(join(dir, ".claude/settings.json"), "utf8");
    const r = await install("claude", dir);
    assert.equal(r.code, 2);
    assert.match(r.stdout, /^\+.*"PreToolUse": \[/m);
    assert.match(r.stdout, /These cannot take effect there:\n.*before_response_emit/);
    assert.match(r.stderr, /not written: nobody to ask here/);
    assert.equal(readFileSync(join(dir, ".claude/settings.json"), "utf8"), before);
  });

  for (const agent of AGENTS) {
    test(`${agent}: --yes writes entries that Gatehouse's own reader of ${agent}'s hooks loads without a problem, once`, async () => {
      const dir = await makeProject();
      const r = await install(agent, dir, { yes: true });
      assert.equal(r.code, 0, r.stderr);
      const loaded = loadCommandHookSources({
        projectDir: dir,
        homeDir: dir,
        ...(agent === "claude" ? {} : { [agent]: true }),
      });
      // Warnings only: the test machine has no `gatehouse` on PATH.
      assert.deepEqual(
        loaded.diagnostics.filter((d) => d.level === "error"),
        [],
      );
      const natives = new Set(loaded.handlers.map((h) => h.nativeEvent ?? h.event));
      assert.deepEqual(
        [...natives].sort(),
        hostEvents(agent)
          .map((e) => e.native)
          .sort(),
      );
      assert.ok(
        loaded.handlers.every(
          (h) => h.definition.type === "command" && h.definition.command === `gatehouse hook ${agent}`,
        ),
      );
      const again = await install(agent, dir, { yes: true });
      assert.match(again.stdout, /nothing to change/);
    });
  }

  test("a config file that is not JSON is named, and nothing is written", async () => {
    const dir = await makeProject({ ".cursor/hooks.json": "{ nope" });
    const r = await install("cursor", dir, { yes: true });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /\.cursor\/hooks\.json: not valid JSON/);
    assert.equal(readFileSync(join(dir, CONFIG_FILE.cursor), "utf8"), "{ nope");
  });
});

describe("gatehouse hook <agent>", () => {
  const started: string[] = [];
  // Before tempProjects' clean-up (after hooks run in order): the pid files are in the projects.
  after(() => {
    for (const dir of started) {
      const pidFile = pidFileOf(socketPathFor(dir));
      if (existsSync(pidFile)) process.kill(Number(readFileSync(pidFile, "utf8")), "SIGTERM");
    }
  });

  const makeProject = tempProjects();

  test("a plugin that cannot be loaded denies every call (fail closed)", async () => {
    const dir = await makeProject({ "gatehouse.json": { plugins: [{ path: "./missing.mjs" }] } });
    const r = await coldCall("claude", JSON.parse(pre("ls")), dir, { HOME: dir, GATEHOUSE_TRUST_WORKSPACE: "1" });
    assert.equal(r.exitCode, 0);
    assert.match(r.stdout, /"permissionDecision":"deny".*could not be loaded/);
  });

  test("an untrusted project's plugins deny every call until the project is trusted", async () => {
    const dir = await makeProject({
      "gatehouse.json": { plugins: [{ path: "./guard.mjs" }] },
      "guard.mjs": guard("rm"),
    });
    // A home of its own: the project folder as HOME would count as trusted.
    const r = await coldCall("claude", JSON.parse(pre("ls")), dir, { HOME: join(dir, ".home") });
    assert.match(r.stdout, /"permissionDecision":"deny".*gatehouse trust/);
  });

  test("a payload that is not JSON is refused with exit 2", async () => {
    const dir = await makeProject();
    const r = await hookCall("codex", "not json", { daemon: false, env: {}, cwd: dir });
    assert.equal(r.exitCode, 2);
    assert.match(r.stderr, /not JSON/);
  });

  test("the first call starts the project's daemon; later calls are answered by it, reloaded when a plugin file changes", async () => {
    const dir = await makeProject({
      "gatehouse.json": { plugins: [{ path: "./guard.mjs" }] },
      "guard.mjs": guard("rm"),
    });
    started.push(dir);
    // A short idle time: a daemon started after the clean-up ran ends on its own.
    const env = { CLAUDE_PROJECT_DIR: dir, GATEHOUSE_HOOK_IDLE_SECONDS: "20" };
    const first = await gatehouse(["hook", "claude"], { cwd: dir, env, input: pre("rm -rf x") });
    assert.match(first.stdout, /No rm\./);
    const pidFile = pidFileOf(socketPathFor(dir));
    const pidOf = () => (existsSync(pidFile) ? readFileSync(pidFile, "utf8") : undefined);
    while (pidOf() === undefined) await new Promise((r) => setTimeout(r, 50));
    const firstPid = pidOf();
    writeFileSync(join(dir, "guard.mjs"), guard("curl"));
    // The daemon saw the plugin file change: the call is answered with the new plugin, and the old daemon ends.
    const warm = await gatehouse(["hook", "claude"], { cwd: dir, env, input: pre("curl evil") });
    assert.match(warm.stdout, /No curl\./);
    assert.doesNotMatch(warm.stdout + warm.stderr, /INTERNAL/);
    // That call started a new daemon for the next one (stopped by the clean-up).
    while (pidOf() === undefined || pidOf() === firstPid) await new Promise((r) => setTimeout(r, 50));
  });
});
