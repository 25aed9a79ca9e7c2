import assert from "node:assert/strict";
import { before, describe, test } from "node:test";
import { loadShellParser } from "../../src/permissions/index.js";
import type { SandboxPolicy } from "../../src/sandbox/policy.js";
import { readDenied, readsDenied, writeRefused } from "../../src/sandbox/refusals.js";

const policy: SandboxPolicy = {
  filesystem: {
    allowWrite: ["/work/project"],
    denyWrite: ["/work/project/.gatehouse"],
    denyRead: ["/home/u/.ssh", "/work/project/.env", "/work/project/**/secrets.json"],
    allowRead: ["/home/u/.ssh/known_hosts"],
  },
  network: {
    allowedDomains: [],
    deniedDomains: [],
    allowUnixSockets: [],
    allowAllUnixSockets: false,
    allowLocalBinding: false,
    askForOthers: true,
  },
};

describe("what counts as a sandbox refusal of a path (the audit's sandbox:filesystem)", () => {
  before(() => loadShellParser());

  test("a write the violation monitor saw is refused outside the writable folders or inside a denied one, and not inside the project, the temp folder or /dev", () => {
    const refused = (line: string) => writeRefused(policy, line, "/tmp/claude");
    assert.equal(refused("deny openat /work/outside.txt"), true);
    assert.equal(refused("deny openat /work/project/.gatehouse/gatehouse.db"), true);
    assert.equal(refused("deny openat /work/project/../escape.txt"), true);
    assert.equal(refused("deny openat /work/project/src/a.ts"), false);
    assert.equal(refused("deny openat /tmp/claude/scratch"), false);
    assert.equal(refused("deny openat /dev/null"), false);
    // The proxy's lines are the network's, and a line without an absolute path is not a path's.
    assert.equal(refused("deny network-outbound example.com:443 (no setting names the host)"), false);
    assert.equal(refused("deny openat relative.txt"), false);
  });

  test("a line naming a Read-denied file (directly, under a denied folder, or by a glob's name) is a refused read; allowRead, other files and flags are not", () => {
    const reads = (command: string) => readsDenied(command, "/work/project", policy);
    assert.equal(reads("cat .env"), true);
    assert.equal(reads("echo hi && head -n 1 ./.env"), true);
    assert.equal(reads("cat ~/.ssh/id_rsa"), false, "~ is this process's home, not the policy's /home/u");
    assert.equal(reads("cat /home/u/.ssh/id_rsa"), true);
    assert.equal(reads("grep key config/deep/secrets.json"), true);
    assert.equal(reads("cat /home/u/.ssh/known_hosts"), false);
    assert.equal(reads("cat README.md"), false);
    assert.equal(reads("ls -la"), false);
  });

  test("overlapping read rules: the more specific wins, so a wide allowRead does not re-open a denied file, folder or glob inside it", () => {
    const fs = (denyRead: string[], allowRead: string[]) => ({ ...policy.filesystem, denyRead, allowRead });
    // Claude Code's three examples (sandboxing.md), and the credential files under a wide allow.
    assert.equal(readDenied("/home/u/projects/a.ts", fs(["/home/u"], ["/home/u/projects"])), false);
    assert.equal(readDenied("/home/u/notes.txt", fs(["/home/u"], ["/home/u/projects"])), true);
    assert.equal(readDenied("/home/u/.env", fs(["/home/u/.env"], ["/home/u"])), true);
    assert.equal(readDenied("/home/u/a/b/.env", fs(["/home/u/**/.env"], ["/home/u"])), true);
    assert.equal(readDenied("/home/u/a/b/c.ts", fs(["/home/u/**/.env"], ["/home/u"])), false);
    assert.equal(readDenied("/home/u/.ssh/id_rsa", fs(["/home/u/.ssh"], ["/"])), true);
    // An allow naming the denied file itself, or a file inside the denied folder, re-opens it.
    assert.equal(readDenied("/home/u/.env", fs(["/home/u/.env"], ["/home/u/.env"])), false);
    assert.equal(readDenied("/home/u/.ssh/known_hosts", fs(["/home/u/.ssh"], ["/home/u/.ssh/known_hosts"])), false);
  });
});
