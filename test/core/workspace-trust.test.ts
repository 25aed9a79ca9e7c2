import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { untrustedGatehouseConfig, untrustedProjectSettings } from "../../src/core/workspace-trust.js";

describe("untrustedProjectSettings: what a project file keeps before trust", () => {
  test("allow rules, additional directories and a permissive mode are held; deny, ask, a strict mode and hooks stay", () => {
    const hooks = { PreToolUse: [{ hooks: [{ type: "command", command: "guard" }] }] };
    for (const mode of ["acceptEdits", "bypassPermissions"]) {
      const { settings, held } = untrustedProjectSettings({
        permissions: {
          allow: ["Bash"],
          deny: ["Read(.env)"],
          ask: ["Edit"],
          additionalDirectories: ["/"],
          defaultMode: mode,
        },
        hooks,
      });
      assert.deepEqual(settings, { permissions: { deny: ["Read(.env)"], ask: ["Edit"] }, hooks });
      assert.deepEqual(
        held.map((h) => h.key),
        ["permissions.allow", "permissions.additionalDirectories", "permissions.defaultMode"],
      );
    }
    for (const mode of ["default", "plan", "dontAsk"]) {
      const { settings, held } = untrustedProjectSettings({ permissions: { defaultMode: mode } });
      assert.deepEqual(settings, { permissions: { defaultMode: mode } }, `${mode} only restricts`);
      assert.deepEqual(held, []);
    }
  });

  test("the sandbox block keeps only what restricts; every other key, unknown ones too, waits", () => {
    const { settings, held } = untrustedProjectSettings({
      sandbox: {
        enabled: false,
        allowUnsandboxedCommands: true,
        autoAllowBashIfSandboxed: true,
        excludedCommands: ["docker"],
        someFutureKey: 1,
        filesystem: { allowWrite: ["/"], denyRead: ["~/.ssh"], denyWrite: ["/etc"], allowRead: ["~"] },
        network: { allowedDomains: ["evil.example"], deniedDomains: ["x.example"], allowLocalBinding: true },
      },
    });
    assert.deepEqual(settings, {
      sandbox: { filesystem: { denyRead: ["~/.ssh"], denyWrite: ["/etc"] }, network: { deniedDomains: ["x.example"] } },
    });
    assert.deepEqual(
      held.map((h) => h.key),
      [
        "sandbox.enabled",
        "sandbox.allowUnsandboxedCommands",
        "sandbox.autoAllowBashIfSandboxed",
        "sandbox.excludedCommands",
        "sandbox.someFutureKey",
        "sandbox.filesystem.allowWrite",
        "sandbox.filesystem.allowRead",
        "sandbox.network.allowedDomains",
        "sandbox.network.allowLocalBinding",
      ],
    );
    const strict = { sandbox: { enabled: true, allowUnsandboxedCommands: false, autoAllowBashIfSandboxed: false } };
    assert.deepEqual(untrustedProjectSettings(strict), { settings: strict, held: [] });
  });

  test("what is not an object passes as it is, for its loader to report", () => {
    assert.deepEqual(untrustedProjectSettings(undefined), { settings: undefined, held: [] });
    assert.deepEqual(untrustedProjectSettings([1]), { settings: [1], held: [] });
  });
});

describe("untrustedGatehouseConfig", () => {
  test("plugins, MCP servers, both passEnv lists and allowPrivateNetwork are held; the caller's config is untouched", () => {
    const config = {
      model: "scripted:echo",
      plugins: [{ path: "./p.js" }, { package: "gh-plugin" }],
      mcpServers: { db: { command: "db-mcp" } },
      tools: { deny: ["Write"], bash: { passEnv: ["AWS_*"] }, webFetch: { allowPrivateNetwork: true, maxBytes: 9 } },
      commandHooks: { passEnv: ["GITHUB_TOKEN"], onFailure: "block" },
      environment: { deny: ["STRIPE_*"] },
      permissions: { allow: ["Bash"], deny: ["Bash(rm:*)"] },
    };
    const before = structuredClone(config);
    const { settings, held } = untrustedGatehouseConfig(config);
    assert.deepEqual(config, before);
    assert.deepEqual(settings, {
      model: "scripted:echo",
      tools: { deny: ["Write"], bash: {}, webFetch: { maxBytes: 9 } },
      commandHooks: { onFailure: "block" },
      environment: { deny: ["STRIPE_*"] },
      permissions: { deny: ["Bash(rm:*)"] },
    });
    assert.deepEqual(
      held.map(({ key, value }) => ({ key, value })),
      [
        { key: "permissions.allow", value: "Bash" },
        { key: "plugins", value: "./p.js, gh-plugin" },
        { key: "mcpServers", value: "db" },
        { key: "tools.bash.passEnv", value: "AWS_*" },
        { key: "commandHooks.passEnv", value: "GITHUB_TOKEN" },
        { key: "tools.webFetch.allowPrivateNetwork", value: "true" },
      ],
    );
  });

  test("allowPrivateNetwork: false restricts and stays", () => {
    const config = { tools: { webFetch: { allowPrivateNetwork: false } } };
    assert.deepEqual(untrustedGatehouseConfig(config), { settings: config, held: [] });
  });
});
