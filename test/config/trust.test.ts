import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { recordTrust, TRUST_ENV, trustStoreFile, workspaceTrust } from "../../src/config/trust.js";

describe("workspace trust records", () => {
  const made: string[] = [];
  after(() => Promise.all(made.map((d) => rm(d, { recursive: true, force: true }))));
  const setup = async (settings: unknown) => {
    const root = await mkdtemp(join(tmpdir(), "gatehouse-trust-"));
    made.push(root);
    const projectDir = join(root, "proj");
    const homeDir = join(root, "home");
    await mkdir(join(projectDir, ".claude"), { recursive: true });
    await writeFile(join(projectDir, ".claude/settings.json"), JSON.stringify(settings));
    return { root, projectDir, homeDir, env: {} as Record<string, string> };
  };

  test("trust is recorded by what the files loosen: the same stays trusted, any change to it (or a new file that loosens) does not", async () => {
    const input = await setup({ permissions: { allow: ["Bash"] } });
    const first = workspaceTrust(input);
    assert.equal(first.trusted, false);
    assert.equal(first.reason, "never");
    recordTrust(first);
    assert.equal(workspaceTrust(input).reason, "recorded");
    await writeFile(
      join(input.projectDir, ".claude/settings.json"),
      JSON.stringify({ permissions: { allow: ["Bash"], deny: ["Read"] }, hooks: {} }),
    );
    assert.equal(workspaceTrust(input).reason, "recorded", "what only tightens may change");
    await writeFile(
      join(input.projectDir, ".claude/settings.json"),
      JSON.stringify({ permissions: { allow: ["Bash "] } }),
    );
    assert.equal(workspaceTrust(input).reason, "changed");
    recordTrust(workspaceTrust(input));
    assert.equal(workspaceTrust(input).trusted, true);
    // A gatehouse.json appearing in the project changes what was trusted too.
    const configFile = join(input.projectDir, "gatehouse.json");
    await writeFile(configFile, JSON.stringify({ plugins: [{ path: "./x.js" }] }));
    assert.equal(workspaceTrust({ ...input, projectConfigFile: configFile }).reason, "changed");
  });

  test("the record is kept per project directory, symlinks resolved, in XDG_CONFIG_HOME when set", async () => {
    const input = await setup({ permissions: { allow: ["Bash"] } });
    const env = { XDG_CONFIG_HOME: join(input.root, "xdg") };
    assert.equal(trustStoreFile(env, input.homeDir), join(input.root, "xdg/gatehouse/trusted-projects.json"));
    recordTrust(workspaceTrust({ ...input, env }));
    const link = join(input.root, "link");
    await symlink(input.projectDir, link);
    assert.equal(workspaceTrust({ ...input, projectDir: link, env }).reason, "recorded");
    assert.equal(workspaceTrust(input).trusted, false, "another config home knows nothing of it");
  });

  test(`${TRUST_ENV}=1 trusts, the home directory is the user's own, and settings that loosen nothing need no trust`, async () => {
    const input = await setup({ permissions: { allow: ["Bash"] } });
    assert.equal(workspaceTrust({ ...input, env: { [TRUST_ENV]: "1" } }).reason, "env");
    assert.equal(workspaceTrust({ ...input, env: { [TRUST_ENV]: "0" } }).trusted, false);
    assert.equal(workspaceTrust({ ...input, homeDir: input.projectDir }).reason, "home");
    const strict = await setup({ permissions: { deny: ["Bash"] } });
    assert.equal(workspaceTrust(strict).reason, "nothing");
  });

  test("a .claude that is a symlink makes settings.local.json the repository's", async () => {
    const input = await setup({});
    const elsewhere = join(input.root, "elsewhere");
    await mkdir(elsewhere);
    await writeFile(join(elsewhere, "settings.local.json"), JSON.stringify({ permissions: { allow: ["Bash"] } }));
    await rm(join(input.projectDir, ".claude"), { recursive: true });
    await symlink(elsewhere, join(input.projectDir, ".claude"));
    const trust = workspaceTrust(input);
    assert.equal(trust.trusted, false);
    assert.deepEqual(
      trust.files.map((f) => [f.name, f.held.map((h) => h.key)]),
      [[".claude/settings.local.json", ["permissions.allow"]]],
    );
  });
});
