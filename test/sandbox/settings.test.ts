import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { before, describe, it } from "node:test";
import { PermissionPolicy } from "../../src/permissions/policy.js";
import { type PermissionRule, parseRule } from "../../src/permissions/rules.js";
import { loadShellParser } from "../../src/permissions/shell-parser.js";
import { loadPermissions } from "../../src/permissions/sources.js";
import { createBashSandbox } from "../../src/sandbox/bash.js";
import { decideHost, ipLiteral, isSpecialAddress, rulePath, sandboxPolicy } from "../../src/sandbox/policy.js";

// Bash lines are read by the shell parser, which loads once before any is decided.
before(() => loadShellParser());

import { autoAllowsBash, DEFAULT_SANDBOX_SETTINGS } from "../../src/sandbox/settings.js";

function project(t: { after(fn: () => void): void }, files: Record<string, unknown>) {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "gatehouse-sandbox-settings-")));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const home = join(root, "home");
  const dir = join(root, "project");
  for (const [rel, content] of Object.entries(files)) {
    const file = join(root, rel);
    mkdirSync(join(file, ".."), { recursive: true });
    writeFileSync(file, typeof content === "string" ? content : JSON.stringify(content, null, 2));
  }
  mkdirSync(home, { recursive: true });
  mkdirSync(dir, { recursive: true });
  return { home, dir, root };
}

const load = (p: { home: string; dir: string }, managed: string | null = null) =>
  loadPermissions({ projectDir: p.dir, homeDir: p.home, managedSettings: managed, env: {} });

const rule = (
  behavior: PermissionRule["behavior"],
  text: string,
  baseDir: string,
  source = "project",
): PermissionRule => ({
  behavior,
  rule: text,
  parsed: parseRule(text, behavior) as PermissionRule["parsed"],
  id: `${source}.${behavior}.${text}`,
  source,
  baseDir,
});

describe("the sandbox settings block", () => {
  it("merges every settings file: booleans from the highest that sets them, lists joined, paths resolved as Claude Code does", (t) => {
    const p = project(t, {
      "home/.claude/settings.json": {
        sandbox: {
          enabled: false,
          filesystem: { allowWrite: ["~/.kube", "cache"] },
          network: { allowedDomains: ["github.com"] },
        },
      },
      "project/.claude/settings.json": {
        sandbox: { enabled: true, excludedCommands: ["docker *"], filesystem: { allowWrite: ["./out", "/tmp/build"] } },
      },
      "project/.claude/settings.local.json": { sandbox: { network: { allowedDomains: ["npmjs.org"] } } },
    });
    const { sandbox, diagnostics } = load(p);
    assert.deepEqual(diagnostics, []);
    assert.equal(sandbox.enabled, true);
    assert.equal(sandbox.enabledFrom, join(p.dir, ".claude", "settings.json"));
    assert.deepEqual(sandbox.filesystem.allowWrite, [
      join(p.home, ".kube"),
      join(p.home, ".claude", "cache"),
      join(p.dir, "out"),
      "/tmp/build",
    ]);
    assert.deepEqual(sandbox.network.allowedDomains, ["github.com", "npmjs.org"]);
    assert.deepEqual(sandbox.excludedCommands, ["docker *"]);
  });

  it("reports an unknown key and a wrong type as errors naming the file, the field and its line", (t) => {
    const p = project(t, {
      "project/.claude/settings.json": '{\n  "sandbox": {\n    "enabled": "yes",\n    "credentials": {}\n  }\n}\n',
    });
    const { diagnostics, sandbox } = load(p);
    const file = join(p.dir, ".claude", "settings.json");
    assert.deepEqual(
      diagnostics.map((d) => [d.level, d.file, d.path, d.line]),
      [
        ["error", file, "sandbox.enabled", 3],
        ["error", file, "sandbox.credentials", 4],
      ],
    );
    assert.equal(sandbox.enabled, undefined, "a file with a problem contributes nothing");
  });

  it("refuses managed-only keys outside managed settings, and honours them in managed settings", (t) => {
    const p = project(t, {
      "project/.claude/settings.json": { sandbox: { network: { allowManagedDomainsOnly: true } } },
      "managed.json": {
        sandbox: { network: { allowManagedDomainsOnly: true, allowedDomains: ["corp.example"] } },
      },
      "home/.claude/settings.json": { sandbox: { network: { allowedDomains: ["evil.example"] } } },
    });
    const { diagnostics, sandbox } = load(p, join(p.root, "managed.json"));
    assert.deepEqual(
      diagnostics.map((d) => [d.path, d.message]),
      [["sandbox.network.allowManagedDomainsOnly", "may be set in managed settings only"]],
    );
    assert.deepEqual(sandbox.network.allowedDomains, ["corp.example"]);
    assert.equal(sandbox.network.allowManagedDomainsOnly, true);
  });
});

describe("the sandbox policy", () => {
  it("makes Read deny rules unreadable, Edit allow rules writable, and credentials unreadable by default", () => {
    const policy = sandboxPolicy(
      DEFAULT_SANDBOX_SETTINGS,
      [
        rule("deny", "Read(.env)", "/p"),
        rule("deny", "Read(//etc/shadow)", "/p"),
        rule("allow", "Edit(~/notes/**)", "/p"),
        rule("deny", "Edit(./locked)", "/p"),
        rule("allow", "WebFetch(domain:docs.example.com)", "/p"),
        rule("deny", "WebFetch(domain:bad.example)", "/p"),
      ],
      { projectDir: "/p", homeDir: "/h" },
    );
    assert.ok(policy.filesystem.denyRead.includes("/p/**/.env"));
    assert.ok(policy.filesystem.denyRead.includes("/etc/shadow"));
    for (const path of ["/h/.ssh", "/h/.aws", "/h/.config/gcloud", "/p/.gatehouse"])
      assert.ok(policy.filesystem.denyRead.includes(path), path);
    assert.deepEqual(policy.filesystem.allowWrite, ["/p", "/h/notes"]);
    assert.ok(
      policy.filesystem.denyWrite.includes("/p/**/locked"),
      "a bare name is at any depth, as the rules read it",
    );
    assert.deepEqual(policy.network.allowedDomains, ["docs.example.com"]);
    assert.deepEqual(policy.network.deniedDomains, ["bad.example"]);
  });

  it("spells rule paths as Claude Code's rules mean them", () => {
    assert.deepEqual(rulePath("//abs/x/**", "/p", "/h"), { path: "/abs/x", glob: false });
    assert.deepEqual(rulePath("/src/x", "/p", "/h"), { path: "/p/src/x", glob: false });
    assert.deepEqual(rulePath("*.pem", "/p", "/h"), { path: "/p/**/*.pem", glob: true });
  });

  it("decides hosts with one host-name spelling: case, trailing dot and subdomains", () => {
    const net = {
      ...sandboxPolicy(DEFAULT_SANDBOX_SETTINGS, [], { projectDir: "/p", homeDir: "/h" }).network,
      allowedDomains: ["GitHub.com"],
      deniedDomains: ["gist.github.com"],
    };
    assert.equal(decideHost(net, "api.github.com.").verdict, "allow");
    assert.equal(decideHost(net, "GIST.github.com").verdict, "deny");
    assert.equal(decideHost(net, "example.org").verdict, "ask");
    assert.equal(decideHost({ ...net, askForOthers: false }, "example.org").verdict, "deny");
  });

  it("refuses loopback, private, link-local and metadata addresses in every spelling unless a setting names them", () => {
    const net = sandboxPolicy(DEFAULT_SANDBOX_SETTINGS, [], { projectDir: "/p", homeDir: "/h" }).network;
    for (const host of [
      "127.0.0.1",
      "2130706433",
      "0x7f.1",
      "127.1",
      "[::ffff:127.0.0.1]",
      "[::ffff:7f00:1]",
      "[::1]",
      "10.1.2.3",
      "172.16.0.1",
      "192.168.1.1",
      "169.254.169.254",
      "[fd00:ec2::254]",
      "[64:ff9b::a9fe:a9fe]",
    ])
      assert.equal(decideHost(net, host).verdict, "deny", host);
    assert.equal(decideHost(net, "93.184.215.14").verdict, "ask");
    assert.equal(decideHost({ ...net, allowedDomains: ["127.0.0.1"] }, "127.1").verdict, "allow");
    assert.equal(ipLiteral("example.com"), undefined);
    assert.equal(isSpecialAddress("8.8.8.8"), false);
  });
});

describe("auto-allow of sandboxed Bash calls", () => {
  it("follows autoAllowBashIfSandboxed; by default only when a file enabled the sandbox, as in Claude Code", () => {
    assert.equal(autoAllowsBash(DEFAULT_SANDBOX_SETTINGS), false);
    assert.equal(autoAllowsBash({ ...DEFAULT_SANDBOX_SETTINGS, enabled: true }), true);
    assert.equal(
      autoAllowsBash({ ...DEFAULT_SANDBOX_SETTINGS, enabled: true, autoAllowBashIfSandboxed: false }),
      false,
    );
  });

  it("lets a sandboxed Bash call run without asking, but not an excluded command, a content ask rule or a deny rule", () => {
    const sandbox = createBashSandbox({
      projectDir: "/p",
      homeDir: "/h",
      settings: { ...DEFAULT_SANDBOX_SETTINGS, enabled: true, excludedCommands: ["docker *"] },
    });
    const sandboxedBash = (input: unknown) => sandbox.active && sandbox.runsSandboxed(input);
    const policy = new PermissionPolicy({
      mode: "default",
      cwd: "/p",
      rules: [rule("ask", "Bash", "/p"), rule("ask", "Bash(git push:*)", "/p"), rule("deny", "Bash(rm -rf:*)", "/p")],
      sandboxedBash,
    });
    const decide = (command: string) => policy.decide("Bash", { command }, undefined).behavior;
    const expected = sandbox.active ? "allow" : "ask";
    assert.equal(decide("ls -la"), expected);
    assert.equal(decide("docker ps"), "ask");
    assert.equal(decide("git push origin main"), "ask");
    assert.equal(decide("rm -rf /"), "deny");
    assert.equal(policy.decide("Bash", { command: "ls", dangerouslyDisableSandbox: true }, undefined).behavior, "ask");
  });
});

describe("excludedCommands", () => {
  it("runs a line unsandboxed only when every command of it is excluded", () => {
    const sandbox = createBashSandbox({
      projectDir: "/p",
      homeDir: "/h",
      settings: { ...DEFAULT_SANDBOX_SETTINGS, enabled: true, excludedCommands: ["docker:*"] },
    });
    if (!sandbox.active) return;
    assert.equal(sandbox.runsSandboxed({ command: "docker ps" }), false);
    assert.equal(sandbox.runsSandboxed({ command: "docker ps; cat ~/.ssh/id_rsa" }), true);
    assert.equal(sandbox.runsSandboxed({ command: "cat ~/.ssh/id_rsa" }), true);
  });
});
