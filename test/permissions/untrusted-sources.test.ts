import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { loadPermissions } from "../../src/permissions/sources.js";

describe("loadPermissions: files whose loosening waits for trust", () => {
  const made: string[] = [];
  after(() => Promise.all(made.map((d) => rm(d, { recursive: true, force: true }))));

  test("an untrusted file gives its deny and ask rules and a strict mode, never its allow rules or a loosening mode", async () => {
    const projectDir = await mkdtemp(join(tmpdir(), "gatehouse-untrusted-"));
    made.push(projectDir);
    const file = join(projectDir, ".claude", "settings.json");
    await mkdir(join(projectDir, ".claude"));
    const settings = (defaultMode: string) =>
      writeFile(
        file,
        JSON.stringify({ permissions: { allow: ["Bash"], ask: ["Edit"], deny: ["Read(.env)"], defaultMode } }),
      );
    const load = (untrustedFiles: string[]) =>
      loadPermissions({ projectDir, homeDir: join(projectDir, "home"), managedSettings: null, untrustedFiles });
    const rules = (l: ReturnType<typeof load>) => l.rules.map((r) => `${r.behavior} ${r.rule}`);

    await settings("acceptEdits");
    const untrusted = load([file]);
    assert.deepEqual(rules(untrusted), ["ask Edit", "deny Read(.env)"]);
    assert.equal(untrusted.mode, "default");
    assert.deepEqual(untrusted.diagnostics, []);
    // Control: the same file trusted.
    const trusted = load([]);
    assert.deepEqual(rules(trusted), ["allow Bash", "ask Edit", "deny Read(.env)"]);
    assert.equal(trusted.mode, "acceptEdits");

    await settings("plan");
    assert.equal(load([file]).mode, "plan", "a mode that restricts applies untrusted");
  });
});
